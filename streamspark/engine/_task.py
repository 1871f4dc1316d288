"""The code that runs inside Spark tasks: deserialize, run the fused pipeline, emit, flush.

A task never lets a record error escape as a Spark failure: it stops at the first
unhandled error and reports it (with topic, partition, offset and the pickled exception)
in its summary row, so the driver can raise the user's own exception with context and
the micro-batch is not committed.
"""

from __future__ import annotations

import functools
import logging
import pickle
import time
import traceback
from typing import Any, Iterator, Optional

import pyarrow as pa

from ..context import set_message_context
from ..core.stream import compose
from ..logging import configure_logging
from ..models.messagecontext import MessageContext
from ..models.rows import RawMessage, Row
from ..sinks.base.exceptions import SinkBackpressureError
from ..sinks.base.sink import BaseSink
from ._plan import PipelinePlan

__all__ = ("run_task", "SUMMARY_SCHEMA")

logger = logging.getLogger("streamspark")

SUMMARY_SCHEMA = (
    "spark_partition int, input_count long, output_count long, skipped long, "
    "collected binary, sink_payloads binary, backpressure binary, error binary"
)
_SUMMARY_ARROW = pa.schema(
    [
        ("spark_partition", pa.int32()),
        ("input_count", pa.int64()),
        ("output_count", pa.int64()),
        ("skipped", pa.int64()),
        ("collected", pa.binary()),
        ("sink_payloads", pa.binary()),
        ("backpressure", pa.binary()),
        ("error", pa.binary()),
    ]
)

# Per worker process: producers by config, started sinks by (run id, node id).
_producers: dict[str, Any] = {}
_sinks: dict[tuple[str, int], BaseSink] = {}


class _Fatal(Exception):
    """An unhandled error with where it happened."""

    def __init__(self, exc: BaseException, stage: str, topic: Optional[str], partition: Optional[int], offset: Optional[int]) -> None:
        super().__init__(str(exc))
        self.exc = exc
        self.stage = stage
        self.topic = topic
        self.partition = partition
        self.offset = offset


def _producer(config: dict[str, Any]) -> Any:
    import json

    from confluent_kafka import Producer

    key = json.dumps(config, sort_keys=True)
    producer = _producers.get(key)
    if producer is None:
        producer = _producers[key] = Producer({"enable.idempotence": True, "linger.ms": 5, **config})
    return producer


def _error_payload(fatal: _Fatal) -> bytes:
    exc = fatal.exc
    pickled_exc: Optional[bytes]
    try:
        pickled_exc = pickle.dumps(exc)
        pickle.loads(pickled_exc)  # only ship what the driver can rebuild
    except Exception:
        pickled_exc = None
    return pickle.dumps(
        {
            "stage": fatal.stage,
            "topic": fatal.topic,
            "partition": fatal.partition,
            "offset": fatal.offset,
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
            "exception": pickled_exc,
        }
    )


