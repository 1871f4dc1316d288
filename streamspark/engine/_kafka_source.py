"""A Spark streaming source over confluent-kafka (a PySpark Python Data Source).

Offsets: ``{"<topic>": {"<partition>": <next offset to read>}}``. They live in the Spark
checkpoint, so a restarted query re-reads exactly the range of the last uncommitted
micro-batch. On the very first start the consumer group's committed offsets are used when
present, otherwise ``auto_offset_reset``. After each committed micro-batch the end offsets
are also committed to the Kafka consumer group, so lag tools work.

Planning (``initialOffset``, ``latestOffset``, ``commit``) runs in one long-lived Python
process; ``read`` runs in Spark's Python workers, which reuse one consumer per process.

What ``read`` emits depends on the pipeline (set by the query runner):

- a stateless pipeline (a fused plan, see :func:`query_source`): the pipeline runs right there,
  one summary row per task;
- a pipeline with a group_by (a fused plan and ``group_by_buckets``): the steps before the
  group_by run right there, and the re-keyed records are packed per (bucket of the new key,
  chunk) into one pickled row (:data:`PACKED_GROUPED_SCHEMA`), with the task's summary in bucket -1;
- a stateful one without a group_by (``packed_buckets``): the records, already assigned to their
  state bucket (:func:`bucket_of_key`, or :func:`bucket_of_partition` for windows closing by
  partition), packed per (bucket, chunk) into one pickled row (:data:`PACKED_SCHEMA`), so the
  shuffle to the stateful stage moves a few hundred rows instead of a row per record; with
  buckets by partition number and ``ranges_in_state``, a row per offset range naming it
  (:class:`RangeRef`), whose records the state bucket reads itself (:class:`RangeReader`);
- otherwise: a row per record (:data:`SOURCE_SCHEMA`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import pickle
import time
import uuid
import zlib
from typing import Any, Iterator, NamedTuple, Optional, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from ._arrow import ddl
from .count_budget import read_budget
from .bucketing import bucket_of_key, bucket_of_partition

__all__ = (
    "KafkaDataSource",
    "SourcePrivate",
    "SOURCE_SCHEMA",
    "SOURCE_COLUMNS",
    "ARROW_SCHEMA",
    "PACKED_SCHEMA",
    "PACKED_GROUPED_ARROW",
    "PACKED_GROUPED_SCHEMA",
    "source_options",
    "split_budget",
    "fused_group_by_options",
    "query_source",
    "packed_options",
    "bucket_of_key",
    "bucket_of_partition",
    "plan_tasks",
    "RangeRef",
    "RangeReader",
)

logger = logging.getLogger(__name__)

SOURCE_NAME = "streamspark_kafka"
ARROW_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.int64()),
        ("timestamp_type", pa.int32()),
        ("key", pa.binary()),
        ("value", pa.binary()),
        # pickled [(name, value), ...]: a nested Arrow type costs ~2x more to pass through the JVM
        ("headers", pa.binary()),
    ]
)
SOURCE_SCHEMA = ddl(ARROW_SCHEMA)
#: the order of the per-record tuples handed to tasks (see ``_read_records``)
SOURCE_COLUMNS = tuple(ARROW_SCHEMA.names)

_ROWS_PER_ARROW_BATCH = 20_000

#: the packed rows of a stateful pipeline's source: the state bucket (a bigint, the type of the
#: Spark expression that assigned buckets before, so existing checkpoints keep their state
#: key), where the chunk starts (the order in which a bucket runs its chunks), and the chunk's
#: records as a pickled list of tuples in ``SOURCE_COLUMNS`` order (headers unpickled)
PACKED_ARROW = pa.schema([("_bucket", pa.int64()), ("partition", pa.int32()), ("offset", pa.int64()), ("records", pa.binary())])
PACKED_SCHEMA = ddl(PACKED_ARROW)


def _packed_batch(
    groups: Sequence[int], partitions: Sequence[int], offsets: Sequence[int], records: Sequence[bytes]
) -> pa.RecordBatch:
    """Packed rows (:data:`PACKED_ARROW`), a row per index of the four columns."""
    return pa.RecordBatch.from_arrays(
        [
            pa.array(groups, pa.int64()),
            pa.array(partitions, pa.int32()),
            pa.array(offsets, pa.int64()),
            pa.array(records, pa.binary()),
        ],
        schema=PACKED_ARROW,
    )


#: the packed rows of a fused group_by (see :func:`fused_group_by_options`): the bucket of the
#: new keys (an int, the type the plain path's pre-shuffle stage gives it, so a checkpoint
#: carries on from one path to the other), where the chunk's source records start, and its
#: re-keyed records pickled as a list of ``(group node id, key, value, timestamp, headers,
#: topic, partition, offset)``; bucket -1 carries the pickled summary of the source task
PACKED_GROUPED_ARROW = pa.schema(
    [("_bucket", pa.int32()), ("partition", pa.int32()), ("offset", pa.int64()), ("records", pa.binary())]
)
PACKED_GROUPED_SCHEMA = ddl(PACKED_GROUPED_ARROW)


def source_options(
    topics: list[str],
    auto_offset_reset: str,
    max_records_per_partition: int,
    request_timeout: float,
    min_records_per_task: int = 20_000,
    parallelism: int = 1,
    aligned_topics: Sequence[str] = (),
    min_batch_interval: float = 0.0,
    max_records_per_batch: int = 0,
    task_per_core: bool = True,
    count_budget_file: Optional[str] = None,
) -> dict[str, str]:
    """Options for ``spark.readStream.format(...)`` of a :func:`query_source` class. Options are
    part of the query plan (``explain()``, the Spark UI, event logs): nothing secret goes here.

    :param parallelism: the cores Spark runs tasks on; a micro-batch with fewer non-empty
        partitions than that splits their offset ranges (in pieces of at least
        ``min_records_per_task``) so that every core gets a task.
    :param aligned_topics: topics whose records meet in timestamp order (a ``concat`` or a
        join): a micro-batch that caps one of their partitions ends all of them at a common
        Kafka timestamp (see :meth:`_KafkaStreamReader.latestOffset`); empty: no such cut.
    :param min_batch_interval: seconds from one micro-batch to the next while no partition has
        more than a micro-batch's records waiting: new records are held back until then
        (``engine/pacing.py``); 0: a micro-batch as soon as records arrive.
    :param max_records_per_batch: the most records a micro-batch takes from all partitions
        together, shared out by :func:`split_budget`; 0: no such bound.
    :param task_per_core: a micro-batch over more partitions than cores is read by a task per
        core (:func:`plan_tasks`); False: by a task per partition (the plain path; fewer
        partitions than cores are split either way).
    :param count_budget_file: during ``app.run(count=N)``: a file (on the driver's host) with
        the most records the next micro-batch takes in all (``engine/count_budget.py``).
    """
    options = {
        "topics": json.dumps(topics),
        "auto_offset_reset": auto_offset_reset,
        "max_records_per_partition": str(max_records_per_partition),
        "request_timeout": str(request_timeout),
        "min_records_per_task": str(min_records_per_task),
        "parallelism": str(parallelism),
    }
    if aligned_topics:
        options["aligned_topics"] = json.dumps(sorted(aligned_topics))
    if min_batch_interval > 0:
        options["min_batch_interval"] = str(min_batch_interval)
    if max_records_per_batch > 0:
        options["max_records_per_batch"] = str(max_records_per_batch)
    if not task_per_core:
        options["task_per_core"] = "false"
    if count_budget_file:
        options["count_budget_file"] = count_budget_file
    return options


def split_budget(available: Sequence[int], budget: int) -> list[int]:
    """How many of each partition's ``available`` records a micro-batch takes when it takes
    at most ``budget`` in all: every partition an equal share, and the shares that partitions
    with fewer records leave go to the others (so a partition with a small backlog is read to
    its end, and the large ones split the rest evenly). Every record of the budget is used.

    >>> split_budget([10, 500, 300], 1000)
    [10, 500, 300]
    >>> split_budget([10, 500, 300], 400)
    [10, 195, 195]
    >>> split_budget([7, 7, 7], 2)
    [0, 1, 1]
    """
    if sum(available) <= budget:
        return list(available)
    taken = [0] * len(available)
    left = budget
    order = sorted(range(len(available)), key=lambda i: available[i])
    for rank, i in enumerate(order):
        # the partitions still to share are this one and the larger ones after it: the last
        # takes what is left, which its backlog covers (the budget is below the records waiting)
        taken[i] = min(available[i], left // (len(order) - rank))
        left -= taken[i]
    return taken


class KafkaSourceError(RuntimeError):
    """The Kafka source cannot plan or read (unreachable broker, missing topic, ...)."""


def _new_consumer(config: dict[str, Any]) -> Any:
    from confluent_kafka import Consumer

    return Consumer(
        {
            **config,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": False,
        }
    )


# One consumer per (Python worker process, configuration), reused across micro-batches.
_worker_consumers: dict[str, Any] = {}


def _worker_consumer(config_json: str) -> Any:
    consumer = _worker_consumers.get(config_json)
    if consumer is None:
        consumer = _worker_consumers[config_json] = _new_consumer(json.loads(config_json))
    return consumer


@contextlib.contextmanager
def _borrowed_consumer(config_json: str) -> Iterator[Any]:
    """The worker's consumer of ``config_json``, unassigned when the block ends (one that cannot
    be unassigned is dropped: the next read makes a new one)."""
    consumer = _worker_consumer(config_json)
    try:
        yield consumer
    finally:
        try:
            consumer.unassign()
        except Exception:
            _worker_consumers.pop(config_json, None)


class _KafkaStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict[str, str], private: "SourcePrivate") -> None:
        self._config_json = private.kafka_config_json
        self._config = json.loads(self._config_json)
        self._topics: list[str] = json.loads(options["topics"])
        self._reset = options.get("auto_offset_reset", "latest")
        self._max_per_partition = int(options.get("max_records_per_partition", "100000"))
        self._max_per_batch = int(options.get("max_records_per_batch", "0"))
        self._count_budget_file = options.get("count_budget_file")
        self._timeout = float(options.get("request_timeout", "30"))
        self._min_per_task = int(options.get("min_records_per_task", "20000"))
        self._parallelism = int(options.get("parallelism", "1"))
        self._task_per_core = options.get("task_per_core", "true") == "true"
        #: a stateless pipeline to run inside read() (see :class:`SourcePrivate`)
        self._private = private
        #: emit packed rows per state bucket (see the module docstring): the bucket count, and
        #: whether buckets follow Kafka partitions rather than message keys
        self._packed: Optional[int] = int(options["packed_buckets"]) if "packed_buckets" in options else None
        #: with a fused plan: run the steps before its group_by and pack the re-keyed records
        #: into this many buckets (see :func:`fused_group_by_options`)
        self._group_by_buckets: Optional[int] = int(options["group_by_buckets"]) if "group_by_buckets" in options else None
        self._bucket_by_partition = options.get("bucket_by") in ("partition", "partition_number")
        #: bucket a partition by its number alone (a plan with repartition topics)
        self._bucket_by_number = options.get("bucket_by") == "partition_number"
        #: the state buckets read their partitions' records (``RangeRef`` rows, see :func:`packed_options`)
        self._ranges_in_state = options.get("ranges_in_state") == "true"
        #: the end bucket of each shuffle partition: every task emits an empty row for each
        #: (see ``ProducerFlush``)
        self._end_buckets: list[int] = json.loads(options.get("end_buckets", "[]"))
        #: the group key of each state bucket (``PipelinePlan.bucket_labels``); none: the bucket numbers
        self._bucket_labels: list[int] = json.loads(options.get("bucket_labels", "[]"))
        #: topics whose records meet in timestamp order: their batches end at a common time
        self._aligned: frozenset[str] = frozenset(json.loads(options.get("aligned_topics", "[]")))
        #: see ``source_options``; when the last micro-batch with records was planned
        self._min_interval = float(options.get("min_batch_interval", "0"))
        self._last_planned: Optional[float] = None
        #: the last micro-batch planned left records of a partition for the next one
        self._catching_up = False
        self._consumer: Any = None

    # --- planning (one long-lived process) ------------------------------------------
    @property
    def consumer(self) -> Any:
        if self._consumer is None:
            self._consumer = _new_consumer(self._config)
        return self._consumer

    def _start_call(self) -> None:
        """A planning call (initialOffset, latestOffset) has ``request_timeout`` in all to get
        its answers from the broker."""
        self._deadline = time.monotonic() + self._timeout

    def _remaining(self) -> float:
        return max(0.1, getattr(self, "_deadline", time.monotonic() + self._timeout) - time.monotonic())

    def _unreachable(self, exc: BaseException) -> "KafkaSourceError":
        return KafkaSourceError(
            f"Kafka broker {self._config.get('bootstrap.servers')!r} did not answer within {self._timeout}s: {exc}"
        )

    def _partitions(self) -> dict[str, list[int]]:
        from confluent_kafka import KafkaException

        try:
            meta = self.consumer.list_topics(timeout=self._remaining())
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        result = {}
        for topic in self._topics:
            tmeta = meta.topics.get(topic)
            if tmeta is None or tmeta.error is not None or not tmeta.partitions:
                raise KafkaSourceError(f'Topic "{topic}" does not exist on the broker')
            result[topic] = sorted(tmeta.partitions)
        return result

    def _watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import KafkaException, TopicPartition

        try:
            return self.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=self._remaining(), cached=False)
        except KafkaException as exc:
            raise self._unreachable(exc) from exc

    def _start_offset(self, topic: str, partition: int, committed: Optional[int]) -> int:
        low, high = self._watermarks(topic, partition)
        if committed is not None and committed >= 0:
            return min(max(committed, low), high)
        if self._reset in ("earliest", "smallest", "beginning"):
            return low
        if self._reset in ("latest", "largest", "end"):
            return high
        raise KafkaSourceError(f"No committed offset for {topic}[{partition}] and auto_offset_reset={self._reset!r}")

    def initialOffset(self) -> dict:
        from confluent_kafka import TopicPartition

        self._start_call()
        parts = self._partitions()
        tps = [TopicPartition(t, p) for t, ps in parts.items() for p in ps]
        committed = {(tp.topic, tp.partition): tp.offset for tp in self.consumer.committed(tps, timeout=self._remaining())}
        offsets: dict[str, dict[str, int]] = {}
        for topic, ps in parts.items():
            offsets[topic] = {str(p): self._start_offset(topic, p, committed.get((topic, p))) for p in ps}
        logger.info("Kafka source starts at %s", offsets)
        return offsets

    def latestOffset(self, start: dict, limit: Any) -> dict:
        """The end of the next micro-batch: at most the cap's count of records per partition,
        and at most ``max_records_per_batch`` in all (shared out by :func:`split_budget`).

        For topics whose records meet in timestamp order (``aligned_topics``), a partition
        capped by count would otherwise run ahead in time of the others. So when any of their
        partitions is capped, let T be the smallest Kafka timestamp among the last records the
        capped partitions include: every partition of those topics then ends before its first
        record stamped after T (never below its start, never beyond its cap), and the
        partitions whose last record defines T keep their capped range, so every batch moves on.

        With ``min_batch_interval``, new records wait (the start offsets are returned: Spark
        then runs no micro-batch) until that long after the last micro-batch with records was
        planned, unless a partition has more records waiting than one micro-batch takes or the
        last micro-batch left records behind (a backlog is read at once, to its end).
        """
        from pyspark.sql.streaming.datasource import ReadMaxRows

        cap = self._max_per_partition
        if isinstance(limit, ReadMaxRows):
            cap = min(cap, int(limit.max_rows))
        self._start_call()
        parts = self._partitions()
        end: dict[str, dict[str, int]] = {}
        begins: dict[tuple[str, int], int] = {}
        highs: dict[tuple[str, int], int] = {}
        for topic, ps in parts.items():
            known = start.get(topic, {})
            end[topic] = {}
            for p in ps:
                low, high = self._watermarks(topic, p)
                begin = known.get(str(p))
                if begin is None:  # a partition added while running: read it from its start
                    begin = low
                begin = int(begin)
                end[topic][str(p)] = max(begin, min(high, begin + cap))
                begins[(topic, p)] = begin
                highs[(topic, p)] = high
        counted = read_budget(self._count_budget_file) if self._count_budget_file else None
        if self._max_per_batch > 0 or counted is not None:
            ranges = list(begins)
            available = [end[t][str(p)] - begins[(t, p)] for t, p in ranges]
            budget = min(b for b in (self._max_per_batch, counted) if b)
            if (self._max_per_batch > 0 and counted is None) or self._aligned:
                # at least a record of every partition with records waiting: none is starved,
                # and an aligned cut sees every partition's time (a run with a count takes
                # just its budget: it stops once it has its outputs)
                budget = max(budget, sum(1 for a in available if a > 0))
            shares = split_budget(available, budget)
            for (topic, p), share in zip(ranges, shares):
                end[topic][str(p)] = begins[(topic, p)] + share
        capped: list[tuple[str, int, int, int]] = []
        backlog = has_records = False
        for (topic, p), begin in begins.items():
            stop = end[topic][str(p)]
            has_records = has_records or stop > begin
            backlog = backlog or stop < highs[(topic, p)]
            if stop < highs[(topic, p)] and topic in self._aligned:
                capped.append((topic, p, begin, stop))
        now = time.monotonic()
        if has_records and not backlog and not self._catching_up and self._held_back(now):
            return {topic: dict(offsets) for topic, offsets in start.items()}
        if capped:
            self._cut_at_common_time(end, begins, capped)
        if has_records:
            self._last_planned = now
            self._catching_up = backlog
        return end

    def _held_back(self, now: float) -> bool:
        """True while new records wait for ``min_batch_interval`` to pass since the last
        micro-batch with records was planned (never before the first one)."""
        return self._min_interval > 0 and self._last_planned is not None and now - self._last_planned < self._min_interval

    def _cut_at_common_time(
        self,
        end: dict[str, dict[str, int]],
        begins: dict[tuple[str, int], int],
        capped: list[tuple[str, int, int, int]],
    ) -> None:
        """Ends the aligned topics' partitions in ``end`` at a common Kafka timestamp (see
        :meth:`latestOffset`); ``capped``: the aligned partitions' capped ranges."""
        from confluent_kafka import KafkaException, TopicPartition

        stamps = self._last_timestamps(capped)
        if not stamps:
            return
        limit = min(stamps.values())
        keep = {tp for tp, stamp in stamps.items() if stamp == limit}
        queries = [
            TopicPartition(topic, p, limit + 1)
            for (topic, p), begin in begins.items()
            if topic in self._aligned and (topic, p) not in keep and end[topic][str(p)] > begin
        ]
        if not queries:
            return
        try:
            found = self.consumer.offsets_for_times(queries, timeout=self._remaining())
        except KafkaException as exc:
            raise self._unreachable(exc) from exc
        for tp in found:
            if tp.error is not None or tp.offset < 0:  # no record stamped after T: keep the cap
                continue
            key = str(tp.partition)
            end[tp.topic][key] = max(begins[(tp.topic, tp.partition)], min(end[tp.topic][key], tp.offset))

    def _last_timestamps(self, ranges: list[tuple[str, int, int, int]]) -> dict[tuple[str, int], int]:
        """The Kafka timestamp of the last record of each range ``(topic, partition, begin,
        stop)``, read with the planning consumer. A range whose last offsets hold no record
        (transaction markers, compaction) is looked at further back; one with no record found
        is left out."""
        from confluent_kafka import TopicPartition

        found: dict[tuple[str, int], int] = {}
        pending = {(topic, p): (begin, stop) for topic, p, begin, stop in ranges}
        consumer = self.consumer
        try:
            for lookback in (1, 64):
                if not pending:
                    break
                consumer.assign([TopicPartition(t, p, max(b, s - lookback)) for (t, p), (b, s) in pending.items()])
                done: set[tuple[str, int]] = set()
                deadline = time.monotonic() + self._remaining()
                while len(done) < len(pending) and time.monotonic() < deadline:
                    msgs = consumer.consume(num_messages=1000, timeout=min(0.5, self._remaining()))
                    for msg in msgs:
                        tp = (msg.topic(), msg.partition())
                        if msg.error() is not None or tp not in pending or tp in done:
                            continue
                        stop = pending[tp][1]
                        if msg.offset() < stop:
                            stamp = msg.timestamp()[1]
                            if stamp >= 0:
                                found[tp] = stamp
                        if msg.offset() >= stop - 1:
                            done.add(tp)
                    if not msgs:  # markers at the end of a range: the position moves past them
                        for tp_pos in consumer.position([TopicPartition(t, p) for t, p in pending if (t, p) not in done]):
                            if tp_pos.offset >= pending[(tp_pos.topic, tp_pos.partition)][1]:
                                done.add((tp_pos.topic, tp_pos.partition))
                pending = {tp: rng for tp, rng in pending.items() if tp not in found and rng[1] - rng[0] > lookback}
        finally:
            consumer.unassign()
        return found

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        """The micro-batch's tasks; each ``InputPartition`` holds a tuple of offset ranges
        ``(topic, partition, first, stop)``, read one after another (:func:`plan_tasks`)."""
        ranges = []
        for topic, ends in end.items():
            starts = start.get(topic, {})
            for p, stop in ends.items():
                begin = int(starts.get(p, stop))
                if int(stop) > begin:
                    ranges.append((topic, int(p), begin, int(stop)))
        tasks = plan_tasks(ranges, self._parallelism, self._min_per_task, per_core=self._task_per_core)
        return [InputPartition(task) for task in tasks]

    def commit(self, end: dict) -> None:
        from confluent_kafka import TopicPartition

        offsets = [TopicPartition(t, int(p), int(o)) for t, ps in end.items() for p, o in ps.items()]
        if not offsets:
            return
        try:
            self.consumer.commit(offsets=offsets, asynchronous=False)
        except Exception as exc:  # lag visibility only; the Spark checkpoint is authoritative
            logger.warning("Could not commit consumer-group offsets to Kafka: %s", exc)

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    # --- reading (Spark Python workers) ---------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if self._private.fused_plan is not None:
            # stateless pipelines run right here: records never leave this Python worker
            from .task_entry import run_fused, run_fused_pre_shuffle

            records = self._read_records(partition, pickled_headers=False)
            if self._group_by_buckets is not None:
                # so do the steps before a group_by; the shuffle gets packed re-keyed records
                yield from run_fused_pre_shuffle(records, _fused_plan(self._private), self._group_by_buckets)
            else:
                yield from run_fused(records, _fused_plan(self._private))
            return
        if self._packed is not None:
            yield from self._read_packed(partition, self._packed)
            return
        for rows in self._read_records(partition, pickled_headers=True):
            yield pa.RecordBatch.from_arrays(
                [pa.array(column, type=field.type) for column, field in zip(zip(*rows), ARROW_SCHEMA)],
                schema=ARROW_SCHEMA,
            )

    def _read_packed(self, partition: InputPartition, buckets: int) -> Iterator[pa.RecordBatch]:
        """One Arrow batch per chunk of records: a row per state bucket present in the chunk;
        with ``ranges_in_state``, one batch of a row per offset range instead (no record read).
        Then a row for each end bucket."""
        if self._ranges_in_state:
            yield self._range_refs(partition, buckets)
        else:
            yield from self._packed_chunks(partition, buckets)
        if self._end_buckets:
            ends = len(self._end_buckets)
            yield _packed_batch(self._end_buckets, [-1] * ends, [-1] * ends, [b""] * ends)

    def _packed_chunks(self, partition: InputPartition, buckets: int) -> Iterator[pa.RecordBatch]:
        for rows in self._read_records(partition, pickled_headers=False):
            part = rows[0][1]  # a chunk holds one range's records
            groups: dict[int, list[tuple[Any, ...]]]
            if self._bucket_by_partition:
                groups = {bucket_of_partition(None if self._bucket_by_number else rows[0][0], part, buckets): rows}
            else:
                groups = {}
                crc32 = zlib.crc32
                for row in rows:  # bucket_of_key, inlined (once per record)
                    key = row[5]
                    bucket = crc32(key) % buckets if key is not None else 0
                    group = groups.get(bucket)
                    if group is None:
                        groups[bucket] = [row]
                    else:
                        group.append(row)
            chunks = list(groups.values())
            yield _packed_batch(
                self._labelled(list(groups)),
                [part] * len(chunks),
                [chunk[0][2] for chunk in chunks],
                [pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL) for chunk in chunks],
            )

    def _range_refs(self, partition: InputPartition, buckets: int) -> pa.RecordBatch:
        """A packed row per offset range of the task, naming the range (:class:`RangeRef`)
        instead of holding its records: the state bucket of its partition reads them."""
        ranges = list(partition.value)
        return _packed_batch(
            self._labelled([bucket_of_partition(None if self._bucket_by_number else t, p, buckets) for t, p, _, _ in ranges]),
            [part for _, part, _, _ in ranges],
            [begin for _, _, begin, _ in ranges],
            [pickle.dumps(RangeRef(*r), protocol=pickle.HIGHEST_PROTOCOL) for r in ranges],
        )

    def _labelled(self, buckets: list[int]) -> list[int]:
        """The group keys of state buckets (their labels, when the checkpoint has them)."""
        labels = self._bucket_labels
        return [labels[bucket] for bucket in buckets] if labels else buckets

    def _read_records(self, partition: InputPartition, pickled_headers: bool) -> Iterator[list[tuple[Any, ...]]]:
        """The task's records, range after range, ``_ROWS_PER_ARROW_BATCH`` at a time (a chunk
        never spans two ranges), each a tuple in ``ARROW_SCHEMA`` order (topic, partition,
        offset, timestamp, timestamp type, key, value, headers)."""
        with _borrowed_consumer(self._config_json) as consumer:
            for topic, part, begin, stop in partition.value:
                yield from read_range(consumer, topic, part, begin, stop, pickled_headers, self._timeout)


