"""The ``state-reads-source`` fast path: a new checkpoint of a stateful pipeline buckets its
state by Kafka partition, the source's tasks send a row per offset range, and each state
bucket reads its partitions' records itself. The plain path (the source reads the records and
packs them; a new checkpoint buckets by key) must give the same results, and a checkpoint
begun on one path carries on with the other in the layout it began with."""

from __future__ import annotations

import json
import pickle

import pyarrow as pa
import pytest
from pyspark.sql.datasource import InputPartition

from streamspark.engine import runner as runner_module
from streamspark.engine._kafka_source import (
    KafkaSourceError,
    RangeReader,
    RangeRef,
    SourcePrivate,
    _KafkaStreamReader,
    _worker_consumers,
    packed_options,
    source_options,
)
from streamspark.engine.runner import RunLimits
from streamspark.engine.bucketing import STATE_BUCKETS_FILE, balanced_labels, bucket_of_partition
from streamspark.engine.strategies import Strategies
from streamspark.engine.task_entry import _unpacked
from streamspark.exceptions import BrokerUnreachableError, StreamsparkException

from .plans import query_runner

PLAIN = {"state-reads-source"}


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _produce(kafka, topic, start, n, partitions=4):
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i % 7}".encode(),
                "partition": i % 7 % partitions,
                "headers": [("h", str(i).encode())] if i % 4 == 0 else None,
            }
            for i in range(start, start + n)
        ],
    )


def _run(make_app, src, out, state_dir, group, expected, fast, monkeypatch):
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if fast else PLAIN))
    app = make_app(state_dir=state_dir, consumer_group=group, state_buckets=4, max_records_per_partition=25)
    sdf = app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    sdf.to_topic(app.topic(out, key_serializer="str"))
    rows = app.run(count=expected, timeout=60, metadata=True)
    record = json.loads((app.checkpoint_dir / STATE_BUCKETS_FILE).read_text())
    return sorted((r["_key"], r["i"], r["n"], r["_partition"], r["_offset"]) for r in rows), record["bucket_by"]


def test_both_paths_agree_and_carry_on_each_others_checkpoints(make_app, kafka, tmp_path, monkeypatch):
    src = kafka.new_topic(partitions=4)
    _produce(kafka, src, 0, 140)
    # begun on the fast path (state by partition), carried on by the plain path
    fast_first, fast_layout = _run(make_app, src, kafka.new_topic(), str(tmp_path / "a"), "ga", 140, True, monkeypatch)
    # begun on the plain path (state by key), carried on with the fast path turned on again
    plain_first, plain_layout = _run(make_app, src, kafka.new_topic(), str(tmp_path / "b"), "gb", 140, False, monkeypatch)
    assert (fast_layout, plain_layout) == ("partition_number", "key")
    assert fast_first == plain_first
    _produce(kafka, src, 140, 70)
    fast_then_plain, layout_a = _run(make_app, src, kafka.new_topic(), str(tmp_path / "a"), "ga", 70, False, monkeypatch)
    plain_then_fast, layout_b = _run(make_app, src, kafka.new_topic(), str(tmp_path / "b"), "gb", 70, True, monkeypatch)
    # each checkpoint keeps the layout it began with, whichever path runs it
    assert (layout_a, layout_b) == ("partition_number", "key")
    assert fast_then_plain == plain_then_fast
    # the fast path from scratch over everything: the counts go on across the runs above
    out = kafka.new_topic()
    whole, _ = _run(make_app, src, out, str(tmp_path / "c"), "gc", 210, True, monkeypatch)
    assert sorted(fast_first + fast_then_plain) == whole
    per_key: dict[str, list[tuple[int, int]]] = {}
    for key, i, n, _, _ in whole:
        per_key.setdefault(key, []).append((i, n))
    # each key counted in Kafka order: its n-th message has count n
    assert len(per_key) == 7
    assert all([n for _, n in sorted(seq)] == list(range(1, len(seq) + 1)) for seq in per_key.values())
    produced = kafka.consume(out, expected=210)
    assert sorted((m.key().decode(), json.loads(m.value())["i"], json.loads(m.value())["n"]) for m in produced) == sorted(
        (k, i, n) for k, i, n, _, _ in whole
    )
    # the records the buckets read keep their headers
    assert all(
        (m.headers() or None)
        == ([("h", str(json.loads(m.value())["i"]).encode())] if json.loads(m.value())["i"] % 4 == 0 else None)
        for m in produced
    )


def test_a_key_in_two_partitions_has_a_state_per_partition_as_in_the_reference(make_app, kafka, tmp_path, monkeypatch):
    """The reference keeps a store per topic partition: the same key produced to two partitions
    counts apart there, and so it does with state bucketed by partition."""
    src = kafka.new_topic(partitions=2)
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "key": b"same", "partition": i % 2} for i in range(10)])
    rows, layout = _run(make_app, src, kafka.new_topic(), str(tmp_path / "s"), "gs", 10, True, monkeypatch)
    assert layout == "partition_number"
    assert sorted((p, n) for _, _, n, p, _ in rows) == [(p, n) for p in (0, 1) for n in range(1, 6)]


