"""The source classes: :class:`BaseSource`, :class:`Source` and :class:`StatefulSource`.

A source runs in a process of its own (see :mod:`streamspark.sources.base.manager`) and
produces messages to its topic; the application's pipeline reads that topic like any other,
so offsets, replays and exactly-once work as for any input topic.

>>> class Numbers(Source):
...     def run(self):
...         for n in range(3):
...             if not self.running:
...                 return
...             self.produce(key=str(n), value=self.serialize(value={"n": n}).value)
>>> source = Numbers(name="numbers")
>>> source.default_topic().name, source.shutdown_timeout
('numbers', 10)
"""

from __future__ import annotations

import abc
import logging
import time
from typing import Any, Optional, Union

from ...models.topics import KafkaMessage, Topic
from ...models.types import Headers
from ...utils.client_connect import ClientConnectFailureCallback, ClientConnectSuccessCallback, connected, failed_to_connect
from .exceptions import CheckpointProducerTimeout
from ...kafka.producer import PRODUCER_ON_ERROR_RETRIES, PRODUCER_POLL_TIMEOUT
from .producer import SourceProducer
from .store import SourceState, SourceStorePartition, SourceStoreTransaction

__all__ = (
    "BaseSource",
    "Source",
    "StatefulSource",
    "ClientConnectSuccessCallback",
    "ClientConnectFailureCallback",
)

logger = logging.getLogger(__name__)


def string_keyed_json_topic(name: str) -> Topic:
    """A topic with string keys and JSON values (the default topic of the row sources)."""
    return Topic(
        name=name, key_serializer="string", key_deserializer="string", value_serializer="json", value_deserializer="json"
    )


def string_keyed_bytes_topic(name: str) -> Topic:
    """A topic with string keys and bytes values (the default topic of the message-relaying
    sources: Kinesis, Pub/Sub)."""
    return Topic(name=name, key_serializer="str", key_deserializer="str", value_serializer="bytes", value_deserializer="bytes")