class RangeRef(NamedTuple):
    """A packed chunk that names its records instead of holding them: one offset range of a
    Kafka partition, which the state bucket reads itself (the ``state-reads-source`` fast path:
    the records then cross no shuffle, see :func:`packed_options`).

    >>> pickle.loads(pickle.dumps(RangeRef("readings", 2, 100, 250)))
    RangeRef(topic='readings', partition=2, begin=100, stop=250)
    """

    topic: str
    partition: int
    begin: int
    stop: int


@dataclasses.dataclass(frozen=True)
class RangeReader:
    """Reads the records of :class:`RangeRef` chunks inside a state bucket, with the source's
    Kafka settings (credentials: kept out of the repr) and its ``request_timeout``.

    >>> "s3cret" in repr(RangeReader('{"sasl.password": "s3cret"}', 30.0))
    False
    """

    kafka_config_json: str = dataclasses.field(repr=False)
    timeout: float

    def chunks(self, ref: RangeRef) -> list[list[tuple[Any, ...]]]:
        """The range's records, in offset order, as the source reads them (``ARROW_SCHEMA``
        order, headers not pickled), in the chunks of :func:`read_range`.

        The whole range is read, and the consumer unassigned, before the records are given: a
        consumer left assigned while the bucket processes the records keeps fetching past
        them, and a broker that answers a fetch at once when it has nothing (the embedded test
        broker) makes that a busy loop of both (W2 on 2 cores: every call of the bucket about
        three times as slow)."""
        from confluent_kafka import KafkaException

        try:
            with _borrowed_consumer(self.kafka_config_json) as consumer:
                return list(read_range(consumer, ref.topic, ref.partition, ref.begin, ref.stop, False, self.timeout))
        except KafkaException as exc:
            raise KafkaSourceError(f"Reading {ref.topic}[{ref.partition}] from offset {ref.begin} failed: {exc}") from exc


