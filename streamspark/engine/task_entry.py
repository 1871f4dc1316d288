"""The bodies Spark runs in its Python workers: one per shape of the streaming plan.

- :func:`run_fused`: a stateless pipeline inside the Kafka source's ``read()``;
- :func:`run_task`: a stateless pipeline over ``mapInArrow`` batches (the plain path);
- :func:`run_pre_shuffle`: everything up to the ``group_by`` nodes, before the shuffle (the
  plain path); :func:`run_fused_pre_shuffle`: the same inside the source's ``read()``, packing
  the re-keyed records per state bucket;
- :func:`run_bucket`: a bucket of keys with its state (``applyInPandasWithState``).

Each reports one summary row per task (or bucket); a record error never fails the Spark task.
"""

from __future__ import annotations

import gc
import pickle
import time
from typing import Any, Generator, Iterable, Iterator, Optional

import pyarrow as pa

from ..logging import configure_logging
from ._arrow import ddl
from ._kafka_source import PACKED_GROUPED_ARROW, SOURCE_COLUMNS, KafkaSourceError, RangeReader, RangeRef
from ._plan import PipelinePlan
from .alignment import in_time_order
from .bucketing import bucket_of_group, is_end_bucket, spark_partition_of
from .callbacks import forward_stdout
from .emitter import flush_producer, task_producer
from .processor import TaskProcessor
from .strategies import COMPRESSED_STATE
from .summary import SUMMARY_SCHEMA, ProducerFlush, Stage, TaskError, TaskSummary
from .task_failure import TaskFailure
from .task_identity import current_spark_partition

__all__ = (
    "run_task",
    "run_fused",
    "run_bucket",
    "run_pre_shuffle",
    "run_fused_pre_shuffle",
    "pack_grouped",
    "end_of_partition",
    "source_records",
    "task_start",
    "SUMMARY_SCHEMA",
    "GROUPED_SCHEMA",
    "WORKER_GC_THRESHOLDS",
)


#: garbage-collector thresholds of the worker processes. A task keeps many objects alive until
#: it ends (a sink's buffered rows, a state bucket, a window's batch), and with CPython's
#: defaults (700, 10, 10) every full collection walks all of them again: in-process, a task
#: buffering 250k records for the lake sink spent 7.5 µs per record, 3.6 with these. Cycles are
#: still collected, less often.
WORKER_GC_THRESHOLDS = (50_000, 20, 100)


def task_start(plan: PipelinePlan) -> None:
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
    task_start(plan)
    processor = TaskProcessor(plan, current_spark_partition())
    for records in chunks:
        if processor.failed:
            continue  # drain the input; the error is reported below
        processor.process(records)
    yield processor.finish().as_batch()


