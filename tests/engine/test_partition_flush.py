"""One producer flush per Spark task for at-least-once stateful pipelines (the
``one-flush-per-partition`` strategy): the state buckets of a task leave their deliveries to the
task's end bucket, which Spark runs after them. The plain path (each bucket waits for its own
deliveries) must give the same outputs; a missing end-bucket report fails the micro-batch.
A failed delivery under this strategy: ``tests/engine/test_bucket_delivery.py``."""

from __future__ import annotations

import json
import os

import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.bucketing import END_BUCKET_BASE, end_buckets, spark_partition_of
from streamspark.engine.runner import QueryRunner, shuffle_partitions
from streamspark.engine.strategies import Strategies
from streamspark.engine.summary import ProducerFlush, TaskSummary
from streamspark.exceptions import ProcessingError


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def test_python_partition_numbers_are_sparks(spark):
    """Spark sends a bucket's rows to ``pmod(hash(bucket), partitions)``; the end buckets land
    in the partition they are meant for."""
    from pyspark.sql import functions as F

    values = [*range(-3, 300), *end_buckets(7), *end_buckets(200), END_BUCKET_BASE + 12345]
    df = spark.createDataFrame([(v,) for v in values], "b long")
    for partitions in (1, 2, 4, 7, 200):
        rows = df.select(F.pmod(F.hash("b"), F.lit(partitions)).alias("p")).collect()
        assert [r["p"] for r in rows] == [spark_partition_of(v, partitions) for v in values], partitions
    for partitions in (1, 4, 7):
        ends = end_buckets(partitions)
        assert [spark_partition_of(e, partitions) for e in ends] == list(range(partitions))
        assert min(ends) >= END_BUCKET_BASE


def _produce(kafka, topic, start, n):
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i % 11}".encode(),
                "partition": i % 11 % 3,
                "headers": [("h", str(i).encode())] if i % 5 == 0 else None,
            }
            for i in range(start, start + n)
        ],
    )


def _run(make_app, src, out, state_dir, expected, fast, monkeypatch):
    # state by key (the layout state-reads-source would change): the end buckets' own path
    plain = {"state-reads-source"} if fast else {"one-flush-per-partition", "state-reads-source"}
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=plain))
    app = make_app(state_dir=state_dir, consumer_group=os.path.basename(state_dir), state_buckets=8, max_records_per_partition=20)
    sdf = app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    sdf.to_topic(app.topic(out, key_serializer="str"))
    return sorted((r["_key"], r["i"], r["n"]) for r in app.run(count=expected, timeout=90, metadata=True))


def test_one_flush_per_partition_and_the_plain_path_give_the_same_outputs(make_app, kafka, spark, tmp_path, monkeypatch):
    src = kafka.new_topic(partitions=3)
    _produce(kafka, src, 0, 120)
    used = []
    real = runner_module.end_buckets
    monkeypatch.setattr(runner_module, "end_buckets", lambda n: used.append(n) or real(n))

    results = {}
    for fast in (True, False):
        out = kafka.new_topic()
        state_dir = str(tmp_path / f"flush-{fast}")
        first = _run(make_app, src, out, state_dir, 120, fast, monkeypatch)
        if fast:
            _produce(kafka, src, 120, 60)
        second = _run(make_app, src, out, state_dir, 60, fast, monkeypatch)  # carries on from the checkpoint
        produced = kafka.consume(out, expected=180)
        results[fast] = (
            sorted(first + second),
            sorted(
                (m.key().decode(), json.loads(m.value())["i"], json.loads(m.value())["n"], tuple(m.headers() or ()))
                for m in produced
            ),
        )
    # the fast runs took end buckets (the session's shuffle partitions, then the checkpoint's)
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    assert used == [partitions, partitions]
    assert len(results[True][1]) == 180
    assert results[True] == results[False]
    per_key: dict[str, list[tuple[int, int]]] = {}
    for key, i, n in results[True][0]:
        per_key.setdefault(key, []).append((i, n))
    assert all([n for _, n in sorted(seq)] == list(range(1, len(seq) + 1)) for seq in per_key.values())


def _summary(partition: int, flush: ProducerFlush) -> TaskSummary:
    return TaskSummary(spark_partition=partition, input_count=1, producer_flush=flush)


def test_a_partition_whose_end_bucket_did_not_report_fails_the_batch():
    reported = [_summary(0, ProducerFlush.DEFERRED), _summary(0, ProducerFlush.PARTITION_END), _summary(1, ProducerFlush.OWN)]
    QueryRunner._raise_errors(reported)  # complete: nothing raised
    with pytest.raises(ProcessingError, match=r"Spark partition\(s\) \[2\] were not confirmed") as info:
        QueryRunner._raise_errors([*reported, _summary(2, ProducerFlush.DEFERRED)])
    assert info.value.stage == "producer"


def test_summaries_carry_who_flushed():
    for flush in ProducerFlush:
        assert TaskSummary.from_row(_summary(3, flush).as_row()).producer_flush is flush


def test_shuffle_partitions_come_from_the_checkpoint_once_it_has_one(spark, tmp_path):
    fresh = tmp_path / "fresh"
    assert shuffle_partitions(spark, str(fresh)) == int(spark.conf.get("spark.sql.shuffle.partitions"))
    offsets = tmp_path / "started" / "offsets"
    offsets.mkdir(parents=True)
    meta = {"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": {"spark.sql.shuffle.partitions": "7"}}
    for batch in (0, 1):
        (offsets / str(batch)).write_text(f"v1\n{json.dumps(meta)}\n{{}}\n")
    (offsets / ".1.crc").write_text("")
    assert shuffle_partitions(spark, str(tmp_path / "started")) == 7
    (offsets / "2").write_text('v1\n{"conf": {}}\n')
    assert shuffle_partitions(spark, str(tmp_path / "started")) is None  # unknown: the strategy is not taken
    assert shuffle_partitions(spark, "s3a://bucket/checkpoint") is None
