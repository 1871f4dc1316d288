"""The code that runs inside Spark tasks: deserialize, run the fused pipeline, emit, flush.

A task never lets a record error escape as a Spark failure: it stops at the first
unhandled error and reports it (with topic, partition, offset and the pickled exception)
in its summary row, so the driver can raise the user's own exception with context and
the micro-batch is not committed.
"""

from __future__ import annotations

import gc
import logging
import pickle
import time
from typing import Any, Callable, Iterable, Iterator, Optional

import pyarrow as pa

from ..context import _current_message_context, set_message_context
from ..core.stream import compose
from ..logging import configure_logging
from ..models.messagecontext import MessageContext
from ..models.rows import RawMessage, Row
from ..sinks.base._delivery import set_delivery_unit
from ..sinks.base.exceptions import SinkBackpressureError
from ..sinks.base.sink import BaseSink
from ..state.store import scope_key
from ._arrow import ddl
from .alignment import in_time_order
from .bucketing import bucket_of_key
from .callbacks import flush_stdout, forward_stdout
from .summary import SUMMARY_SCHEMA, Stage, TaskError, TaskSummary
from ._producers import DeliveryReports, new_task_producer
from ._kafka_source import SOURCE_COLUMNS
from ._plan import PipelinePlan

__all__ = ("run_task", "run_fused", "run_bucket", "run_pre_shuffle", "TaskProcessor", "SUMMARY_SCHEMA", "GROUPED_SCHEMA")

logger = logging.getLogger(__name__)


#: ``set_message_context`` without its wrapper frame (called once per record)
_set_context = _current_message_context.set

#: produced messages between two polls of the producer's delivery reports
_POLL_EVERY = 1000

# Per worker process: producers (with their delivery reports) by config, started sinks by
# (run id, node id).
_producers: dict[str, tuple[Any, DeliveryReports]] = {}
_sinks: dict[tuple[str, int], BaseSink] = {}


class _RawRecords(list):  # type: ignore[type-arg]
    """Source records a sink took as one chunk of raw JSON values (``BaseSink.add_raw_json``):
    what the sink replay holds for them."""


def _raw_json_sinks(plan: PipelinePlan, sinks: dict[int, BaseSink]) -> dict[str, tuple[int, BaseSink]]:
    """Topics whose records go straight into a sink that takes raw JSON chunks (no step
    between, nothing collected), with that sink's node id and instance."""
    found: dict[str, tuple[int, BaseSink]] = {}
    if plan.collect:
        return found
    for name, root in plan.roots.items():
        if len(root.children) != 1 or root.children[0].kind != "sink" or root.children[0].children:
            continue
        node_id = root.children[0].id
        sink = sinks.get(node_id)
        if sink is not None and type(sink).add_raw_json is not BaseSink.add_raw_json and plan.topics[name].raw_json_values():
            found[name] = (node_id, sink)
    return found


class _Fatal(Exception):
    """An unhandled error with where it happened."""

    def __init__(
        self, exc: BaseException, stage: Stage, topic: Optional[str], partition: Optional[int], offset: Optional[int]
    ) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.stage = stage
        self.topic = topic
        self.partition = partition
        self.offset = offset


def _skip(
    callback: Callable[..., bool],
    exc: BaseException,
    row: Any,
    stage: Stage,
    topic: Optional[str],
    partition: Optional[int],
    offset: Optional[int],
) -> bool:
    """Ask an error callback whether to skip ``row``; an exception raised by the callback itself
    stops the task like the error it was asked about (its exception is the cause)."""
    try:
        return bool(callback(exc, row, logger))
    except Exception as callback_exc:
        raise _Fatal(callback_exc, stage, topic, partition, offset) from callback_exc


def _producer(config: dict[str, Any]) -> tuple[Any, DeliveryReports]:
    """The worker process's producer for ``config`` and the collector of its failed deliveries."""
    import json

    key = json.dumps(config, sort_keys=True)
    cached = _producers.get(key)
    if cached is None:
        cached = _producers[key] = new_task_producer(config)
    return cached


