"""Where a task's outputs go: output topics (through the worker's producer or the unit's
transaction), the group_by shuffle, sinks, and the rows collected for the driver.

The compiled pipeline calls an :class:`Emitter` once per output record; ``flush_producer``
waits for the deliveries at the end of the task and hands failed ones to
``on_producer_error``.
"""

from __future__ import annotations

import json
import logging
import pickle
import time
from collections.abc import Mapping
from typing import Any, Callable, Optional

from ..context import set_message_context
from ..models.messagecontext import MessageContext
from ..models.rows import Row
from ..sinks.base.sink import BaseSink
from ..state.store import scope_key
from ._plan import PipelinePlan
from ._producers import DeliveryReports, new_task_producer
from .bucketing import bucket_of_key
from .strategies import AVRO_OUTPUT_CHUNKS
from .summary import Stage
from .task_failure import TaskFailure, skip_on_error

__all__ = ("Emitter", "output_collector", "flush_producer", "plan_sinks", "task_producer")

logger = logging.getLogger(__name__)

#: produced messages between two polls of the producer's delivery reports
_POLL_EVERY = 1000
#: the most outputs kept for encoding at once (``avro-output-chunks``)
_ENCODE_EVERY = 4096

#: per worker process: producers (with their delivery reports) by config
_producers: dict[str, tuple[Any, DeliveryReports]] = {}


def task_producer(config: dict[str, Any]) -> tuple[Any, DeliveryReports]:
    """The worker process's producer for ``config`` and the collector of its failed deliveries."""
    key = json.dumps(config, sort_keys=True)
    cached = _producers.get(key)
    if cached is None:
        cached = _producers[key] = new_task_producer(config)
    return cached


def plan_sinks(plan: PipelinePlan) -> list[tuple[int, BaseSink]]:
    """``(node id, sink)`` of every sink node of the plan."""
    return [(n.id, n.sink) for n in plan.sink_nodes()]