def run_bucket(plan: PipelinePlan, buckets: int, key: tuple[Any, ...], frames: Iterator[Any], group_state: Any) -> Iterator[Any]:
    """``applyInPandasWithState`` body of stateful pipelines: one bucket of message keys (or
    of whole Kafka partitions, in a checkpoint that buckets state by partition).

    The bucket's state (every key's ``State`` of every stream) is one blob in Spark state:
    loaded here, handed to the stateful steps, and written back when the bucket succeeds.
    Records are processed in (partition, offset) order, so each key sees its messages in
    Kafka order. The rows are records (the plain path), packed chunks of records (the source
    packs them per bucket: chunks in (partition, first offset) order; or names their offset
    ranges, which the bucket reads itself with ``plan.range_reader``), or re-keyed records
    after a group_by.
    """
    from ..state.store import KeyedStateStore

    task_start(plan)
    # the group's rows as Python lists, in (partition, offset) order; none on a timer-only call
    columns = _in_offset_order(frames)
    grouped = bool(plan.group_nodes)
    if grouped and key[0] == _SUMMARY_BUCKET:
        # summaries of the pre-shuffle stage pass through to the driver
        column = "records" if columns is not None and "records" in columns else "summary"
        for blob in columns[column] if columns is not None else ():
            yield _summary_frame(pickle.loads(blob))
        return
    group = int(key[0])
    if plan.end_buckets and is_end_bucket(group):
        yield _summary_frame(end_of_partition(plan))
        return
    size = len(columns["partition"]) if columns is not None else 0
    # a bucket with records leaves its deliveries to the end bucket of its Spark partition,
    # which runs after it in this worker; a timer-only call runs after the end bucket
    spark_partition = current_spark_partition()
    defer = (
        bool(plan.end_buckets)
        and size > 0
        and not group_state.hasTimedOut
        and spark_partition_of(group, len(plan.end_buckets)) == spark_partition
    )
    processor: Optional[TaskProcessor] = None
    try:
        bucket = bucket_of_group(group, plan.bucket_labels)
        blob = group_state.get[0] if group_state.exists else None
        store = KeyedStateStore.loads(blob, buckets, bucket)
        store.tickers = []  # windows closing quiet keys register here while compiling
        processor = TaskProcessor(
            plan,
            spark_partition,
            states=store,
            stage="post" if grouped else "all",
            bucket=bucket,
            defer_producer_flush=defer,
        )
        if columns is not None and size:
            # records of several topics meeting in a merge or join run in timestamp order
            ranks = {name: i for i, name in enumerate(plan.topics)} if plan.time_aligned else None
            if grouped:
                processor.input_count = 0  # counted by the pre-shuffle stage
                rows: list[tuple[Any, ...]]
                if "records" in columns:  # packed by the fused group_by
                    rows = list(_unpacked(columns["records"]))
                else:
                    rows = [
                        (node_id, pickle.loads(k), pickle.loads(v), ts, pickle.loads(h) if h is not None else None, t, p, o)
                        for node_id, k, v, ts, h, t, p, o in zip(
                            columns["group_node"],
                            columns["gkey"],
                            columns["gvalue"],
                            columns["timestamp"],
                            columns["gheaders"],
                            columns["topic"],
                            columns["partition"],
                            columns["offset"],
                        )
                    ]
                processor.process_grouped(rows if ranks is None else in_time_order(rows, ranks, 5, 6, 7, 3))
            elif "records" in columns and ranks is None:
                # a chunk of about _ROWS_PER_CHUNK records of one partition at a time:
                # windows computed a batch at a time give their outputs as each chunk ends,
                # and hold a chunk's records, not the bucket's
                chunks = _chunks(columns["records"], plan.range_reader)
                try:
                    for chunk in chunks:
                        if processor.failed:  # read no more ranges for a bucket that failed
                            break
                        processor.process(chunk)
                finally:
                    chunks.close()
            else:
                records: Iterable[tuple[Any, ...]] = (
                    _unpacked(columns["records"], plan.range_reader) if "records" in columns else source_records(columns)
                )
                processor.process(records if ranks is None else in_time_order(records, ranks))
        if plan.idle_ms is not None:
            processor.run_tickers(store.tickers, int(time.time() * 1000))
        summary = processor.finish()
        if summary.error is None:
            group_state.update((store.dumps(compress=COMPRESSED_STATE.name in plan.strategies),))
            if plan.idle_ms is not None:
                group_state.setTimeoutDuration(plan.idle_ms)
    except KafkaSourceError as exc:
        # the bucket could not read its records (state-reads-source): the task fails, as the
        # source's would, and the run stops with the source's error; what the bucket did
        # before (a transaction, sinks' rows) is given up
        if processor is not None:
            processor.abandon(TaskFailure(exc, Stage.CONSUMER, None, None, None))
        raise
    except Exception as exc:  # the state blob could not be read or written
        if processor is not None:
            processor.abandon(TaskFailure(exc, Stage.STATE, None, None, None))
        summary = TaskSummary(spark_partition=spark_partition, error=TaskError.of(exc, Stage.STATE, None, None, None))
    yield _summary_frame(summary)