class _Emitter:
    """Receives outputs of the compiled pipeline inside a task."""

    def __init__(self, plan: PipelinePlan, sinks: dict[int, BaseSink], txn: Any = None) -> None:
        self.plan = plan
        #: the exactly-once transaction of this unit, or None (at-least-once)
        self.txn = txn
        self.sinks = sinks  # node id -> started instance
        self.sink_ids = {id(obj): node_id for node_id, obj in _plan_sinks(plan)}
        #: what each sink received since its last flush, to feed it again after backpressure
        self.replay: dict[int, list[Any]] = {node_id: [] for node_id in sinks}
        self.producer: Any
        self.reports: DeliveryReports
        self.producer, self.reports = (txn.producer, txn.reports) if txn is not None else _producer(plan.producer_config)
        #: records re-keyed by a group_by, waiting for the shuffle (pre-shuffle stage only)
        self.grouped: list[tuple[Any, ...]] = []
        self.buckets = 1
        self.ctx: MessageContext = MessageContext()
        self.produced = 0
        #: the ``topic_sender`` of each output topic (by object id)
        self._senders: dict[int, Callable[[Any, Any, int, Any], None]] = {}

    def _fail(self, exc: BaseException, stage: Stage) -> _Fatal:
        return _Fatal(exc, stage, self.ctx.topic, self.ctx.partition, self.ctx.offset)

    def to_topic(self, topic: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        self.topic_sender(topic)(value, key, timestamp, headers)

    def topic_sender(self, topic: Any) -> Callable[[Any, Any, int, Any], None]:
        """``send(value, key, timestamp, headers)`` to ``topic``, made once per topic (compiled
        pipelines call it once per output record): serializes with the topic's serializers,
        hands a serialization error to ``on_producer_error``, produces (waiting while the local
        queue is full) and, in exactly-once mode, inside this unit's transaction."""
        send = self._senders.get(id(topic))
        if send is None:
            send = self._senders[id(topic)] = self._new_sender(topic)
        return send

    def _new_sender(self, topic: Any) -> Callable[[Any, Any, int, Any], None]:
        serialize = topic.record_serializer()
        name = topic.name
        producer = self.producer
        produce = producer.produce
        on_error = self.plan.on_producer_error
        txn = self.txn

        def send(value: Any, key: Any, timestamp: int, headers: Any) -> None:
            if txn is not None:
                if txn.done:
                    return  # an earlier attempt of this batch committed these outputs
                txn.begin()
            try:
                skey, svalue, out_headers = serialize(key, value, headers)
            except Exception as exc:
                ctx = self.ctx
                if not _skip(
                    on_error, exc, Row(value, key, timestamp, ctx, headers), Stage.PRODUCER, ctx.topic, ctx.partition, ctx.offset
                ):
                    raise self._fail(exc, Stage.PRODUCER) from exc
                return
            timestamp = timestamp or 0  # 0 (also for None): the producer stamps the message
            while True:
                try:
                    produce(name, svalue, skey, headers=out_headers or None, timestamp=timestamp)
                    break
                except BufferError:  # the local queue is full: let deliveries drain
                    producer.poll(0.5)
            # serve delivery reports now and then (each poll is a call into librdkafka); the
            # flush at the end of the task waits for the rest
            self.produced += 1
            if not self.produced % _POLL_EVERY:
                producer.poll(0)

        return send

    def to_group(self, node: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        ctx = self.ctx
        try:
            bucket = bucket_of_key(scope_key(key), self.buckets)
            row = (
                bucket,
                node.id,
                pickle.dumps(key),
                pickle.dumps(value),
                timestamp,
                pickle.dumps(headers) if headers else None,
                ctx.topic,
                ctx.partition,
                ctx.offset,
            )
        except Exception as exc:
            raise self._fail(exc, Stage.GROUP_BY) from exc
        self.grouped.append(row)

    def to_sink(self, sink: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        node_id = self.sink_ids[id(sink)]
        ctx = self.ctx
        args = (value, key, timestamp, headers, ctx.topic, ctx.partition, ctx.offset)
        self.replay[node_id].append(args)
        self.sinks[node_id].add(*args)


def _collector(plan: PipelinePlan, emitter: _Emitter, out: list[Any], counter: list[int]) -> Any:
    if not plan.collect:

        def count_only(v: Any, k: Any, t: int, h: Any) -> None:
            counter[0] += 1

        return count_only
    if plan.metadata:

        def collect_meta(v: Any, k: Any, t: int, h: Any) -> None:
            counter[0] += 1
            ctx = emitter.ctx
            out.append(
                {
                    **(v if isinstance(v, dict) else {"_value": v}),
                    "_key": k,
                    "_timestamp": t,
                    "_headers": h,
                    "_topic": ctx.topic,
                    "_partition": ctx.partition,
                    "_offset": ctx.offset,
                }
            )

        return collect_meta

    def collect(v: Any, k: Any, t: int, h: Any) -> None:
        counter[0] += 1
        out.append(v)

    return collect


def _plan_sinks(plan: PipelinePlan) -> list[tuple[int, BaseSink]]:
    """``(node id, sink)`` of every sink node of the plan."""
    return [(n.id, n.sink) for n in plan.sink_nodes()]


def _started_sinks(plan: PipelinePlan) -> dict[int, BaseSink]:
    sinks = {}
    for ordinal, (node_id, obj) in enumerate(_plan_sinks(plan)):
        cached = _sinks.get((plan.run_id, node_id))
        if cached is None:
            obj.sink_position = ordinal  # stable across restarts (node ids are process-wide counters)
            obj.start()
            cached = _sinks[(plan.run_id, node_id)] = obj
        sinks[node_id] = cached
    return sinks


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
    ) -> None:
        """:param stage: ``"all"`` runs whole pipelines; ``"pre"`` stops at group_by nodes
        (their records go to ``emitter.grouped``); ``"post"`` runs what is below group_by
        nodes on re-keyed records (see :meth:`process_grouped`)."""
        self.plan = plan
        self.spark_partition = spark_partition
        self.unit = f"{stage}-{bucket if bucket is not None else spark_partition}"
        self.collected: list[Any] = []
        self.counter = [0]
        self.input_count = 0
        self.skipped = 0
        self.error: Optional[TaskError] = None
        self.sinks: dict[int, BaseSink] = {}
        self.emitter: Optional[_Emitter] = None
        self.pushes: dict[str, Any] = {}
        self.group_pushes: dict[int, Any] = {}
        #: topics whose chunks of records go to a sink whole, as raw JSON (see ``_sink_raw``)
        self.raw_sinks: dict[str, tuple[int, BaseSink]] = {}
        self.txn: Any = None
        #: windows computed a batch at a time (the columnar path), flushed after each batch; only
        #: with one input tree, or the outputs of the trees would reorder against each other
        single_tree = len(plan.roots) == 1 and len(plan.group_nodes) <= 1
        self.batched: Optional[list[Any]] = [] if plan.columnar_windows and single_tree else None
        try:
            self.sinks = _started_sinks(plan)
            if plan.eos is not None:
                self.txn = _transaction(plan, stage, spark_partition, bucket)
            self.emitter = _Emitter(plan, self.sinks, self.txn)
            self.emitter.buckets = buckets
            leaf = _collector(plan, self.emitter, self.collected, self.counter)
            if stage == "post":
                self.group_pushes = {
                    node.id: compose(node, collect=leaf, emitter=self.emitter, states=states, below=True, batched=self.batched)
                    for node in plan.group_nodes
                }
            else:
                if stage == "all":
                    self.raw_sinks = _raw_json_sinks(plan, self.sinks)
                self.pushes = {
                    name: compose(
                        root, collect=leaf, emitter=self.emitter, states=states, split_groups=stage == "pre", batched=self.batched
                    )
                    for name, root in plan.roots.items()
                }
        except Exception as exc:  # sink setup, producer creation
            self.abandon(_Fatal(exc, Stage.SETUP, None, None, None))

    @property
    def failed(self) -> bool:
        return self.error is not None

    def abandon(self, fatal: _Fatal) -> None:
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
            if self.raw_sinks and records.__class__ is list and records:
                target = self.raw_sinks.get(records[0][0])  # type: ignore[index]
                if target is not None and self._sink_raw(records, *target):  # type: ignore[arg-type]
                    return
            self._process(records)
            self._flush_batched()
        except _Fatal as fatal:
            self.abandon(fatal)

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
        _set_context(ctx)
        try:
            push(value, key, timestamp, headers)
        except _Fatal:
            raise
        except Exception as exc:
            if not _skip(
                self.plan.on_processing_error,
                exc,
                Row(value, key, timestamp, ctx, headers),
                Stage.PROCESSING,
                ctx.topic,
                ctx.partition,
                ctx.offset,
            ):
                raise _Fatal(exc, Stage.PROCESSING, ctx.topic, ctx.partition, ctx.offset) from exc
            self.skipped += 1

    def _sink_raw(self, records: list[tuple[Any, ...]], node_id: int, sink: BaseSink) -> bool:
        """Give a chunk of one topic's records to the sink as raw JSON values; False when the
        sink refuses it (the records then take the per-record path)."""
        topics, parts, offsets, stamps, _, keys, values, _ = zip(*records)
        if topics.count(topics[0]) != len(topics):
            return False
        try:
            taken = sink.add_raw_json(values, keys, stamps)
        except Exception as exc:
            raise _Fatal(exc, Stage.SINK, topics[0], parts[0], offsets[0]) from exc
        if not taken:
            return False
        assert self.emitter is not None
        self.emitter.replay[node_id].append(_RawRecords(records))
        self.input_count += len(records)
        self.counter[0] += len(records)
        on_processed = self.plan.on_message_processed
        if on_processed is not None:
            for tname, part, offset in zip(topics, parts, offsets):
                on_processed(tname, part, offset)
        return True

    def _resend_raw(self, sink: BaseSink, records: _RawRecords) -> None:
        """Feed a sink again the records it took as a raw chunk (after backpressure)."""
        topics, parts, offsets, stamps, _, keys, values, _ = zip(*records)
        if sink.add_raw_json(values, keys, stamps):
            return
        deserialize = self.plan.topics[topics[0]].record_deserializer()
        for tname, part, offset, stamp, stamp_type, key, value, headers in records:
            for v, k, t in deserialize(value, key, headers, stamp, stamp_type):
                sink.add(v, k, t, headers, tname, part, offset)

    def _process(self, records: Iterable[tuple[Any, ...]]) -> None:
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
                    deserialize = plan.topics[tname].record_deserializer()
                    push = self.pushes[tname]
                # pickled when the records crossed the JVM, a list when read in this process (fused)
                headers = (pickle.loads(raw_headers) if raw_headers.__class__ is bytes else raw_headers) if raw_headers else None
                try:
                    rows = deserialize(value, key, headers, stamp, stamp_type)
                except Exception as exc:
                    raw = RawMessage(tname, part, offset, key, value, headers, stamp, stamp_type)
                    if _skip(plan.on_consumer_error, exc, raw, Stage.CONSUMER, tname, part, offset):
                        self.skipped += 1
                        continue
                    raise _Fatal(exc, Stage.CONSUMER, tname, part, offset) from exc
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
        except _Fatal as fatal:
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
        except _Fatal as fatal:
            self.abandon(fatal)
        except Exception as exc:
            self.abandon(_Fatal(exc, Stage.PROCESSING, None, None, None))

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
                logger.info(
                    "Sink %s asked for backpressure: retrying %d record(s) in %.1fs",
                    type(sink).__name__,
                    len(records),
                    exc.retry_after,
                )
                time.sleep(max(exc.retry_after, 0.0))
                for args in records:
                    if args.__class__ is _RawRecords:
                        self._resend_raw(sink, args)
                    else:
                        sink.add(*args)
            except Exception as exc:
                raise _Fatal(exc, Stage.SINK, None, None, None) from exc
        records.clear()

    def finish(self, payloads: Optional[dict[int, Any]] = None) -> TaskSummary:
        """Flush sinks then the producer (the commit order); return the task's summary."""
        flush_stdout()
        sink_payloads: dict[int, Any] = {}
        if self.error is None and self.emitter is not None:
            try:
                set_delivery_unit(self.unit)
                for node_id, sink in self.sinks.items():
                    self._flush_sink(node_id, sink)
                    if sink.collects_to_driver:
                        sink_payloads[node_id] = sink.drain_for_driver()
                _flush_producer(self.emitter, self.plan)
                if self.txn is not None:
                    try:
                        self.txn.commit()
                    except Exception as exc:
                        raise _Fatal(exc, Stage.PRODUCER, None, None, None) from exc
            except _Fatal as fatal:
                self.abandon(fatal)
                sink_payloads = {}
        return TaskSummary(
            spark_partition=self.spark_partition,
            input_count=self.input_count,
            output_count=self.counter[0],
            skipped=self.skipped,
            collected=self.collected if self.collected and self.error is None else None,
            sink_payloads=sink_payloads or None,
            error=self.error,
        )


def _transaction(plan: PipelinePlan, stage: str, spark_partition: int, bucket: Optional[int]) -> Any:
    from ._eos import TransactionUnit, current_batch_id

    eos = plan.eos
    assert eos is not None
    batch_id = current_batch_id()
    if batch_id is None:
        raise RuntimeError("exactly-once needs the micro-batch id, which this Spark task does not have")
    slot = bucket if bucket is not None else eos.task_slot(spark_partition)
    txid = f"streamspark-{eos.consumer_group}-{stage}-{spark_partition}"
    return TransactionUnit(eos, plan.producer_config, txid, slot, batch_id)


def _spark_partition() -> int:
    from pyspark import TaskContext

    tc = TaskContext.get()
    return tc.partitionId() if tc is not None else 0


#: garbage-collector thresholds of the worker processes. A task keeps many objects alive until
#: it ends (a sink's buffered rows, a state bucket, a window's batch), and with CPython's
#: defaults (700, 10, 10) every full collection walks all of them again: in-process, a task
#: buffering 250k records for the lake sink spent 7.5 µs per record, 3.6 with these. Cycles are
#: still collected, less often.
WORKER_GC_THRESHOLDS = (50_000, 20, 100)


def _task_start(plan: PipelinePlan) -> None:
    """What every task body does first in its worker process: logging, GC thresholds."""
    if plan.loglevel:
        configure_logging(plan.loglevel)
    if gc.get_threshold() != WORKER_GC_THRESHOLDS:
        gc.set_threshold(*WORKER_GC_THRESHOLDS)
    forward_stdout(plan.stdout)  # type: ignore[arg-type]  # a DriverCall when set


def run_task(batches: Iterator[pa.RecordBatch], plan: PipelinePlan) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body of stateless pipelines (the plain path): every record of the task,
    one summary row."""
    return run_fused((source_records(batch.to_pydict()) for batch in batches), plan)


def source_records(columns: dict[str, list[Any]]) -> Iterator[tuple[Any, ...]]:
    """Source rows given as columns (an Arrow batch's ``to_pydict()``) as per-record tuples."""
    return zip(*(columns[name] for name in SOURCE_COLUMNS))


def run_fused(chunks: Iterator[Iterable[tuple[Any, ...]]], plan: PipelinePlan) -> Iterator[pa.RecordBatch]:
    """A stateless pipeline over chunks of source records: inside the source's ``read()`` (the
    fused path: no Arrow batch, no trip through the JVM) or over ``mapInArrow`` batches
    (:func:`run_task`)."""
    _task_start(plan)
    processor = TaskProcessor(plan, _spark_partition())
    for records in chunks:
        if processor.failed:
            continue  # drain the input; the error is reported below
        processor.process(records)
    yield processor.finish().as_batch()


def run_bucket(plan: PipelinePlan, buckets: int, key: tuple[Any, ...], frames: Iterator[Any], group_state: Any) -> Iterator[Any]:
    """``applyInPandasWithState`` body of stateful pipelines: one bucket of message keys.

    The bucket's state (every key's ``State`` of every stream) is one blob in Spark state:
    loaded here, handed to the stateful steps, and written back when the bucket succeeds.
    Records are processed in (partition, offset) order, so each key sees its messages in
    Kafka order. The rows are records (the plain path), packed chunks of records (the source
    packs them per bucket: chunks in (partition, first offset) order), or re-keyed records
    after a group_by.
    """
    import pandas as pd

    from ..state.store import KeyedStateStore

    _task_start(plan)
    parts = list(frames) if frames is not None else []
    frame = pd.concat(parts, ignore_index=True) if parts else None  # none on a timer-only call
    grouped = bool(plan.group_nodes)
    if grouped and key[0] == _SUMMARY_BUCKET:
        # summaries of the pre-shuffle stage pass through to the driver
        for blob in frame["summary"] if frame is not None else ():
            yield pd.DataFrame({k: [v] for k, v in pickle.loads(blob).as_row().items()})
        return
    processor: Optional[TaskProcessor] = None
    try:
        blob = group_state.get[0] if group_state.exists else None
        store = KeyedStateStore.loads(blob, buckets)
        store.tickers = []  # windows closing quiet keys register here while compiling
        processor = TaskProcessor(plan, _spark_partition(), states=store, stage="post" if grouped else "all", bucket=int(key[0]))
        if frame is not None and len(frame):
            frame = frame.sort_values(["partition", "offset"], kind="stable")
            # records of several topics meeting in a merge or join run in timestamp order
            ranks = {name: i for i, name in enumerate(plan.topics)} if plan.time_aligned else None
            if grouped:
                processor.input_count = 0  # counted by the pre-shuffle stage
                rows = [
                    (node_id, pickle.loads(k), pickle.loads(v), ts, pickle.loads(h) if h is not None else None, t, p, o)
                    for node_id, k, v, ts, h, t, p, o in zip(
                        frame["group_node"],
                        frame["gkey"],
                        frame["gvalue"],
                        frame["timestamp"],
                        frame["gheaders"],
                        frame["topic"],
                        frame["partition"],
                        frame["offset"],
                    )
                ]
                processor.process_grouped(rows if ranks is None else in_time_order(rows, ranks, 5, 6, 7, 3))
            else:
                records: Iterable[tuple[Any, ...]] = (
                    _unpacked(frame["records"].tolist())
                    if "records" in frame.columns
                    else source_records({name: frame[name].tolist() for name in SOURCE_COLUMNS})
                )
                processor.process(records if ranks is None else in_time_order(records, ranks))
        if plan.idle_ms is not None:
            processor.run_tickers(store.tickers, int(time.time() * 1000))
        summary = processor.finish()
        if summary.error is None:
            group_state.update((store.dumps(),))
            if plan.idle_ms is not None:
                group_state.setTimeoutDuration(plan.idle_ms)
    except Exception as exc:  # the state blob could not be read or written
        if processor is not None:
            processor.abandon(_Fatal(exc, Stage.STATE, None, None, None))
        summary = TaskSummary(spark_partition=_spark_partition(), error=TaskError.of(exc, Stage.STATE, None, None, None))
    yield pd.DataFrame({k: [v] for k, v in summary.as_row().items()})


def _unpacked(chunks: list[bytes]) -> Iterator[tuple[Any, ...]]:
    """The records of the source's packed chunks, one chunk unpickled at a time."""
    for chunk in chunks:
        yield from pickle.loads(chunk)


_SUMMARY_BUCKET = -1
_GROUPED_ARROW = pa.schema(
    [
        ("_bucket", pa.int32()),
        ("group_node", pa.int64()),
        ("gkey", pa.binary()),
        ("gvalue", pa.binary()),
        ("timestamp", pa.int64()),
        ("gheaders", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("summary", pa.binary()),
    ]
)
GROUPED_SCHEMA = ddl(_GROUPED_ARROW)


def run_pre_shuffle(batches: Iterator[pa.RecordBatch], plan: PipelinePlan, buckets: int) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body before a group_by shuffle: runs everything up to the group_by nodes.

    Yields the re-keyed records (with their bucket) and one summary row in the reserved
    bucket -1, which the next stage passes through to the driver.
    """
    _task_start(plan)
    processor = TaskProcessor(plan, _spark_partition(), stage="pre", buckets=buckets)
    for batch in batches:
        if processor.failed:
            continue
        processor.process(source_records(batch.to_pydict()))
    summary = processor.finish()
    rows = processor.emitter.grouped if processor.emitter is not None and summary.error is None else []
    for start in range(0, len(rows), 10_000):
        chunk = rows[start : start + 10_000]
        columns = list(zip(*chunk))
        yield pa.RecordBatch.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, _GROUPED_ARROW)] + [pa.nulls(len(chunk), pa.binary())],
            schema=_GROUPED_ARROW,
        )
    yield pa.RecordBatch.from_pydict(
        {f.name: [None] for f in _GROUPED_ARROW} | {"_bucket": [_SUMMARY_BUCKET], "summary": [pickle.dumps(summary)]},
        schema=_GROUPED_ARROW,
    )


def _flush_producer(emitter: _Emitter, plan: PipelinePlan) -> None:
    """Wait for every produced message; hand each failed delivery to ``on_producer_error``.

    A failed delivery is reported as the message that was sent (serialized key and value, the
    output topic and partition in its context; no offset), as the reference does not know
    which input produced it either.
    """
    producer = emitter.producer
    if producer is None:
        return
    deadline = time.monotonic() + 120
    while producer.flush(1.0) > 0:
        if time.monotonic() > deadline:
            raise _Fatal(TimeoutError("Kafka producer could not deliver messages within 120s"), Stage.PRODUCER, None, None, None)
    for err, msg in emitter.reports.take():
        from ..kafka.exceptions import KafkaProducerDeliveryError

        key, value, headers = msg.key(), msg.value(), msg.headers()
        timestamp = msg.timestamp()[1]
        exc = KafkaProducerDeliveryError(err, msg.topic(), msg.partition(), key)
        ctx = MessageContext(msg.topic(), msg.partition(), None, len(value or b""), None, key, timestamp, headers)
        if not _skip(
            plan.on_producer_error,
            exc,
            Row(value, key, timestamp, ctx, headers),
            Stage.PRODUCER,
            msg.topic(),
            msg.partition(),
            None,
        ):
            raise _Fatal(exc, Stage.PRODUCER, msg.topic(), msg.partition(), None)