class _Emitter:
    """Receives outputs of the compiled pipeline inside a task."""

    def __init__(self, plan: PipelinePlan, sinks: dict[int, BaseSink], topic_enabled: bool, sinks_enabled: Optional[set[int]]) -> None:
        self.plan = plan
        self.sinks = sinks  # id(sink object in the plan) -> started instance
        self.sink_ids = {id(obj): node_id for node_id, obj in self._plan_sinks(plan)}
        self.topic_enabled = topic_enabled
        self.sinks_enabled = sinks_enabled
        self.producer: Any = _producer(plan.producer_config) if topic_enabled else None
        self.delivery_errors: list[tuple[Any, Row]] = []
        self.ctx: MessageContext = MessageContext()
        self.row: Optional[Row] = None

    @staticmethod
    def _plan_sinks(plan: PipelinePlan) -> list[tuple[int, BaseSink]]:
        return [(n.id, n.options["sink"]) for n in plan.sink_nodes()]

    def _fail(self, exc: BaseException, stage: str) -> _Fatal:
        return _Fatal(exc, stage, self.ctx.topic, self.ctx.partition, self.ctx.offset)

    def _delivered(self, ctx: MessageContext, err: Any, msg: Any) -> None:
        if err is not None:
            self.delivery_errors.append((err, Row(None, ctx.key, ctx.timestamp or 0, ctx, ctx.headers)))

    def to_topic(self, topic: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        producer = self.producer
        if producer is None:
            return
        ctx = self.ctx
        try:
            msg = topic.serialize(key=key, value=value, headers=headers, timestamp_ms=timestamp)
        except Exception as exc:
            if not self.plan.on_producer_error(exc, Row(value, key, timestamp, ctx, headers), logger):
                raise self._fail(exc, "producer") from exc
            return
        kwargs: dict[str, Any] = {"on_delivery": functools.partial(self._delivered, ctx)}
        if msg.headers:
            kwargs["headers"] = msg.headers
        if timestamp:
            kwargs["timestamp"] = timestamp
        while True:
            try:
                producer.produce(topic.name, msg.value, msg.key, **kwargs)
                break
            except BufferError:  # the local queue is full: let deliveries drain
                producer.poll(0.5)
        producer.poll(0)

    def to_sink(self, sink: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        node_id = self.sink_ids[id(sink)]
        if self.sinks_enabled is not None and node_id not in self.sinks_enabled:
            return
        ctx = self.ctx
        self.sinks[node_id].add(value, key, timestamp, headers, ctx.topic, ctx.partition, ctx.offset)


def _collector(plan: PipelinePlan, emitter: _Emitter, out: list[Any], counter: list[int], enabled: bool) -> Any:
    if not enabled:
        return lambda v, k, t, h: None
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


def _started_sinks(plan: PipelinePlan) -> dict[int, BaseSink]:
    sinks = {}
    for node_id, obj in _Emitter._plan_sinks(plan):
        cached = _sinks.get((plan.run_id, node_id))
        if cached is None:
            obj.start()
            cached = _sinks[(plan.run_id, node_id)] = obj
        sinks[node_id] = cached
    return sinks


def run_task(batches: Iterator[pa.RecordBatch], plan: PipelinePlan, retry: Optional[dict[int, list[int]]] = None) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: process every input record of this task and yield one summary row.

    :param retry: for a backpressure retry, ``{spark_partition: [sink node ids]}``: only
        those sinks receive records; nothing is produced or collected again.
    """
    from pyspark import TaskContext

    if plan.loglevel:
        configure_logging(plan.loglevel)
    tc = TaskContext.get()
    spark_partition = tc.partitionId() if tc is not None else 0
    sinks_enabled: Optional[set[int]] = None
    if retry is not None:
        sinks_enabled = set(retry.get(spark_partition, ()))
        if not sinks_enabled:
            yield _summary(spark_partition)
            return

    first = retry is None
    collected: list[Any] = []
    counter = [0]
    input_count = 0
    skipped = 0
    error: Optional[bytes] = None
    backpressure: dict[int, float] = {}
    sink_payloads: dict[int, Any] = {}
    sinks: dict[int, BaseSink] = {}
    emitter: Optional[_Emitter] = None
    try:
        sinks = _started_sinks(plan)
        emitter = _Emitter(plan, sinks, topic_enabled=first, sinks_enabled=sinks_enabled)
        leaf = _collector(plan, emitter, collected, counter, enabled=first)
        pushes = {name: compose(root, collect=leaf, emitter=emitter) for name, root in plan.roots.items()}
        on_processed = plan.on_message_processed if first else None
        for batch in batches:
            cols = batch.to_pydict()
            n = batch.num_rows
            input_count += n
            topics_col = cols["topic"]
            for i in range(n):
                tname = topics_col[i]
                part = cols["partition"][i]
                offset = cols["offset"][i]
                raw_headers = cols["headers"][i]
                headers = [(h["key"], h["value"]) for h in raw_headers] if raw_headers else None
                ts = cols["timestamp"][i]
                ts_type = cols["timestamp_type"][i]
                raw_key = cols["key"][i]
                topic = plan.topics[tname]
                try:
                    rows = topic.deserialize(cols["value"][i], raw_key, headers, ts, ts_type)
                except Exception as exc:
                    raw = RawMessage(tname, part, offset, raw_key, cols["value"][i], headers, ts, ts_type)
                    if plan.on_consumer_error(exc, raw, logger):
                        skipped += 1
                        continue
                    raise _Fatal(exc, "consumer", tname, part, offset) from exc
                push = pushes[tname]
                for value, key, timestamp in rows:
                    ctx = MessageContext(key=key, topic=tname, partition=part, offset=offset,
                                         size=0, timestamp=timestamp, headers=headers)
                    emitter.ctx = ctx
                    set_message_context(ctx)
                    try:
                        push(value, key, timestamp, headers)
                    except _Fatal:
                        raise
                    except Exception as exc:
                        if plan.on_processing_error(exc, Row(value, key, timestamp, ctx, headers), logger):
                            skipped += 1
                            continue
                        raise _Fatal(exc, "processing", tname, part, offset) from exc
                if on_processed is not None:
                    on_processed(tname, part, offset)
        # commit order: sinks first, then the producer
        for node_id, sink in sinks.items():
            if sinks_enabled is not None and node_id not in sinks_enabled:
                continue
            try:
                sink.flush()
            except SinkBackpressureError as exc:
                sink.on_paused()
                backpressure[node_id] = exc.retry_after
                continue
            except Exception as exc:
                raise _Fatal(exc, "sink", None, None, None) from exc
            if sink._collect_to_driver:
                sink_payloads[node_id] = sink._drain_for_driver()
        if emitter.producer is not None:
            _flush_producer(emitter, plan)
    except _Fatal as fatal:
        for sink in sinks.values():
            sink.on_paused()
            if sink._collect_to_driver:
                sink._drain_for_driver()
        error = _error_payload(fatal)
    except Exception as exc:  # a failure outside any record (sink setup, producer creation)
        for sink in sinks.values():
            sink.on_paused()
        error = _error_payload(_Fatal(exc, "setup", None, None, None))
    yield _summary(
        spark_partition,
        input_count=input_count,
        output_count=counter[0],
        skipped=skipped,
        collected=pickle.dumps(collected) if collected else None,
        sink_payloads=pickle.dumps(sink_payloads) if sink_payloads else None,
        backpressure=pickle.dumps(backpressure) if backpressure else None,
        error=error,
    )


def _flush_producer(emitter: _Emitter, plan: PipelinePlan) -> None:
    producer = emitter.producer
    if producer is None:
        return
    deadline = time.monotonic() + 120
    while producer.flush(1.0) > 0:
        if time.monotonic() > deadline:
            raise _Fatal(TimeoutError("Kafka producer could not deliver messages within 120s"), "producer", None, None, None)
    for err, row in emitter.delivery_errors:
        from confluent_kafka import KafkaException

        exc = KafkaException(err)
        if not plan.on_producer_error(exc, row, logger):
            raise _Fatal(exc, "producer", row.topic, row.partition, row.offset)


def _summary(spark_partition: int, **fields: Any) -> pa.RecordBatch:
    row = {
        "spark_partition": [spark_partition],
        "input_count": [fields.get("input_count", 0)],
        "output_count": [fields.get("output_count", 0)],
        "skipped": [fields.get("skipped", 0)],
        "collected": [fields.get("collected")],
        "sink_payloads": [fields.get("sink_payloads")],
        "backpressure": [fields.get("backpressure")],
        "error": [fields.get("error")],
    }
    return pa.RecordBatch.from_pydict(row, schema=_SUMMARY_ARROW)