def _in_offset_order(frames: Optional[Iterator[Any]]) -> Optional[dict[str, list[Any]]]:
    """The rows of a state group's pandas frames as one list per column, stably sorted by
    (``partition``, ``offset``); None without frames (a timer-only call).

    A group holds a few rows on the packed paths (a chunk per bucket and source task), so
    Python lists cost far less than concatenating and sorting pandas frames: 0.013 ms against
    0.25 ms for a group of two one-row frames, on a quiet core, which a micro-batch pays for
    every bucket it touches.

    >>> import pandas as pd
    >>> cols = _in_offset_order(iter([pd.DataFrame({"partition": [1, 0], "offset": [5, 9], "records": [b"b", b"a"]}),
    ...                                pd.DataFrame({"partition": [0], "offset": [2], "records": [b"c"]})]))
    >>> cols["records"], cols["offset"]
    ([b'c', b'a', b'b'], [2, 9, 5])
    """
    parts = list(frames) if frames is not None else []
    if not parts:
        return None
    names = list(parts[0].columns)
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for part in parts:
        for name in names:
            columns[name].extend(part[name].tolist())
    if "partition" in columns and "offset" in columns:
        partitions, offsets = columns["partition"], columns["offset"]
        order = sorted(range(len(offsets)), key=lambda i: (partitions[i], offsets[i]))
        if order != list(range(len(order))):
            columns = {name: [values[i] for i in order] for name, values in columns.items()}
    return columns


def _summary_frame(summary: TaskSummary) -> Any:
    """A summary as the one-row pandas frame ``applyInPandasWithState`` takes."""
    import pandas as pd

    return pd.DataFrame({k: [v] for k, v in summary.as_row().items()})


def end_of_partition(plan: PipelinePlan) -> TaskSummary:
    """The end bucket of a Spark partition: wait for the deliveries of every state bucket that
    ran before it in this worker (``ProducerFlush.DEFERRED``) and report them."""
    summary = TaskSummary(spark_partition=current_spark_partition(), producer_flush=ProducerFlush.PARTITION_END)
    try:
        producer, reports = task_producer(plan.producer_config)
        flush_producer(producer, reports, plan)
    except TaskFailure as failure:
        summary.error = TaskError.of(failure.exc, failure.stage, failure.topic, failure.partition, failure.offset)
    except Exception as exc:  # the producer could not be created
        summary.error = TaskError.of(exc, Stage.PRODUCER, None, None, None)
    return summary


def _chunks(packed: list[bytes], reader: Optional[RangeReader] = None) -> Generator[list[tuple[Any, ...]], None, None]:
    """The records of the source's packed rows in chunks of one topic partition: the packed
    chunks of a partition joined up to :data:`_ROWS_PER_CHUNK` records (a bucket by key gets a
    few hundred of each source chunk), and a row that names an offset range (:class:`RangeRef`)
    read from Kafka with ``reader``, a chunk at a time.

    >>> rows = [[("t", 0, o, 0, 0, None, b"", None)] for o in range(3)] + [[("t", 1, 0, 0, 0, None, b"", None)]]
    >>> [[r[1:3] for r in chunk] for chunk in _chunks([pickle.dumps(r) for r in rows])]
    [[(0, 0), (0, 1), (0, 2)], [(1, 0)]]
    """
    pending: list[tuple[Any, ...]] = []
    for blob in packed:
        loaded = pickle.loads(blob)
        if isinstance(loaded, RangeRef):
            if pending:
                yield pending
                pending = []
            if reader is None:
                raise KafkaSourceError(f"{loaded} reached a state bucket that was given no Kafka settings to read it")
            yield from reader.chunks(loaded)
        elif not loaded:
            continue
        elif pending and (pending[0][0] != loaded[0][0] or pending[0][1] != loaded[0][1] or len(pending) >= _ROWS_PER_CHUNK):
            yield pending
            pending = list(loaded)
        else:
            pending.extend(loaded)
    if pending:
        yield pending