class BaseSource(abc.ABC):
    """The interface every source implements: ``start``, ``stop`` and ``default_topic``.

    Sources run in a process of their own, started by the application. ``start`` runs there
    for as long as the source produces; ``stop`` is called there (on SIGTERM) when the
    application stops. Use :class:`Source` for a ready-made run loop.

    The source object is sent to its process with (cloud)pickle: what it holds must be
    picklable (open clients belong in ``setup``/``start``).

    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` (or the
        success callback) raised; it must handle or re-raise it (the default logs and re-raises).
    """

    #: seconds the application waits for the source to stop before killing its process
    shutdown_timeout: float = 10

    #: attributes holding clients made in the source's process: they are sent to it as None
    _process_local_attributes: tuple[str, ...] = ()

    def __init__(
        self,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        self._producer: Optional[SourceProducer] = None
        self._producer_topic: Optional[Topic] = None
        self._on_client_connect_success = on_client_connect_success or connected
        self._on_client_connect_failure = on_client_connect_failure or failed_to_connect

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for attribute in self._process_local_attributes:
            state[attribute] = None  # clients are made in the source's process
        return state

    def _init_client(self) -> None:
        """Run ``setup()``, then the success callback; an exception from either goes to the
        failure callback."""
        try:
            self.setup()
            self._on_client_connect_success()
        except Exception as exc:
            self._on_client_connect_failure(exc)

    def configure(self, topic: Topic, producer: SourceProducer, **kwargs: Any) -> None:
        """Called in the source's process before ``start``: the topic and producer to use."""
        self._producer = producer
        self._producer_topic = topic

    def setup(self) -> None:
        """Set up and check clients here (connections, authentication); the connect callbacks
        report the outcome."""

    @property
    def producer(self) -> SourceProducer:
        if self._producer is None:
            raise RuntimeError(f"Source {self!r} is not configured: it produces only in its own process")
        return self._producer

    @property
    def producer_topic(self) -> Topic:
        if self._producer_topic is None:
            raise RuntimeError(f"Source {self!r} is not configured: it produces only in its own process")
        return self._producer_topic

    @abc.abstractmethod
    def start(self) -> None:
        """Fetch data and produce it; the source's process lives while this runs."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Called (in the source's process) when the application stops: make ``start`` return soon."""

    @abc.abstractmethod
    def default_topic(self) -> Topic:
        """The topic to produce to when none is given; the application prefixes its name with
        ``source__``."""


class Source(BaseSource):
    """A source with a run loop: implement :meth:`run` and loop ``while self.running``.

    Helpers: :meth:`serialize`, :meth:`produce`, :meth:`flush` and :attr:`running`.

    >>> import time
    >>> class Ticks(Source):
    ...     def run(self):
    ...         while self.running:
    ...             msg = self.serialize(key="t", value={"ts": time.time()})
    ...             self.produce(key=msg.key, value=msg.value)
    ...             time.sleep(1)

    :param name: the source's unique name (its default topic is ``source__<name>``).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param on_client_connect_success: called after ``setup()`` succeeded.
    :param on_client_connect_failure: called with the exception when ``setup()`` failed; it
        must handle or re-raise it.
    """

    def __init__(
        self,
        name: str,
        shutdown_timeout: float = 10,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
    ) -> None:
        super().__init__(
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        if not name:
            raise ValueError("A source needs a non-empty name")
        self.name = name
        self.shutdown_timeout = shutdown_timeout
        self._running = False
        self._stop_requested = False

    @property
    def running(self) -> bool:
        """True until :meth:`stop` is called: loop on it to stop gracefully."""
        return self._running

    def cleanup(self, failed: bool) -> None:
        """Called once :meth:`run` returned or raised; flushes the producer after a success."""
        if not failed:
            self.flush(self.shutdown_timeout / 2)

    def stop(self) -> None:
        """Sets :attr:`running` to False."""
        self._running = False
        self._stop_requested = True

    def start(self) -> None:
        """Runs ``setup()``, then :meth:`run`, then :meth:`cleanup`.

        A stop requested before the start (a SIGTERM while the process started) is kept:
        ``running`` is False from the beginning.
        """
        self._running = not self._stop_requested
        try:
            self._init_client()
            self.run()
        except BaseException:
            self.cleanup(failed=True)
            raise
        else:
            self.cleanup(failed=False)

    @abc.abstractmethod
    def run(self) -> None:
        """Fetch data and produce it (loop ``while self.running``); the process ends when it returns."""

    def _sleep(self, seconds: float, slice_seconds: float = 0.1) -> None:
        """Sleep for ``seconds`` in slices, returning early once the source is stopped (a stop
        does not wait for the end of a long wait)."""
        deadline = time.monotonic() + seconds
        while self.running and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, slice_seconds))

    def serialize(
        self,
        key: Optional[object] = None,
        value: Optional[object] = None,
        headers: Optional[Headers] = None,
        timestamp_ms: Optional[int] = None,
    ) -> KafkaMessage:
        """Serialize with the topic's serializers; returns a :class:`KafkaMessage`."""
        return self.producer_topic.serialize(key=key, value=value, headers=headers, timestamp_ms=timestamp_ms)

    def produce(
        self,
        value: Optional[Union[str, bytes]] = None,
        key: Optional[Union[str, bytes]] = None,
        headers: Optional[Headers] = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        poll_timeout: float = PRODUCER_POLL_TIMEOUT,
        buffer_error_max_tries: int = PRODUCER_ON_ERROR_RETRIES,
    ) -> None:
        """Produce one (already serialized) message to the source's topic."""
        self.producer.produce(
            topic=self.producer_topic.name,
            value=value,
            key=key,
            headers=headers,
            partition=partition,
            timestamp=timestamp,
            poll_timeout=poll_timeout,
            buffer_error_max_tries=buffer_error_max_tries,
        )

    def flush(self, timeout: Optional[float] = None) -> None:
        """Wait until every produced message is delivered.

        :param timeout: seconds (None: the producer's default, ``request_timeout``).
        :raises CheckpointProducerTimeout: messages were still undelivered at the timeout.
        :raises KafkaProducerDeliveryError: the broker refused a message.
        """
        remaining = self.producer.flush(timeout)
        if remaining > 0:
            raise CheckpointProducerTimeout(
                f'Source "{self.name}": {remaining} message(s) were not delivered before the flush timeout'
            )

    def default_topic(self) -> Topic:
        """A topic named after the source, JSON values and bytes keys (the application prefixes
        the name with ``source__``)."""
        return Topic(name=self.name, value_deserializer="json", value_serializer="json")

    def __repr__(self) -> str:
        return self.name