def test_a_topic_with_fewer_partitions_than_cores_keeps_state_by_key(make_app, kafka, tmp_path, monkeypatch, spark):
    if spark.sparkContext.defaultParallelism < 2:
        pytest.skip("needs at least 2 cores: a 1-partition topic then has fewer partitions than the stateful stage's tasks")
    src = kafka.new_topic(partitions=1)
    _produce(kafka, src, 0, 20, partitions=1)
    rows, layout = _run(make_app, src, kafka.new_topic(), str(tmp_path / "one"), "g1", 20, True, monkeypatch)
    assert layout == "key" and len(rows) == 20


def test_the_source_sends_a_row_per_range_in_the_bucket_of_its_partition():
    options = {
        **source_options(["t"], "earliest", max_records_per_partition=100, request_timeout=5),
        **packed_options(8, True, labels=balanced_labels(8, 2), by_partition_number=True, ranges_in_state=True),
    }
    reader = _KafkaStreamReader(options, SourcePrivate.of({"bootstrap.servers": "127.0.0.1:1", "group.id": "x"}))
    # no broker at that address: the rows are made without reading a record
    (batch,) = list(reader._read_packed(InputPartition((("t", 2, 5, 40), ("u", 11, 0, 3))), 8))
    rows = pa.Table.from_batches([batch]).to_pylist()
    labels = balanced_labels(8, 2)
    assert [(r["_bucket"], r["partition"], r["offset"]) for r in rows] == [
        (labels[bucket_of_partition(None, 2, 8)], 2, 5),
        (labels[bucket_of_partition(None, 11, 8)], 11, 0),
    ]
    assert [pickle.loads(r["records"]) for r in rows] == [RangeRef("t", 2, 5, 40), RangeRef("u", 11, 0, 3)]


def test_ranges_in_state_need_buckets_by_partition():
    with pytest.raises(ValueError, match="buckets by partition"):
        packed_options(8, False, ranges_in_state=True)


def test_a_range_reader_reads_exactly_its_range(kafka):
    topic = kafka.new_topic(partitions=2)
    kafka.produce(
        topic,
        [{"value": b"%d" % i, "key": b"k", "partition": i % 2, "headers": [("h", b"x")] if i == 3 else None} for i in range(12)],
    )
    reader = RangeReader(json.dumps({"bootstrap.servers": kafka.address, "group.id": "ranges"}), 10.0)
    try:
        rows = list(
            _unpacked([pickle.dumps(RangeRef(topic, 1, 1, 4)), pickle.dumps([("x", 0, 0, 0, 0, None, b"kept", None)])], reader)
        )
    finally:
        _worker_consumers.pop(reader.kafka_config_json).close()
    # partition 1 holds 1, 3, 5, ...: offsets 1 to 3 are the values 3, 5, 7; a chunk of records passes as it is
    assert [(r[0], r[1], r[2], r[5], r[6], r[7]) for r in rows[:3]] == [
        (topic, 1, 1, b"k", b"3", [("h", b"x")]),
        (topic, 1, 2, b"k", b"5", None),
        (topic, 1, 3, b"k", b"7", None),
    ]
    assert rows[3] == ("x", 0, 0, 0, 0, None, b"kept", None)


def test_a_range_that_cannot_be_read_is_the_sources_error(kafka):
    topic = kafka.new_topic(partitions=1)
    kafka.produce(topic, [{"value": b"only"}])
    reader = RangeReader(json.dumps({"bootstrap.servers": kafka.address, "group.id": "short"}), 1.0)
    try:
        with pytest.raises(KafkaSourceError, match=r"No data from .*\[0\] at offset 1 \(planned up to 5\)"):
            reader.chunks(RangeRef(topic, 0, 0, 5))
    finally:
        _worker_consumers.pop(reader.kafka_config_json).close()
    with pytest.raises(KafkaSourceError, match="no Kafka settings"):
        list(_unpacked([pickle.dumps(RangeRef(topic, 0, 0, 1))], None))


class _FailedBatch:
    """A micro-batch whose Spark job failed: Spark's error carries the task's Python error."""

    def __init__(self, error: str) -> None:
        self.error = error

    def collect(self):
        raise RuntimeError(f"Job aborted due to stage failure: ... {self.error}\n\tat org.apache.spark...")


@pytest.mark.parametrize(
    "error, expected",
    [
        ("KafkaSourceError: No data from t[0] at offset 1 (planned up to 5) within request_timeout=1.0s", StreamsparkException),
        ("KafkaSourceError: Kafka broker 'h:1' did not answer within 5.0s: x", BrokerUnreachableError),
    ],
)
def test_a_micro_batch_that_could_not_read_kafka_fails_with_the_sources_error(error, expected):
    """A state bucket that cannot read its range fails its task with the source's error: the
    run ends with the application's error for it, not Spark's, and commits nothing to the broker."""
    runner = query_runner()
    with pytest.raises(RuntimeError, match="stage failure"):  # Spark gets its own error back
        runner._on_batch(_FailedBatch(error), 0, RunLimits())
    assert type(runner._failure) is expected and str(runner._failure) == error.split("KafkaSourceError: ")[1]
    assert runner._source_failed


def test_another_failure_of_a_micro_batch_stays_as_it_is():
    runner = query_runner()
    with pytest.raises(RuntimeError):
        runner._on_batch(_FailedBatch("ValueError: something else"), 0, RunLimits())
    assert isinstance(runner._failure, RuntimeError) and not runner._source_failed
