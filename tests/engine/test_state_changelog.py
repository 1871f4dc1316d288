"""State commits write RocksDB changelogs (Spark's changelog checkpointing, on by default): a
micro-batch uploads the keys it changed instead of a snapshot of the whole store. Checkpoints
written either way carry on with the other."""

from __future__ import annotations

import json
from pathlib import Path

from streamspark.engine.session import DEFAULT_SPARK_CONF

CHANGELOG = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _produce(kafka, topic, start, n):
    kafka.produce(
        topic,
        [
            {"value": json.dumps({"i": i}).encode(), "key": f"k{i % 5}".encode(), "partition": i % 5 % 2}
            for i in range(start, start + n)
        ],
    )


def _run(make_app, src, state_dir, expected):
    app = make_app(state_dir=state_dir, consumer_group="changelog", state_buckets=4)
    app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    return app.run(count=expected, timeout=60, metadata=True)


def _state_files(state_dir: str, suffix: str) -> set[Path]:
    return set(Path(state_dir).rglob(f"*{suffix}"))


def test_changelog_checkpointing_is_the_default():
    assert DEFAULT_SPARK_CONF[CHANGELOG] == "true"


def test_snapshot_and_changelog_checkpoints_carry_on_from_each_other(spark, make_app, kafka, tmp_path):
    assert spark.conf.get(CHANGELOG) == "true"
    src = kafka.new_topic(partitions=2)
    state_dir = str(tmp_path / "state")
    rows = []
    try:
        spark.conf.set(CHANGELOG, "false")
        _produce(kafka, src, 0, 30)
        rows += _run(make_app, src, state_dir, 30)
        assert not _state_files(state_dir, ".changelog")  # snapshots only
        assert _state_files(state_dir, ".zip")

        spark.conf.set(CHANGELOG, "true")
        _produce(kafka, src, 30, 30)
        rows += _run(make_app, src, state_dir, 30)
        changelogs = _state_files(state_dir, ".changelog")
        assert changelogs  # this run's commits wrote changelogs

        spark.conf.set(CHANGELOG, "false")
        _produce(kafka, src, 60, 20)
        rows += _run(make_app, src, state_dir, 20)
    finally:
        spark.conf.set(CHANGELOG, "true")

    # every key counted on across the three runs, in Kafka order: nothing lost or counted twice
    per_key: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        per_key.setdefault(row["_key"], []).append((row["i"], row["n"]))
    assert sorted(per_key) == [f"k{i}" for i in range(5)]
    for seq in per_key.values():
        assert [n for _, n in sorted(seq)] == list(range(1, len(seq) + 1))
    assert sum(len(seq) for seq in per_key.values()) == 80