class StatefulSource(Source):
    """A :class:`Source` with :attr:`state`, committed with what it produced by :meth:`flush`.

    Call :meth:`flush` regularly: it writes the state's changes to the source's changelog
    topic and delivers (at-least-once) or commits in one Kafka transaction (exactly-once)
    the messages produced since the previous flush. After a crash the source restarts from
    the state of its last flush. Under exactly-once keep flushes well under the transaction
    timeout (60 s).

    >>> class Counter(StatefulSource):
    ...     def run(self):
    ...         n = self.state.get("n", 0)
    ...         while self.running and n < 100:
    ...             self.produce(key=str(n), value=self.serialize(value={"n": n}).value)
    ...             n += 1
    ...             self.state.set("n", n)
    ...             if n % 10 == 0:
    ...                 self.flush()
    """

    _store_partition: Optional[SourceStorePartition] = None
    _store_transaction: Optional[SourceStoreTransaction] = None

    def configure(
        self,
        topic: Topic,
        producer: SourceProducer,
        *,
        store_partition: Optional[SourceStorePartition] = None,
        **kwargs: Any,
    ) -> None:
        """Called in the source's process before ``start``: topic, producer and the recovered store."""
        super().configure(topic=topic, producer=producer)
        self._store_partition = store_partition
        self._store_transaction = None

    @property
    def store_partitions_count(self) -> int:
        """Partitions of the changelog topic."""
        return 1

    @property
    def assigned_store_partition(self) -> int:
        """The changelog partition of this source."""
        return 0

    @property
    def store_name(self) -> str:
        """The name of the source's store (part of its changelog topic's name)."""
        return f"source-{self.name}"

    @property
    def state(self) -> SourceState:
        """The source's :class:`~streamspark.state.State`, valid until the next :meth:`flush`
        (read the property again after a flush)."""
        if self._store_partition is None:
            raise RuntimeError(f'Source "{self.name}" is not configured: its state exists only in its own process')
        if self._store_transaction is None:
            self._store_transaction = self._store_partition.begin()
        return self._store_transaction.as_state()

    def flush(self, timeout: Optional[float] = None) -> None:
        """Commit the state with the messages produced since the previous flush.

        :raises CheckpointProducerTimeout: messages were still undelivered at the timeout.
        """
        tx = self._store_transaction
        if tx is not None:
            tx.prepare()
        if self.producer.transactional:
            self.producer.commit_transaction(timeout)
        else:
            super().flush(timeout)
        if tx is not None:
            tx.flush()
            self._store_transaction = None

    def cleanup(self, failed: bool) -> None:
        """After a success: flush (commit). After a failure: drop the uncommitted state changes
        and abort the open transaction (exactly-once)."""
        if not failed:
            self.flush(self.shutdown_timeout / 2)
            return
        if self._store_transaction is not None:
            self._store_transaction.abort()
            self._store_transaction = None
        if self._producer is not None and self._producer.transactional:
            try:
                self._producer.abort_transaction(self.shutdown_timeout / 2)
            except Exception as exc:  # the broker aborts it anyway once the producer is fenced
                logger.warning('Source "%s" could not abort its transaction: %s', self.name, exc)