def read_range(
    consumer: Any, topic: str, part: int, begin: int, stop: int, pickled_headers: bool, timeout: float
) -> Iterator[list[tuple[Any, ...]]]:
    """The records of ``topic[part]`` from ``begin`` to ``stop`` (exclusive), as tuples in
    ``ARROW_SCHEMA`` order, in chunks that end once they hold ``_ROWS_PER_ARROW_BATCH`` records
    (a chunk can hold up to a consume call's 10,000 more); a gap (control records, compaction)
    is skipped, and no progress within ``timeout`` seconds is a :class:`KafkaSourceError`."""
    from confluent_kafka import KafkaError, KafkaException, TopicPartition

    consumer.assign([TopicPartition(topic, part, begin)])
    rows: list[tuple[Any, ...]] = []
    append = rows.append
    position = begin
    last_progress = time.monotonic()
    while position < stop:
        msgs = consumer.consume(num_messages=min(stop - position, 10_000), timeout=0.5)
        if not msgs:
            # control records (transactions) and compaction leave gaps: ask the position
            pos = consumer.position([TopicPartition(topic, part)])[0].offset
            if pos >= stop:
                break
            if time.monotonic() - last_progress > timeout:
                raise KafkaSourceError(
                    f"No data from {topic}[{part}] at offset {position} (planned up to {stop}) within request_timeout={timeout}s"
                )
            continue
        last_progress = time.monotonic()
        for msg in msgs:
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001 (librdkafka's public code name)
                    continue
                raise KafkaException(err)
            offset = msg.offset()
            if offset >= stop:
                position = stop
                break
            position = offset + 1
            ts_type, ts = msg.timestamp()
            hdrs = msg.headers()
            if hdrs and pickled_headers:
                hdrs = pickle.dumps(hdrs, protocol=pickle.HIGHEST_PROTOCOL)
            append((topic, part, offset, ts, ts_type, msg.key(), msg.value(), hdrs or None))
        if len(rows) >= _ROWS_PER_ARROW_BATCH:
            yield rows
            rows = []
            append = rows.append
            # the caller's time with the chunk (a state bucket processing it) is no broker silence
            last_progress = time.monotonic()
    if rows:
        yield rows


#: a small micro-batch (a steady trickle) gets a Spark task per this many records, at most
#: one per core (see :func:`plan_tasks`)
SMALL_TASK_RECORDS = 5_000

#: a micro-batch over more partitions than cores gets a task per core, each of about this many
#: records at most (more records: as many tasks again per core, up to a task per partition; see
#: :func:`plan_tasks`)
MAX_TASK_RECORDS = 500_000

Range = tuple[str, int, int, int]


def plan_tasks(ranges: list[Range], parallelism: int, min_per_task: int, per_core: bool = True) -> list[tuple[Range, ...]]:
    """Spark tasks for a micro-batch's non-empty offset ranges ``(topic, partition, first, stop)``.

    - Fewer ranges than cores: ranges are split so that every core gets a task, in pieces of at
      least ``min_per_task`` records (each piece is a fetch of its own, so no more pieces).
    - More ranges than cores (with ``per_core``): a task per core, each reading its share of
      the ranges one after another, balanced by records: a task per
      :data:`SMALL_TASK_RECORDS` records (at most one per core) for a small batch of at most
      ``parallelism * min_per_task`` records, as under a steady trickle; otherwise one per
      core, or as many again per core as bring an even share down to
      :data:`MAX_TASK_RECORDS`, but never more tasks than ranges (rounded up to a multiple of
      the cores). Whole ranges go to the lightest task, largest first; where that leaves a
      task more than ``min_per_task`` records over an even share, the ranges are dealt out in
      order instead, and a range that crosses a task's share is cut there. A Spark task of
      the source costs Spark ~50 ms of its own work here (scheduling, the Python worker's
      round trips), and its end waits for its deliveries: a task per partition on fewer cores
      than partitions ran in waves, each task of the first wave waiting for its deliveries
      while the partitions of the next one waited.
    - More ranges than cores without ``per_core`` (the plain path): a task per range.

    The result depends only on the arguments, so a replayed micro-batch gets the same tasks.

    >>> plan_tasks([("t", 0, 0, 5), ("t", 1, 0, 3), ("t", 2, 0, 4)], parallelism=2, min_per_task=100)
    [(('t', 0, 0, 5), ('t', 1, 0, 3), ('t', 2, 0, 4))]
    >>> plan_tasks([("t", 0, 0, 6000), ("t", 1, 0, 3000), ("t", 2, 0, 4000)], parallelism=2, min_per_task=20_000)
    [(('t', 0, 0, 6000),), (('t', 1, 0, 3000), ('t', 2, 0, 4000))]
    >>> plan_tasks([("t", 0, 0, 400)], parallelism=2, min_per_task=100)
    [(('t', 0, 0, 200),), (('t', 0, 200, 400),)]
    >>> plan_tasks([("t", p, 0, 900) for p in range(3)], parallelism=2, min_per_task=100)
    [(('t', 0, 0, 900), ('t', 1, 0, 450)), (('t', 1, 450, 900), ('t', 2, 0, 900))]
    >>> plan_tasks([("t", p, 0, 900) for p in range(3)], parallelism=2, min_per_task=100, per_core=False)
    [(('t', 0, 0, 900),), (('t', 1, 0, 900),), (('t', 2, 0, 900),)]
    """
    parallelism = max(parallelism, 1)
    total = sum(stop - begin for _, _, begin, stop in ranges)
    if len(ranges) > parallelism and per_core:
        if total <= parallelism * min_per_task:
            return _pack(ranges, min(parallelism, max(1, -(-total // SMALL_TASK_RECORDS))))[0]
        # never more tasks than the plain path's (a task per range), rounded up to whole waves
        waves = min(-(-total // (parallelism * MAX_TASK_RECORDS)), -(-len(ranges) // parallelism))
        count = parallelism * max(1, waves)
        packed, heaviest = _pack(ranges, count)
        if heaviest - -(-total // count) <= min_per_task:
            return packed
        return _deal(ranges, count, total)
    pieces = max(1, -(-parallelism // max(len(ranges), 1)))
    tasks: list[tuple[Range, ...]] = []
    for topic, p, begin, stop in ranges:
        n = max(1, min(pieces, (stop - begin) // max(min_per_task, 1)))
        step = -(-(stop - begin) // n)
        for lo in range(begin, stop, step):
            tasks.append(((topic, p, lo, min(lo + step, stop)),))
    return tasks


def _pack(ranges: list[Range], count: int) -> tuple[list[tuple[Range, ...]], int]:
    """Whole ranges into at most ``count`` tasks, each range (largest first; ties: input order)
    into the least loaded task; the ranges of a task and the tasks in input order. Also
    returns the records of the heaviest task."""
    bins: list[list[Range]] = [[] for _ in range(count)]
    loads = [0] * count
    order = sorted(range(len(ranges)), key=lambda i: (-(ranges[i][3] - ranges[i][2]), i))
    for i in order:
        target = loads.index(min(loads))
        bins[target].append(ranges[i])
        loads[target] += ranges[i][3] - ranges[i][2]
    position = {r: i for i, r in enumerate(ranges)}
    packed = [tuple(sorted(b, key=position.__getitem__)) for b in bins if b]
    return sorted(packed, key=lambda task: position[task[0]]), max(loads)


def _deal(ranges: list[Range], count: int, total: int) -> list[tuple[Range, ...]]:
    """``count`` tasks of ``total / count`` records each (the first ones one more when it does
    not divide), dealt the ranges in input order; a range that crosses a task's share is cut
    there, its rest going to the next task."""
    share, extra = divmod(total, count)
    tasks: list[tuple[Range, ...]] = []
    current: list[Range] = []
    room = share + (extra > 0)
    for topic, p, begin, stop in ranges:
        while begin < stop:
            take = min(stop - begin, room)
            current.append((topic, p, begin, begin + take))
            begin += take
            room -= take
            if room == 0:
                tasks.append(tuple(current))
                current = []
                room = share + (len(tasks) < extra)
    return tasks  # the shares add up to total: the last range fills the last task exactly


@dataclasses.dataclass(frozen=True, repr=False)
class SourcePrivate:
    """What one query's Kafka source needs that its query plan must not show: the Kafka client
    settings (credentials: ``sasl.password``, ``ssl.key.password``, ...) and, for a stateless
    pipeline run inside the source, the pipeline (the producer's settings, the sinks' own
    credentials, the callbacks' channel key). See :func:`query_source` for how it travels.

    >>> private = SourcePrivate.of({"bootstrap.servers": "b:9092", "sasl.password": "s3cret"})
    >>> "s3cret" in repr(private)
    False
    """

    token: str
    kafka_config_json: str
    #: the cloudpickled ``PipelinePlan`` to run in the source: a stateless pipeline, or the steps
    #: before a group_by (None: the source only reads)
    fused_plan: Optional[bytes] = None

    @classmethod
    def of(cls, kafka_config: dict[str, Any], plan: Any = None) -> "SourcePrivate":
        """Settings for a new query: ``kafka_config`` and optionally a plan to run fused."""
        from pyspark import cloudpickle

        fused = cloudpickle.dumps(plan) if plan is not None else None
        return cls(uuid.uuid4().hex[:16], json.dumps(kafka_config), fused)

    def __repr__(self) -> str:
        return f"SourcePrivate(token={self.token!r}, fused={self.fused_plan is not None})"


#: fused plans unpickled in this worker process, by query (the few most recent)
_fused_plans: dict[str, Any] = {}


def _fused_plan(private: SourcePrivate) -> Any:
    """The plan of a fused source, unpickled once per worker process and query."""
    plan = _fused_plans.get(private.token)
    if plan is None and private.fused_plan is not None:
        from pyspark import cloudpickle

        if len(_fused_plans) >= 8:  # a long-lived worker serves one query after another
            _fused_plans.pop(next(iter(_fused_plans)))
        plan = _fused_plans[private.token] = cloudpickle.loads(private.fused_plan)
    return plan


def packed_options(
    buckets: int,
    by_partition: bool,
    end_buckets: Sequence[int] = (),
    labels: Sequence[int] = (),
    by_partition_number: bool = False,
    ranges_in_state: bool = False,
) -> dict[str, str]:
    """Source options for packed rows per state bucket (``buckets`` buckets, by message key or
    by Kafka partition, or by partition number whatever the topic with
    ``by_partition_number``, each row keyed by its bucket's label when ``labels`` are given),
    and an empty row for each end bucket when given. With ``ranges_in_state`` (buckets by
    partition only), a task's rows name its offset ranges (:class:`RangeRef`) instead of
    holding their records, and each state bucket reads its partitions' records itself
    (:class:`RangeReader`): the records cross no shuffle, and the stateful stage starts as
    soon as the source's tasks have planned their ranges instead of read them.

    >>> packed_options(8, True, by_partition_number=True)
    {'packed_buckets': '8', 'bucket_by': 'partition_number'}
    >>> packed_options(8, True, by_partition_number=True, ranges_in_state=True)["ranges_in_state"]
    'true'
    """
    if ranges_in_state and not by_partition:
        raise ValueError("ranges_in_state needs buckets by partition: a bucket reads whole partitions")
    bucket_by = "partition_number" if by_partition_number else "partition" if by_partition else "key"
    options = {"packed_buckets": str(buckets), "bucket_by": bucket_by}
    if ranges_in_state:
        options["ranges_in_state"] = "true"
    if end_buckets:
        options["end_buckets"] = json.dumps(list(end_buckets))
    if labels:
        options["bucket_labels"] = json.dumps(list(labels))
    return options


def fused_group_by_options(buckets: int) -> dict[str, str]:
    """Source options for a fused plan with a group_by: the source runs the steps before the
    group_by and packs the re-keyed records into ``buckets`` state buckets.

    >>> fused_group_by_options(64)
    {'group_by_buckets': '64'}
    """
    return {"group_by_buckets": str(buckets)}


def query_source(kafka_config: dict[str, Any], fused_plan: Any = None) -> type["KafkaDataSource"]:
    """A data source class for one streaming query, holding its :class:`SourcePrivate` settings
    as a class attribute; register it with ``spark.dataSource.register`` and read it with
    ``spark.readStream.format(cls.name())``.

    Why a class and not data-source options: options are part of the query plan, which
    ``explain()``, the Spark UI's SQL tab and event logs print (Spark redacts an option only
    when its key or whole value matches ``spark.redaction.regex``, and cannot look inside an
    encoded plan). A class made at run time is pickled by value (with its attributes) by
    PySpark, which ships it to the driver's planning process and, inside each task, to the
    executors' Python workers: the channel PySpark uses for every Python function, so it works
    alike on local and cluster masters (standalone, YARN, Kubernetes), with no file or
    environment variable to place on the executors, and nothing of it reaches a plan, a log or
    the checkpoint. A class per query (its name carries a random token) keeps a running query
    independent of the next one registered in the same session.

    >>> cls = query_source({"bootstrap.servers": "b:9092", "sasl.password": "s3cret"})
    >>> cls.name().startswith("streamspark_kafka_")
    True
    """
    private = SourcePrivate.of(kafka_config, fused_plan)
    name = f"KafkaDataSource_{private.token}"
    return type(
        name,
        (KafkaDataSource,),
        {
            "__module__": __name__,
            "__qualname__": name,
            "private": private,
            "source_name": f"{SOURCE_NAME}_{private.token}",
        },
    )


class KafkaDataSource(DataSource):
    """The Kafka source (see the module docstring); a query reads a subclass made by
    :func:`query_source`, which holds its settings."""

    #: set on the subclass made by :func:`query_source`
    private: Optional[SourcePrivate] = None
    source_name: str = SOURCE_NAME

    @classmethod
    def name(cls) -> str:
        return cls.source_name

    def schema(self) -> str:
        if self._settings().fused_plan is not None:
            from .summary import SUMMARY_SCHEMA

            return PACKED_GROUPED_SCHEMA if "group_by_buckets" in self.options else SUMMARY_SCHEMA
        if "packed_buckets" in self.options:
            return PACKED_SCHEMA
        return SOURCE_SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _KafkaStreamReader(dict(self.options), self._settings())

    def _settings(self) -> SourcePrivate:
        if self.private is None:
            raise KafkaSourceError("read a data source class made by query_source(), which holds the Kafka settings")
        return self.private