class Emitter:
    """Receives outputs of the compiled pipeline inside a task."""

    def __init__(self, plan: PipelinePlan, sinks: dict[int, BaseSink], txn: Any = None) -> None:
        self.plan = plan
        #: the exactly-once transaction of this unit, or None (at-least-once)
        self.txn = txn
        self.sinks = sinks  # node id -> started instance
        self.sink_ids = {id(obj): node_id for node_id, obj in plan_sinks(plan)}
        #: what each sink received since its last flush, to feed it again after backpressure
        self.replay: dict[int, list[Any]] = {node_id: [] for node_id in sinks}
        self.producer: Any
        self.reports: DeliveryReports
        self.producer, self.reports = (txn.producer, txn.reports) if txn is not None else task_producer(plan.producer_config)
        #: records re-keyed by a group_by, waiting for the shuffle (pre-shuffle stage only)
        self.grouped: list[tuple[Any, ...]] = []
        #: keep re-keyed records as objects, to be pickled a chunk at a time by the fused
        #: group_by path (``pack_grouped``), instead of a row of pickled fields per record
        self.pack_groups = False
        #: the state buckets of re-keyed records, and their group keys (``PipelinePlan.bucket_labels``)
        self.buckets = 1
        self.bucket_labels: tuple[int, ...] = plan.bucket_labels
        self.ctx: MessageContext = MessageContext()
        self.produced = 0
        #: records whose output's producer error ``on_processing_error`` skipped while kept
        #: outputs were sent (``flush_pending``; otherwise the task counts them)
        self.skipped = 0
        #: the last error of an output that ``on_producer_error`` did not skip (see :meth:`stage_of`)
        self.producer_error: Optional[BaseException] = None
        #: the ``topic_sender`` of each output topic (by object id)
        self._senders: dict[int, Callable[[Any, Any, int, Any], None]] = {}
        #: outputs waiting for their values to be encoded at once (``avro-output-chunks``), and
        #: what sends them: ``flush_pending`` empties them
        self._pending: list[tuple[Callable[[], None], list[tuple[Any, ...]]]] = []

    def stage_of(self, exc: BaseException) -> Stage:
        """The stage an error raised while running a record's steps belongs to: the producer's
        when it is the error of an output ``on_producer_error`` did not skip, else processing."""
        return Stage.PRODUCER if exc is self.producer_error else Stage.PROCESSING

    def _fail(self, exc: BaseException, stage: Stage) -> TaskFailure:
        return TaskFailure(exc, stage, self.ctx.topic, self.ctx.partition, self.ctx.offset)

    def to_topic(self, topic: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        self.topic_sender(topic)(value, key, timestamp, headers)

    def topic_sender(self, topic: Any) -> Callable[[Any, Any, int, Any], None]:
        """``send(value, key, timestamp, headers)`` to ``topic``, made once per topic (compiled
        pipelines call it once per output record): serializes with the topic's serializers,
        produces (waiting while the local queue is full) and, in exactly-once mode, inside this
        unit's transaction. An output that cannot be serialized or produced goes to
        ``on_producer_error``; unless that skips it, the error is raised on to the step that
        sent it, where its record's ``on_processing_error`` gets it, as in the reference
        (:meth:`stage_of` then names the producer)."""
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

        def deliver(skey: Any, svalue: Any, out_headers: Any, timestamp: int) -> None:
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

        def serialize_and_deliver(value: Any, key: Any, timestamp: int, headers: Any, ctx: MessageContext) -> None:
            try:
                skey, svalue, out_headers = serialize(key, value, headers)
                deliver(skey, svalue, out_headers, timestamp)
            except Exception as exc:
                refused(exc, Row(value, key, timestamp, ctx, headers))

        def refused(exc: Exception, row: Row) -> None:
            """An output that could not be serialized or produced: skipped when
            ``on_producer_error`` says so, else raised on for its record's
            ``on_processing_error`` (as the reference does), marked as the producer's."""
            ctx = row.context
            if skip_on_error(on_error, exc, row, Stage.PRODUCER, ctx.topic, ctx.partition, ctx.offset):
                return
            self.producer_error = exc
            raise exc

        encoder = topic.chunk_value_encoder() if AVRO_OUTPUT_CHUNKS.name in self.plan.strategies else None
        if encoder is None:

            def send(value: Any, key: Any, timestamp: int, headers: Any) -> None:
                if txn is not None:
                    if txn.done:
                        return  # an earlier attempt of this batch committed these outputs
                    txn.begin()
                serialize_and_deliver(value, key, timestamp, headers, self.ctx)

            return send

        pending: list[tuple[Any, ...]] = []
        on_processing_error = self.plan.on_processing_error

        def send_pending() -> None:
            """Encode the values kept at once, then produce each output in order (record by
            record, as ``send`` would have, when the encoder refuses the chunk).

            Each output's errors are its own record's, as on the plain path: a value that
            cannot be serialized or produced goes to ``on_producer_error``, then, unless it
            skips it, to ``on_processing_error`` (both under the record's message context); the
            outputs after a skipped one are still produced."""
            taken = pending.copy()
            pending.clear()
            try:
                encoded = encoder.encode([item[0] for item in taken])
            except Exception:  # anything the encoder did not expect: the per-record path reports it
                logger.debug("A chunk of Avro outputs goes record by record", exc_info=True)
                encoded = None
            for i, item in enumerate(taken):
                value, key, timestamp, headers, ctx = item
                try:
                    if encoded is not None and (key is None or key.__class__ is bytes or key.__class__ is str):
                        try:
                            deliver(key, encoded[i], headers or [], timestamp)
                        except Exception as exc:
                            set_message_context(ctx)
                            refused(exc, Row(value, key, timestamp, ctx, headers))
                    else:  # refused by the encoder, or a key the bytes serializer converts (or refuses)
                        set_message_context(ctx)
                        serialize_and_deliver(*item)
                except TaskFailure:
                    raise
                except Exception as exc:
                    set_message_context(ctx)
                    row = Row(value, key, timestamp, ctx, headers)
                    stage = self.stage_of(exc)
                    if not skip_on_error(on_processing_error, exc, row, stage, ctx.topic, ctx.partition, ctx.offset):
                        raise TaskFailure(exc, stage, ctx.topic, ctx.partition, ctx.offset) from exc
                    self.skipped += 1

        self._pending.append((send_pending, pending))

        def send_later(value: Any, key: Any, timestamp: int, headers: Any) -> None:
            if txn is not None:
                if txn.done:
                    return  # an earlier attempt of this batch committed these outputs
                txn.begin()
            if value.__class__ is not dict:  # not encodable: in order, at once
                if pending:
                    send_pending()
                serialize_and_deliver(value, key, timestamp, headers, self.ctx)
                return
            # a copy: a later step (or the next record) may change the dict in place; its
            # values are the schema's primitives, which nothing changes
            pending.append((value.copy(), key, timestamp, headers, self.ctx))
            if len(pending) >= _ENCODE_EVERY:
                send_pending()

        return send_later

    def flush_pending(self) -> None:
        """Encode and produce the outputs kept for encoding at once (``avro-output-chunks``):
        the task calls it after each chunk of input records, before its outputs count as sent.
        A value that cannot be serialized goes to ``on_producer_error`` with its own record's
        context; :class:`TaskFailure` when that does not skip it."""
        for send_pending, pending in self._pending:
            if pending:
                send_pending()

    def to_group(self, node: Any, value: Any, key: Any, timestamp: int, headers: Any) -> None:
        ctx = self.ctx
        try:
            bucket = bucket_of_key(scope_key(key), self.buckets)
            if self.bucket_labels:
                bucket = self.bucket_labels[bucket]
            if self.pack_groups:
                self.grouped.append((bucket, node.id, key, value, timestamp, headers, ctx.topic, ctx.partition, ctx.offset))
                return
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
        self.sinks[node_id].add(*args)
        # only what the sink took is fed again after backpressure (a record it refused was
        # handled as a processing error)
        self.replay[node_id].append(args)


def output_collector(plan: PipelinePlan, emitter: Emitter, out: list[Any], counter: list[int]) -> Any:
    if not plan.collect:

        def count_only(v: Any, k: Any, t: int, h: Any) -> None:
            counter[0] += 1

        return count_only
    if plan.metadata:

        def collect_meta(v: Any, k: Any, t: int, h: Any) -> None:
            counter[0] += 1
            ctx = emitter.ctx
            # as the reference: the metadata first, then the value's fields
            out.append(
                {
                    "_key": k,
                    "_timestamp": t,
                    "_headers": h,
                    "_topic": ctx.topic,
                    "_partition": ctx.partition,
                    "_offset": ctx.offset,
                    **(v if isinstance(v, Mapping) else {"_value": v}),
                }
            )

        return collect_meta

    def collect(v: Any, k: Any, t: int, h: Any) -> None:
        counter[0] += 1
        out.append(v if isinstance(v, Mapping) else {"_value": v})  # run() returns dicts

    return collect


def flush_producer(producer: Any, reports: DeliveryReports, plan: PipelinePlan) -> None:
    """Wait for every produced message; hand each failed delivery to ``on_producer_error``.

    A failed delivery is reported as the message that was sent (serialized key and value, the
    output topic and partition in its context; no offset), as the reference does not know
    which input produced it either.
    """
    if producer is None:
        return
    deadline = time.monotonic() + 120
    while producer.flush(1.0) > 0:
        if time.monotonic() > deadline:
            raise TaskFailure(
                TimeoutError("Kafka producer could not deliver messages within 120s"), Stage.PRODUCER, None, None, None
            )
    for err, msg in reports.take():
        from ..kafka.exceptions import KafkaProducerDeliveryError

        key, value, headers = msg.key(), msg.value(), msg.headers()
        timestamp = msg.timestamp()[1]
        exc = KafkaProducerDeliveryError(err, msg.topic(), msg.partition(), key)
        ctx = MessageContext(msg.topic(), msg.partition(), None, len(value or b""), None, key, timestamp, headers)
        if not skip_on_error(
            plan.on_producer_error,
            exc,
            Row(value, key, timestamp, ctx, headers),
            Stage.PRODUCER,
            msg.topic(),
            msg.partition(),
            None,
        ):
            raise TaskFailure(exc, Stage.PRODUCER, msg.topic(), msg.partition(), None)
