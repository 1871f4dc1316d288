"""The processing of one Spark task: records in, outputs emitted, sinks and producer flushed,
one :class:`~streamspark.engine.summary.TaskSummary` out.

The Spark entry points (``task_entry.py``) build a :class:`TaskProcessor` per task (or per
state bucket) and feed it records.
"""

from __future__ import annotations

import logging
import pickle
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Optional, Sequence

from ..context import current_message_context, set_message_context
from ..core.stream import compose
from ..models.messagecontext import MessageContext
from ..models.rows import RawMessage, Row
from ..sinks.base._delivery import set_delivery_unit
from ..sinks.base.exceptions import SinkBackpressureError
from ..sinks.base.sink import BaseSink
from ._plan import PipelinePlan
from .callbacks import flush_stdout
from .emitter import Emitter, flush_producer, output_collector, plan_sinks
from .columnar_prefix import ColumnarPrefix
from .strategies import AVRO_CHUNKS, COLUMNAR_PREFIX, COLUMNAR_WINDOWS, RAW_SINK_CHUNKS
from .summary import ProducerFlush, Stage, TaskError, TaskSummary
from .task_failure import TaskFailure, skip_on_error
from .task_identity import current_task

if TYPE_CHECKING:
    import pyarrow as pa

    from ..core.stream.nodes import PushFn
    from ..models.serializers.avro import ArrowAvroDecoder

__all__ = ("TaskProcessor", "RawRecords", "RawTarget", "raw_sinks", "avro_chunk_decoders")

logger = logging.getLogger(__name__)

#: ``set_message_context`` without its wrapper frame (called once per record)
set_context = current_message_context.set

#: per worker process: started sinks by (run id, node id)
_sinks: dict[tuple[str, int], BaseSink] = {}


def _decoded_headers(raw: Any) -> Any:
    """A source record's headers: pickled when the records crossed the JVM, a list when they
    were read in this process (the fused paths)."""
    return pickle.loads(raw) if raw.__class__ is bytes else raw


class RawRecords(list):  # type: ignore[type-arg]
    """Source records a sink took as one chunk of raw values (``BaseSink.add_raw_json`` or
    ``add_raw_avro``): what the sink replay holds for them, with how they were given."""

    def __init__(self, records: list[tuple[Any, ...]], target: RawTarget) -> None:
        super().__init__(records)
        self.target = target


class RawTarget(NamedTuple):
    """The sink a topic's chunks go to whole, and how (``avro`` None: raw JSON values)."""

    node_id: int
    sink: BaseSink
    avro: Optional[ArrowAvroDecoder] = None

    def offer(self, values: Sequence[Any], keys: Sequence[Any], stamps: Sequence[int]) -> bool:
        """Give the sink the chunk; False when it refuses it."""
        if self.avro is not None:
            return self.sink.add_raw_avro(values, keys, stamps, self.avro)
        return self.sink.add_raw_json(values, keys, stamps)


def raw_sinks(plan: PipelinePlan, sinks: dict[int, BaseSink]) -> dict[str, RawTarget]:
    """Topics whose records go straight into a sink that takes raw chunks of their format
    (no step between, nothing collected): raw JSON values, or plain schemaless Avro."""
    found: dict[str, RawTarget] = {}
    if plan.collect:
        return found
    for name, root in plan.roots.items():
        if len(root.children) != 1 or root.children[0].kind != "sink" or root.children[0].children:
            continue
        node_id = root.children[0].id
        sink = sinks.get(node_id)
        if sink is None:
            continue
        topic = plan.topics[name]
        if type(sink).add_raw_json is not BaseSink.add_raw_json and topic.raw_json_values():
            found[name] = RawTarget(node_id, sink)
        elif type(sink).add_raw_avro is not BaseSink.add_raw_avro:
            decoder = topic.raw_avro_decoder()
            if decoder is not None:
                found[name] = RawTarget(node_id, sink, decoder)
    return found


