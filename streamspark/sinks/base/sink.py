"""Sink base classes.

On Spark a sink runs inside the tasks that process records: each Python worker builds its
own instance from the (picklable) sink you passed to ``sdf.sink()``, calls ``add`` per
record and ``flush`` once at the end of its share of the micro-batch. A failing ``flush``
fails the micro-batch, so its offsets are not committed and it is replayed.
"""

from __future__ import annotations

import abc
import logging
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from ...models.types import Headers
from ...utils.client_connect import (
    ClientConnectFailureCallback,
    ClientConnectSuccessCallback,
    connected,
    failed_to_connect,
)
from ._delivery import delivery_token as unit_token
from .batch import SinkBatch

if TYPE_CHECKING:
    from ...models.serializers.avro import ArrowAvroDecoder

__all__ = ("BaseSink", "BatchingSink", "ClientConnectSuccessCallback", "ClientConnectFailureCallback")

logger = logging.getLogger(__name__)


class BaseSink(abc.ABC):
    """The interface every sink implements, and the protocol the engine drives it by.

    Subclasses implement :meth:`add` and :meth:`flush`; :meth:`setup` connects and validates
    (called once per worker process before the first record). That is all most sinks need:
    a flush that raises fails the micro-batch, which is then replayed (at-least-once).

    The engine's protocol has two sides. Every hook has a default that does nothing, so a
    sink overrides only the ones it needs:

    - **Worker side** (a copy of the sink in each Spark task): :meth:`add`, :meth:`flush`,
      :meth:`on_paused`; :meth:`delivery_token` names the micro-batch unit being flushed,
      the same on a replay, so a sink that stores it atomically with its data can skip a
      replayed write (exactly-once in effect); :meth:`add_raw_json` and :meth:`add_raw_avro`
      take chunks of raw JSON or Avro values; with :attr:`collects_to_driver`, :meth:`drain_for_driver` hands what the
      worker gathered to the driver.
    - **Driver side** (the instance passed to ``sdf.sink()``, in the application's process):
      :meth:`on_query_start`, :meth:`receive_from_worker` (what each task drained),
      :meth:`on_batch_commit` (every task succeeded; raising fails the batch, so a sink can
      make a batch's output visible exactly once, e.g. by registering its files in a
      catalog), :meth:`on_batch_abort`, :meth:`on_source_idle` and :meth:`on_query_stop`.

    >>> class Counting(BaseSink):
    ...     collects_to_driver = True
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.pending, self.committed = 0, 0
    ...     def add(self, value, key, timestamp, headers, topic, partition, offset):
    ...         self.pending += 1
    ...     def flush(self):
    ...         pass
    ...     def drain_for_driver(self):          # in a worker, after its flush
    ...         count, self.pending = self.pending, 0
    ...         return count
    ...     def receive_from_worker(self, payload):  # in the driver
    ...         self.pending += payload
    ...     def on_batch_commit(self, batch_id, started_ms):
    ...         self.committed, self.pending = self.committed + self.pending, 0
    >>> worker, driver = Counting(), Counting()
    >>> for offset in range(3):
    ...     worker.add({"n": offset}, b"k", 0, [], "t", 0, offset)
    >>> worker.flush(); driver.receive_from_worker(worker.drain_for_driver())
    >>> driver.on_batch_commit(0, 0); driver.committed
    3

    :param on_client_connect_success: called after ``setup()`` succeeds.
    :param on_client_connect_failure: called with the exception when ``setup()`` (or the
        success callback) raises; it must re-raise to stop the application, or return to
        carry on. By default the exception is re-raised.
    """

    #: When True the engine calls :meth:`drain_for_driver` after each flush in a worker and
    #: hands the result to the driver's :meth:`receive_from_worker` (``ListSink`` fills up the
    #: user's instance this way; the lake sink gathers the files a batch wrote).
    collects_to_driver: bool = False

    def __init__(
        self,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        self._on_client_connect_success: ClientConnectSuccessCallback = on_client_connect_success or connected
        self._on_client_connect_failure: ClientConnectFailureCallback = on_client_connect_failure or failed_to_connect

    #: Set by the engine: the sink's position among the pipeline's sinks (part of its
    #: :meth:`delivery_token`, stable across restarts of the same pipeline).
    sink_position: Optional[int] = None

    def delivery_token(self) -> Optional[str]:
        """A token naming the micro-batch unit being flushed (the same on a replay), or None
        outside a streaming query. Sinks that can store it atomically with their data use it
        to skip a replayed write (``PostgreSQLSink`` and ``IcebergSink`` do)."""
        return unit_token(self.sink_position)

    def setup(self) -> None:
        """Connect to the destination and validate it. Override when needed."""

    def start(self) -> None:
        """Run :meth:`setup`, then the success callback; an exception from either goes to
        the failure callback (by default: re-raised)."""
        try:
            self.setup()
            self._on_client_connect_success()
        except Exception as exc:
            self._on_client_connect_failure(exc)

    @abc.abstractmethod
    def add(
        self,
        value: Any,
        key: Any,
        timestamp: int,
        headers: Headers,
        topic: str,
        partition: int,
        offset: int,
    ) -> None:
        """Receive one processed record."""

    @abc.abstractmethod
    def flush(self) -> None:
        """Make everything added so far durable; raising fails the micro-batch."""

    def on_paused(self) -> None:
        """Called when the batch is abandoned (backpressure or a failure): drop what is pending."""

    def add_raw_json(self, values: Sequence[bytes], keys: Sequence[Optional[bytes]], timestamps: Sequence[int]) -> bool:
        """Take a chunk of records whose values are still raw JSON; False refuses it.

        The engine offers chunks only when a topic's values go straight into this sink (no
        step between them), are decoded with the default JSON ``loads``, and keep their raw
        bytes keys and Kafka timestamps. A refused chunk is decoded and :meth:`add`-ed record
        by record; a sink that accepts must end up with what those calls would have given.
        """
        return False

    def add_raw_avro(
        self,
        values: Sequence[bytes],
        keys: Sequence[Optional[bytes]],
        timestamps: Sequence[int],
        decoder: ArrowAvroDecoder,
    ) -> bool:
        """Take a chunk of records whose values are still schemaless Avro; False refuses it.

        As :meth:`add_raw_json`, for a topic read with a plain ``AvroDeserializer`` whose
        schema ``decoder`` covers: ``decoder.decode(values)`` gives the chunk as an Arrow table
        (None when a value is not exactly one record of the schema). A refused chunk is decoded
        and :meth:`add`-ed record by record.
        """
        return False

    def drain_for_driver(self) -> Any:
        """Worker side, with :attr:`collects_to_driver`: return (and forget) what the driver's
        instance should receive; it must pickle. See ``ListSink``."""
        return None

    def receive_from_worker(self, payload: Any) -> None:
        """Driver side: take what :meth:`drain_for_driver` returned in a worker (once per task
        of a micro-batch that succeeded, before :meth:`on_batch_commit`)."""

    # Driver-side hooks of a streaming run (the instance passed to ``sdf.sink()``).
    def on_query_start(self, checkpoint_dir: Optional[str] = None) -> None:
        """Before the query starts."""

    def on_batch_commit(self, batch_id: int, started_ms: int) -> None:
        """After every task of micro-batch ``batch_id`` succeeded, before Spark commits it;
        raising fails the batch (it is replayed). ``started_ms``: when the batch began (epoch ms),
        by which time every record of the batch had arrived."""

    def on_source_idle(self, caught_up_ms: int) -> None:
        """The source had no new data: every record that arrived before ``caught_up_ms`` was processed."""

    def on_batch_abort(self) -> None:
        """A micro-batch failed: drop what :meth:`receive_from_worker` gathered for it."""

    def on_query_stop(self) -> None:
        """After the query stopped."""


class BatchingSink(BaseSink):
    """A sink that buffers records per topic partition and writes them on flush.

    Implement :meth:`write`; it may raise ``SinkBackpressureError`` to have the batch
    retried later.

    >>> class PrintSink(BatchingSink):
    ...     def write(self, batch):
    ...         print(batch.topic, batch.partition, [item.value for item in batch])
    >>> s = PrintSink()
    >>> s.add(1, b"k", 0, None, "t", 0, 10); s.add(2, b"k", 0, None, "t", 0, 11)
    >>> s.flush()
    t 0 [1, 2]
    """

    def __init__(
        self,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        self._batches: dict[tuple[str, int], SinkBatch] = {}

    def add(
        self,
        value: Any,
        key: Any,
        timestamp: int,
        headers: Headers,
        topic: str,
        partition: int,
        offset: int,
    ) -> None:
        tp = (topic, partition)
        batch = self._batches.get(tp)
        if batch is None:
            batch = self._batches[tp] = SinkBatch(topic=topic, partition=partition)
        batch.append(value=value, key=key, timestamp=timestamp, headers=headers, offset=offset)

    def __repr__(self) -> str:
        return f"<BatchingSink: {type(self).__name__}>"

    @abc.abstractmethod
    def write(self, batch: SinkBatch) -> None:
        """Write one partition's batch to the destination."""

    def flush(self) -> None:
        """Write every pending batch, then drop them (also when a write fails)."""
        try:
            for tp in list(self._batches):
                batch = self._batches[tp]
                if not batch.empty():
                    self.write(batch)
                del self._batches[tp]
        finally:
            self._batches.clear()

    def on_paused(self) -> None:
        self._batches.clear()

    def _flush_together(self, write_all: Callable[[list[SinkBatch]], None]) -> None:
        """A ``flush`` for sinks that write all pending partitions in ONE call (one transaction,
        one snapshot): ``write_all(non-empty batches)``, then drop them (also when it fails)."""
        try:
            batches = [b for b in self._batches.values() if not b.empty()]
            if batches:
                write_all(batches)
        finally:
            self._batches.clear()

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_batches"] = {}
        if "_client" in state:  # connections are made per worker in setup()
            state["_client"] = None
        return state
