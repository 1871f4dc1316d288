"""Stateful pipelines: the source packs records per state bucket (the packed path, used
automatically); the plain path (a row per record, bucket computed by Spark) must give the same
results, and a checkpoint written by one must carry on with the other. Both with state by key:
``state-reads-source``, which would bucket these checkpoints by partition, is left out (its own
comparison: tests/engine/test_state_reads_source.py)."""

from __future__ import annotations

import json

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.engine._kafka_source import bucket_of_key, bucket_of_partition
from streamspark.engine.bucketing import balanced_labels, key_bucket_column, partition_bucket_column


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def test_python_buckets_are_the_numbers_spark_computed_before(spark):
    """The plain path's Spark expressions assigned the buckets of existing checkpoints."""
    from pyspark.sql import functions as F

    keys = [b"k0", b"", "temp\u00e9rature".encode(), bytes(range(256)), None, b"sensor-00042"]
    df = spark.createDataFrame([(k, "readings", p) for p, k in enumerate(keys)], "key binary, topic string, partition int")
    rows = df.select(
        F.coalesce(F.pmod(F.crc32(F.col("key")), F.lit(64)), F.lit(0)).alias("by_key"),
        F.pmod(F.crc32(F.concat_ws(":", F.col("topic"), F.col("partition").cast("string"))), F.lit(64)).alias("by_part"),
    ).collect()
    assert [r["by_key"] for r in rows] == [bucket_of_key(k, 64) for k in keys]
    assert [r["by_part"] for r in rows] == [bucket_of_partition("readings", p, 64) for p in range(len(keys))]


def test_spark_gives_a_bucket_the_group_key_python_gives_it(spark):
    """With a balanced layout the plain path's Spark expressions key a bucket's rows by its
    label, as the packed source and the group_by stage do in Python."""
    keys = [b"k0", b"", bytes(range(256)), None, b"sensor-00042", b"x" * 40]
    df = spark.createDataFrame([(k, "readings", p) for p, k in enumerate(keys)], "key binary, topic string, partition int")
    labels = balanced_labels(16, 3)
    rows = df.select(
        key_bucket_column(16, labels=labels).alias("by_key"), partition_bucket_column(16, labels).alias("by_part")
    ).collect()
    assert [r["by_key"] for r in rows] == [labels[bucket_of_key(k, 16)] for k in keys]
    assert [r["by_part"] for r in rows] == [labels[bucket_of_partition("readings", p, 16)] for p in range(len(keys))]
    plain = df.select(key_bucket_column(16).alias("by_key")).collect()
    assert [r["by_key"] for r in plain] == [bucket_of_key(k, 16) for k in keys]


def _produce(kafka, topic, start, n):
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i % 7}".encode(),
                "partition": i % 7 % 3,
                "headers": [("h", str(i).encode())] if i % 4 == 0 else None,
            }
            for i in range(start, start + n)
        ],
    )


def _run(make_app, src, out, state_dir, group, expected, packed, monkeypatch):
    monkeypatch.setattr(
        runner_module.QueryRunner,
        "strategies",
        Strategies(plain={"state-reads-source"} if packed else {"packed-buckets", "state-reads-source"}),
    )
    app = make_app(state_dir=state_dir, consumer_group=group, state_buckets=4, max_records_per_partition=25)
    sdf = app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    sdf.to_topic(app.topic(out, key_serializer="str"))
    rows = app.run(count=expected, timeout=60, metadata=True)
    return sorted((r["_key"], r["i"], r["n"], r["_partition"], r["_offset"]) for r in rows)


def test_packed_and_plain_paths_agree_and_share_checkpoints(make_app, kafka, tmp_path, monkeypatch):
    src = kafka.new_topic(partitions=3)
    _produce(kafka, src, 0, 140)
    plain_dir, packed_dir = str(tmp_path / "plain-then-packed"), str(tmp_path / "packed")
    # several micro-batches (25 records per partition each), on the plain path
    first = _run(make_app, src, kafka.new_topic(), plain_dir, "g1", 140, False, monkeypatch)
    _produce(kafka, src, 140, 70)
    # the same checkpoint continues on the packed path: the counts go on from the plain path's state
    second = _run(make_app, src, kafka.new_topic(), plain_dir, "g1", 70, True, monkeypatch)
    # the packed path from scratch over everything
    out = kafka.new_topic()
    packed = _run(make_app, src, out, packed_dir, "g2", 210, True, monkeypatch)

    assert sorted(first + second) == packed
    per_key: dict[str, list[tuple[int, int]]] = {}
    for key, i, n, _, _ in packed:
        per_key.setdefault(key, []).append((i, n))
    # each key counted in Kafka order: its n-th message (by input order) has count n
    assert all([n for _, n in sorted(seq)] == list(range(1, len(seq) + 1)) for seq in per_key.values())
    assert len(per_key) == 7
    produced = kafka.consume(out, expected=210)
    assert sorted((m.key().decode(), json.loads(m.value())["i"], json.loads(m.value())["n"]) for m in produced) == sorted(
        (k, i, n) for k, i, n, _, _ in packed
    )
    # headers travel inside the packed chunks
    assert all(
        (m.headers() or None)
        == ([("h", str(json.loads(m.value())["i"]).encode())] if json.loads(m.value())["i"] % 4 == 0 else None)
        for m in produced
    )