def avro_chunk_decoders(plan: PipelinePlan) -> dict[str, ArrowAvroDecoder]:
    """The topics read whose values are plain schemaless Avro (``Topic.raw_avro_decoder``), with
    the decoder of a chunk of them."""
    found = {}
    for name in plan.roots:
        decoder = plan.topics[name].raw_avro_decoder()
        if decoder is not None:
            found[name] = decoder
    return found


def started_sinks(plan: PipelinePlan) -> dict[int, BaseSink]:
    sinks = {}
    for ordinal, (node_id, obj) in enumerate(plan_sinks(plan)):
        cached = _sinks.get((plan.run_id, node_id))
        if cached is None:
            obj.sink_position = ordinal  # stable across restarts (node ids are process-wide counters)
            obj.start()
            cached = _sinks[(plan.run_id, node_id)] = obj
        sinks[node_id] = cached
    return sinks


def open_transaction(plan: PipelinePlan, stage: str, spark_partition: int, bucket: Optional[int]) -> Any:
    """The exactly-once transaction of this task's unit (its partition, or its state bucket)."""
    from ._eos import TransactionUnit

    eos = plan.eos
    assert eos is not None
    task = current_task()
    batch_id = task.batch_id if task is not None else None
    if batch_id is None:
        raise RuntimeError("exactly-once needs the micro-batch id, which this Spark task does not have")
    slot = bucket if bucket is not None else eos.task_slot(spark_partition)
    txid = f"streamspark-{eos.consumer_group}-{stage}-{spark_partition}"
    return TransactionUnit(eos, plan.producer_config, txid, slot, batch_id)