def _unpacked(packed: list[bytes], reader: Optional[RangeReader] = None) -> Iterator[tuple[Any, ...]]:
    """The records of the source's packed rows (see :func:`_chunks`), one by one."""
    for chunk in _chunks(packed, reader):
        yield from chunk


#: the most records a state bucket hands the pipeline at once from joined packed chunks (the
#: source's chunk size)
_ROWS_PER_CHUNK = 20_000
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
    task_start(plan)
    processor = TaskProcessor(plan, current_spark_partition(), stage="pre", buckets=buckets)
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


def run_fused_pre_shuffle(
    chunks: Iterator[Iterable[tuple[Any, ...]]], plan: PipelinePlan, buckets: int
) -> Iterator[pa.RecordBatch]:
    """The pre-shuffle stage inside the Kafka source's ``read()`` (the fused group_by path):
    runs everything up to the group_by nodes over chunks of source records, and yields the
    re-keyed records packed per state bucket and chunk (:func:`pack_grouped`), then the task's
    summary row in bucket -1. As on the plain path, a task that failed yields only its summary."""
    task_start(plan)
    processor = TaskProcessor(plan, current_spark_partition(), stage="pre", buckets=buckets)
    packed: list[pa.RecordBatch] = []
    emitter = processor.emitter
    if emitter is not None:
        emitter.pack_groups = True
    for records in chunks:
        if processor.failed:
            continue  # drain the input; the error is reported below
        processor.process(records)
        if emitter is not None and emitter.grouped and not processor.failed:
            try:
                packed.append(pack_grouped(emitter.grouped))
            except TaskFailure as fatal:
                processor.abandon(fatal)
            except Exception as exc:  # a chunk that cannot be packed, though each record can
                processor.abandon(TaskFailure(exc, Stage.GROUP_BY, None, None, None))
            emitter.grouped = []
    summary = processor.finish()
    if summary.error is None:
        yield from packed
    yield pa.RecordBatch.from_pydict(
        {"_bucket": [_SUMMARY_BUCKET], "partition": [-1], "offset": [-1], "records": [pickle.dumps(summary)]},
        schema=PACKED_GROUPED_ARROW,
    )


def pack_grouped(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    """Re-keyed records ``(bucket, group node id, key, value, timestamp, headers, topic,
    partition, offset)`` of one chunk of source records as a row per bucket: where the bucket's
    records start (source partition and offset, the order in which a bucket runs its chunks)
    and its records, pickled as one list (in the order they were re-keyed).

    A record that cannot be pickled fails the task as the plain path's row of pickled fields
    does: at the group_by, with the record's topic, partition and offset.

    >>> batch = pack_grouped([(3, 7, "k", {"n": 1}, 5, None, "t", 0, 10), (1, 7, "j", {}, 6, None, "t", 0, 11)])
    >>> batch.column("_bucket").to_pylist(), batch.column("offset").to_pylist()
    ([3, 1], [10, 11])
    >>> pickle.loads(batch.column("records")[0].as_py())
    [(7, 'k', {'n': 1}, 5, None, 't', 0, 10)]
    """
    groups: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        group = groups.get(row[0])
        if group is None:
            groups[row[0]] = [row[1:]]
        else:
            group.append(row[1:])
    blobs = []
    for group in groups.values():
        try:
            blobs.append(pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:
            for one in group:  # name the record that cannot cross the shuffle
                try:
                    pickle.dumps(one, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:
                    raise TaskFailure(exc, Stage.GROUP_BY, one[5], one[6], one[7]) from exc
            raise
    firsts = [group[0] for group in groups.values()]
    return pa.RecordBatch.from_arrays(
        [
            pa.array(list(groups), pa.int32()),
            pa.array([first[6] for first in firsts], pa.int32()),
            pa.array([first[7] for first in firsts], pa.int64()),
            pa.array(blobs, pa.binary()),
        ],
        schema=PACKED_GROUPED_ARROW,
    )
