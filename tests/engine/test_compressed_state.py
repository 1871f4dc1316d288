"""The ``compressed-state`` fast path: each state bucket's blob goes into Spark's state store
compressed. The plain path (the blob stored as it is pickled) must give the same results, and a
checkpoint written on one path carries on with the other (a blob is read whichever way it was
stored)."""

from __future__ import annotations

import json

import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.state import blob_codec

PLAIN = {"compressed-state"}
KEYS = 400


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    state.set("seen", state.get("seen", []) + [value["i"]])
    return {**value, "n": n}


def _produce(kafka, topic, start, n):
    kafka.produce(
        topic,
        [
            {"value": json.dumps({"i": i}).encode(), "key": b"user-%d" % (i % KEYS), "partition": i % 2}
            for i in range(start, start + n)
        ],
    )


def _run(make_app, spark, src, state_dir, group, expected, fast, monkeypatch):
    """Counts per key over ``expected`` new records, and the first bytes of every state value
    the checkpoint holds after the run (read back with Spark's state data source)."""
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if fast else PLAIN))
    app = make_app(state_dir=state_dir, consumer_group=group, state_buckets=2)
    sdf = app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True)
    rows = app.run(count=expected, timeout=90, metadata=True)
    stored = spark.read.format("statestore").load(str(app.checkpoint_dir)).collect()
    heads = sorted(bytes(row["value"]["groupState"]["blob"])[:4] for row in stored)
    return sorted((r["_key"], r["i"], r["n"]) for r in rows), heads


@pytest.mark.parametrize("first_fast", [True, False], ids=["compressed-then-plain", "plain-then-compressed"])
def test_each_path_counts_on_from_the_state_the_other_stored(make_app, spark, kafka, tmp_path, monkeypatch, first_fast):
    src = kafka.new_topic(partitions=2)
    _produce(kafka, src, 0, 2 * KEYS)
    state_dir = str(tmp_path / "state")
    first, heads = _run(make_app, spark, src, state_dir, "g", 2 * KEYS, first_fast, monkeypatch)
    # two buckets of 200 keys each: blobs of several kilobytes, compressed on the fast path only
    assert len(heads) == 2
    assert all((head == blob_codec.MAGIC) == first_fast for head in heads), heads
    assert all(head[:1] == b"\x80" for head in heads if head != blob_codec.MAGIC)
    assert first == sorted((f"user-{i % KEYS}", i, i // KEYS + 1) for i in range(2 * KEYS))
    # the other path reads the state the first one stored, and stores its own way
    _produce(kafka, src, 2 * KEYS, KEYS)
    then, heads = _run(make_app, spark, src, state_dir, "g", KEYS, not first_fast, monkeypatch)
    assert len(heads) == 2
    assert all((head == blob_codec.MAGIC) == (not first_fast) for head in heads), heads
    assert then == sorted((f"user-{i % KEYS}", i, 3) for i in range(2 * KEYS, 3 * KEYS))