class TaskProcessor:
    """Processes records inside one Spark task and reports one summary.

    Usage: ``process(columns)`` for each Arrow batch (as ``to_pydict()`` columns), then
    ``finish()``, which flushes sinks (retrying a sink after backpressure with the same
    records), then the producer, and returns the summary row. Any unhandled error stops
    processing and is reported in the summary instead of failing the Spark task.
    """

    def __init__(
        self,
        plan: PipelinePlan,
        spark_partition: int,
        states: Any = None,
        stage: str = "all",
        buckets: int = 1,
        bucket: Optional[int] = None,
        defer_producer_flush: bool = False,
    ) -> None:
        """:param stage: ``"all"`` runs whole pipelines; ``"pre"`` stops at group_by nodes
        (their records go to ``emitter.grouped``); ``"post"`` runs what is below group_by
        nodes on re-keyed records (see :meth:`process_grouped`).
        :param defer_producer_flush: leave waiting for the deliveries to the end bucket of this
            Spark partition (at-least-once only; see ``ProducerFlush.DEFERRED``)."""
        self.plan = plan
        self.defer_producer_flush = defer_producer_flush and plan.eos is None
        self.spark_partition = spark_partition
        self.unit = f"{stage}-{bucket if bucket is not None else spark_partition}"
        self.collected: list[Any] = []
        self.counter = [0]
        self.input_count = 0
        self.skipped = 0
        self.error: Optional[TaskError] = None
        self.sinks: dict[int, BaseSink] = {}
        self.emitter: Optional[Emitter] = None
        self.pushes: dict[str, Any] = {}
        self.group_pushes: dict[int, Any] = {}
        #: topics whose chunks of records go to a sink whole, as raw values (see ``_sink_raw``)
        self.raw_sinks: dict[str, RawTarget] = {}
        #: topics whose chunks of values are decoded at once (see ``_chunk_deserializer``)
        self.avro_chunks: dict[str, ArrowAvroDecoder] = {}
        #: the columnar prefix of those topics (see ``columnar_prefix``) and the ``push`` of
        #: what follows it
        self.prefixes: dict[str, tuple[ColumnarPrefix, PushFn]] = {}
        self.txn: Any = None
        #: windows computed a batch at a time (the columnar path), flushed after each batch; only
        #: with one input tree, or the outputs of the trees would reorder against each other
        single_tree = len(plan.roots) == 1 and len(plan.group_nodes) <= 1
        self.batched: Optional[list[Any]] = [] if COLUMNAR_WINDOWS.name in plan.strategies and single_tree else None
        try:
            self.sinks = started_sinks(plan)
            if plan.eos is not None:
                self.txn = open_transaction(plan, stage, spark_partition, bucket)
            self.emitter = Emitter(plan, self.sinks, self.txn)
            self.emitter.buckets = buckets
            leaf = output_collector(plan, self.emitter, self.collected, self.counter)
            if stage == "post":
                self.group_pushes = {
                    node.id: compose(node, collect=leaf, emitter=self.emitter, states=states, below=True, batched=self.batched)
                    for node in plan.group_nodes
                }
            else:
                if stage == "all" and RAW_SINK_CHUNKS.name in plan.strategies:
                    self.raw_sinks = raw_sinks(plan, self.sinks)
                if AVRO_CHUNKS.name in plan.strategies:
                    self.avro_chunks = avro_chunk_decoders(plan)
                prefixes = {}
                if COLUMNAR_PREFIX.name in plan.strategies:
                    prefixes = {name: ColumnarPrefix.of(plan.roots[name]) for name in self.avro_chunks}
                for name, root in plan.roots.items():
                    prefix = prefixes.get(name)
                    after = prefix.last.children if prefix is not None and prefix.last is not None else []
                    entries: dict[int, Optional[PushFn]] = {after[0].id: None} if after else {}
                    self.pushes[name] = compose(
                        root,
                        collect=leaf,
                        emitter=self.emitter,
                        states=states,
                        split_groups=stage == "pre",
                        batched=self.batched,
                        entries=entries,
                    )
                    if prefix is not None:
                        rest = entries[after[0].id] if after else leaf
                        if rest is not None:
                            self.prefixes[name] = (prefix, rest)
        except Exception as exc:  # sink setup, producer creation
            self.abandon(TaskFailure(exc, Stage.SETUP, None, None, None))

    @property
    def failed(self) -> bool:
        return self.error is not None

    def abandon(self, fatal: TaskFailure) -> None:
        """Give up the task's work after ``fatal``: abort its transaction, drop what its sinks
        hold, and keep the error for the summary."""
        if self.txn is not None:
            self.txn.abort()
        for sink in self.sinks.values():
            sink.on_paused()
            if sink.collects_to_driver:
                sink.drain_for_driver()
        self.error = TaskError.of(fatal.exc, fatal.stage, fatal.topic, fatal.partition, fatal.offset)

    def process(self, records: Iterable[tuple[Any, ...]]) -> None:
        """Process source records, each a tuple in the Kafka source's column order
        (topic, partition, offset, timestamp, timestamp type, key, value, headers)."""
        if self.error is not None:
            return
        try:
            self._process_chunk(records)
            self.emitter.flush_pending()  # type: ignore[union-attr]  # set unless setup failed
        except TaskFailure as fatal:
            self.abandon(fatal)

    def _process_chunk(self, records: Iterable[tuple[Any, ...]]) -> None:
        """What :meth:`process` does before producing the outputs kept for encoding at once."""
        if self.raw_sinks and records.__class__ is list and records:
            target = self.raw_sinks.get(records[0][0])  # type: ignore[index]
            if target is not None and self._sink_raw(records, target):  # type: ignore[arg-type]
                return
        chunk_deserializer = None
        if self.avro_chunks and records.__class__ is list and records:
            topic = records[0][0]  # type: ignore[index]
            decoder = self.avro_chunks.get(topic)
            table = self._chunk_table(records, decoder) if decoder is not None else None  # type: ignore[arg-type]
            if table is not None:
                assert decoder is not None
                prefixed = self.prefixes.get(topic)
                if prefixed is not None and self._process_prefixed(records, table, *prefixed):  # type: ignore[arg-type]
                    self._flush_batched()
                    return
                chunk_deserializer = self._chunk_deserializer(table, decoder)
        self._process(records, chunk_deserializer)
        self._flush_batched()

    def _flush_batched(self) -> None:
        """Compute the windows that took the whole batch (downstream ones last)."""
        batched = self.batched
        if not batched:
            return
        while any(window.buffer for window in batched):
            # compose registers a window before the windows upstream of it
            for window in reversed(batched):
                window.flush(self._replay)

    def _replay(self, ctx: MessageContext, value: Any, key: Any, timestamp: int, headers: Any, push: Any) -> None:
        """Run ``push`` for a record under its message context (now, or later for the windows
        that take a whole batch); apply ``on_processing_error``."""
        self.emitter.ctx = ctx  # type: ignore[union-attr]  # set whenever records are processed
        set_context(ctx)
        try:
            push(value, key, timestamp, headers)
        except TaskFailure:
            raise
        except Exception as exc:
            stage = self.emitter.stage_of(exc)  # type: ignore[union-attr]
            row = Row(value, key, timestamp, ctx, headers)
            if not skip_on_error(self.plan.on_processing_error, exc, row, stage, ctx.topic, ctx.partition, ctx.offset):
                raise TaskFailure(exc, stage, ctx.topic, ctx.partition, ctx.offset) from exc
            self.skipped += 1

    def _sink_raw(self, records: list[tuple[Any, ...]], target: RawTarget) -> bool:
        """Give a chunk of one topic's records to the sink as raw values; False when the
        sink refuses it (the records then take the per-record path)."""
        topics, parts, offsets, stamps, _, keys, values, _ = zip(*records)
        if topics.count(topics[0]) != len(topics):
            return False
        try:
            taken = target.offer(values, keys, stamps)
        except Exception as exc:
            raise TaskFailure(exc, Stage.SINK, topics[0], parts[0], offsets[0]) from exc
        if not taken:
            return False
        assert self.emitter is not None
        self.emitter.replay[target.node_id].append(RawRecords(records, target))
        self.input_count += len(records)
        self.counter[0] += len(records)
        on_processed = self.plan.on_message_processed
        if on_processed is not None:
            for tname, part, offset in zip(topics, parts, offsets):
                on_processed(tname, part, offset)
        return True

    def _resend_raw(self, sink: BaseSink, records: RawRecords) -> None:
        """Feed a sink again the records it took as a raw chunk (after backpressure)."""
        topics, parts, offsets, stamps, _, keys, values, _ = zip(*records)
        if records.target.offer(values, keys, stamps):
            return
        deserialize = self.plan.topics[topics[0]].record_deserializer()
        for tname, part, offset, stamp, stamp_type, key, value, raw_headers in records:
            headers = _decoded_headers(raw_headers) if raw_headers else None
            try:
                rows = deserialize(value, key, headers, stamp, stamp_type)
            except Exception as exc:
                self._undeserializable(exc, (tname, part, offset, stamp, stamp_type, key, value), headers)
                continue
            for v, k, t in rows:
                sink.add(v, k, t, headers, tname, part, offset)

    def _undeserializable(self, exc: Exception, record: tuple[Any, ...], headers: Any) -> None:
        """A source record ``(topic, partition, offset, timestamp, timestamp type, key, value)``
        its topic cannot deserialize: counted as skipped when ``on_consumer_error`` says so,
        else the task fails (:class:`TaskFailure`)."""
        tname, part, offset, stamp, stamp_type, key, value = record
        raw = RawMessage(tname, part, offset, key, value, headers, stamp, stamp_type)
        if not skip_on_error(self.plan.on_consumer_error, exc, raw, Stage.CONSUMER, tname, part, offset):
            raise TaskFailure(exc, Stage.CONSUMER, tname, part, offset) from exc
        self.skipped += 1

    @staticmethod
    def _chunk_table(records: list[tuple[Any, ...]], decoder: ArrowAvroDecoder) -> Optional[pa.Table]:
        """The values of the chunk ``records`` (one topic's, read as plain schemaless Avro)
        decoded at once; None when the chunk mixes topics or the decoder refuses it (the
        topic's deserializer then takes each record, and reports a bad one)."""
        topics, _, _, _, _, _, values, _ = zip(*records)
        if topics.count(topics[0]) != len(topics):
            return None
        try:
            return decoder.decode(values)
        except Exception:  # anything the decoder did not expect: the per-record path reports it
            logger.debug("A chunk of Avro values goes record by record", exc_info=True)
            return None

    @staticmethod
    def _chunk_deserializer(table: pa.Table, decoder: ArrowAvroDecoder) -> Callable[..., Any]:
        """A record deserializer handing out the values of a decoded chunk, in order."""
        take = decoder.table_records(table).__next__

        def deserialize(value: Any, key: Any, headers: Any, timestamp_ms: int, timestamp_type: int) -> Any:
            return ((take(), key, timestamp_ms),)

        return deserialize

    def _process_prefixed(self, records: list[tuple[Any, ...]], table: pa.Table, prefix: ColumnarPrefix, push: PushFn) -> bool:
        """Run a decoded chunk's columnar prefix, then what follows it on each record that
        passed; False (nothing run) when the prefix refuses the chunk."""
        selection = prefix.run(table)
        if selection is None:
            return False
        on_processed = self.plan.on_message_processed
        replay = self._replay
        values = selection.records()
        kept = selection.rows.tolist()
        kept.append(-1)
        j, wanted = 0, kept[0]
        n = 0
        try:
            for n, (tname, part, offset, stamp, _, key, _, raw_headers) in enumerate(records, 1):
                if n - 1 == wanted:
                    headers = _decoded_headers(raw_headers) if raw_headers else None
                    ctx = MessageContext(tname, part, offset, 0, None, key, stamp, headers)
                    replay(ctx, next(values), key, stamp, headers, push)
                    j += 1
                    wanted = kept[j]
                if on_processed is not None:
                    on_processed(tname, part, offset)
        finally:
            self.input_count += n
        return True

    def _process(self, records: Iterable[tuple[Any, ...]], chunk_deserializer: Optional[Callable[..., Any]] = None) -> None:
        """Deserialize and run each record; ``chunk_deserializer`` stands for the topics'
        deserializers (see :meth:`_chunk_deserializer`)."""
        plan = self.plan
        on_processed = plan.on_message_processed
        replay = self._replay
        current = None
        deserialize: Any = None
        push: Any = None
        n = 0
        try:
            for tname, part, offset, stamp, stamp_type, key, value, raw_headers in records:
                n += 1
                if tname != current:
                    current = tname
                    deserialize = chunk_deserializer or plan.topics[tname].record_deserializer()
                    push = self.pushes[tname]
                headers = _decoded_headers(raw_headers) if raw_headers else None
                try:
                    rows = deserialize(value, key, headers, stamp, stamp_type)
                except Exception as exc:
                    self._undeserializable(exc, (tname, part, offset, stamp, stamp_type, key, value), headers)
                    continue
                for v, k, t in rows:
                    # positional: (key, topic, partition, offset, size, timestamp, headers)
                    replay(MessageContext(tname, part, offset, 0, None, k, t, headers), v, k, t, headers, push)
                if on_processed is not None:
                    on_processed(tname, part, offset)
        finally:
            self.input_count += n

    def process_grouped(self, rows: list[tuple[Any, ...]]) -> None:
        """Run re-keyed records ``(group node id, key, value, ts, headers, topic, partition, offset)``."""
        if self.error is not None:
            return
        try:
            for node_id, key, value, timestamp, headers, tname, part, offset in rows:
                self._replay(
                    MessageContext(tname, part, offset, 0, None, key, timestamp, headers),
                    value,
                    key,
                    timestamp,
                    headers,
                    self.group_pushes[node_id],
                )
            self._flush_batched()
            self.emitter.flush_pending()  # type: ignore[union-attr]  # set unless setup failed
        except TaskFailure as fatal:
            self.abandon(fatal)

    def run_tickers(self, tickers: list[Any], now_ms: int) -> None:
        """Run the timer callbacks of windows (closing quiet keys); their outputs flow downstream."""
        if self.error is not None or not tickers:
            return
        ctx = MessageContext(key=None, topic="", partition=-1, offset=-1, size=0, timestamp=now_ms, headers=None)
        assert self.emitter is not None
        self.emitter.ctx = ctx
        set_message_context(ctx)
        try:
            for tick in tickers:
                tick(now_ms)
            self.emitter.flush_pending()
        except TaskFailure as fatal:
            self.abandon(fatal)
        except Exception as exc:
            self.abandon(TaskFailure(exc, self.emitter.stage_of(exc), None, None, None))

    def _flush_sink(self, node_id: int, sink: BaseSink) -> None:
        """Flush; after ``SinkBackpressureError`` drop, wait ``retry_after`` and feed the same records again."""
        assert self.emitter is not None
        records = self.emitter.replay[node_id]
        while True:
            try:
                sink.flush()
                break
            except SinkBackpressureError as exc:
                sink.on_paused()
                try:
                    wait = max(float(exc.retry_after), 0.0)
                except (TypeError, ValueError) as bad:
                    raise TaskFailure(
                        TypeError(
                            f"{type(sink).__name__} asked for backpressure with retry_after={exc.retry_after!r}; it must be a number of seconds"
                        ),
                        Stage.SINK,
                        None,
                        None,
                        None,
                    ) from bad
                logger.info(
                    "Sink %s asked for backpressure: retrying %d record(s) in %.1fs",
                    type(sink).__name__,
                    len(records),
                    wait,
                )
                time.sleep(wait)
                for args in records:
                    if args.__class__ is RawRecords:
                        self._resend_raw(sink, args)
                    else:
                        sink.add(*args)
            except TaskFailure:
                raise
            except Exception as exc:
                raise TaskFailure(exc, Stage.SINK, None, None, None) from exc
        records.clear()

    def finish(self, payloads: Optional[dict[int, Any]] = None) -> TaskSummary:
        """Flush sinks then the producer (the commit order); return the task's summary."""
        flush_stdout()
        sink_payloads: dict[int, Any] = {}
        if self.error is None and self.emitter is not None:
            try:
                set_delivery_unit(self.unit)
                self.emitter.flush_pending()  # nothing is left by now; in case a caller did not process
                for node_id, sink in self.sinks.items():
                    self._flush_sink(node_id, sink)
                    if sink.collects_to_driver:
                        sink_payloads[node_id] = sink.drain_for_driver()
                if not self.defer_producer_flush:
                    flush_producer(self.emitter.producer, self.emitter.reports, self.plan)
                if self.txn is not None:
                    try:
                        self.txn.commit()
                    except Exception as exc:
                        raise TaskFailure(exc, Stage.PRODUCER, None, None, None) from exc
            except TaskFailure as fatal:
                self.abandon(fatal)
                sink_payloads = {}
        return TaskSummary(
            spark_partition=self.spark_partition,
            input_count=self.input_count,
            output_count=self.counter[0],
            skipped=self.skipped + (self.emitter.skipped if self.emitter is not None else 0),
            collected=self.collected if self.collected and self.error is None else None,
            sink_payloads=sink_payloads or None,
            error=self.error,
            producer_flush=ProducerFlush.DEFERRED if self.defer_producer_flush else ProducerFlush.OWN,
        )
