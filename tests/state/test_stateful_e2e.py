"""Stateful steps on Spark state: exact per-key counts, restarts keep state, TTL, clear_state."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from streamspark.engine.bucketing import BUCKETS_PER_PARTITION, STATE_BUCKETS_FILE, balanced_labels
from streamspark.exceptions import ProcessingError
from streamspark.state.exceptions import StateError

from ..conftest import json_messages


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _clicks(kafka, topic, users, per_user, partitions, start=0):
    msgs = []
    for i in range(start, start + per_user):
        for u in range(users):
            msgs.append(
                {
                    "value": json.dumps({"user": f"u{u}", "event_id": f"e{i}"}).encode(),
                    "key": f"u{u}".encode(),
                    "partition": u % partitions,
                }
            )
    kafka.produce(topic, msgs)
    return len(msgs)


def test_running_count_is_exact_per_key_and_survives_restart(make_app, kafka):
    src, out = kafka.new_topic(partitions=4), kafka.new_topic()
    n1 = _clicks(kafka, src, users=40, per_user=5, partitions=4)
    app = make_app(consumer_group="counts", state_buckets=8)
    app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
    rows = app.run(count=n1, timeout=60)
    by_user: dict[str, list[int]] = {}
    for r in rows:
        by_user.setdefault(r["user"], []).append(r["n"])
    assert len(by_user) == 40
    assert all(ns == [1, 2, 3, 4, 5] for ns in by_user.values())  # Kafka order within each key

    n2 = _clicks(kafka, src, users=40, per_user=2, partitions=4, start=5)
    app2 = make_app(consumer_group="counts", state_buckets=8)
    app2.dataframe(app2.topic(src)).apply(count, stateful=True).to_topic(app2.topic(out))
    rows2 = app2.run(count=n2, timeout=60)
    assert sorted(Counter(r["n"] for r in rows2).items()) == [(6, 40), (7, 40)]
    produced = [json.loads(m.value()) for m in kafka.consume(out, expected=n1 + n2)]
    assert max(v["n"] for v in produced) == 7 and len(produced) == n1 + n2

    # a different bucket count for the same checkpoint is refused with a clear error
    app3 = make_app(consumer_group="counts", state_buckets=16)
    app3.dataframe(app3.topic(src)).apply(count, stateful=True)
    _clicks(kafka, src, users=1, per_user=1, partitions=4, start=9)
    with pytest.raises(StateError, match="state_buckets=8, the application now uses 16"):
        app3.run(count=1, timeout=60)


def test_the_default_layout_is_recorded_and_an_older_checkpoint_keeps_64_buckets(make_app, kafka, spark, monkeypatch):
    src = kafka.new_topic(partitions=2)
    n1 = _clicks(kafka, src, users=20, per_user=2, partitions=2)

    def counting(group, **kwargs):
        app = make_app(consumer_group=group, **kwargs)
        app.dataframe(app.topic(src)).apply(count, stateful=True)
        return app

    # a new checkpoint: 16 buckets per shuffle partition, placed evenly over them, recorded, and
    # kept by the next run
    app = counting("default-buckets")
    assert sorted(Counter(r["n"] for r in app.run(count=n1, timeout=60)).items()) == [(1, 20), (2, 20)]
    partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    recorded = json.loads((app.checkpoint_dir / STATE_BUCKETS_FILE).read_text())
    assert recorded == {
        "state_buckets": BUCKETS_PER_PARTITION * partitions,
        "shuffle_partitions": partitions,
        "labels": list(balanced_labels(BUCKETS_PER_PARTITION * partitions, partitions)),
        # a bucket per partition of the 2-partition topic when each task of the stateful stage gets one
        "bucket_by": "partition_number" if partitions <= 2 else "key",
    }
    n2 = _clicks(kafka, src, users=20, per_user=1, partitions=2, start=2)
    assert Counter(r["n"] for r in counting("default-buckets").run(count=n2, timeout=60)) == {3: 20}

    # a checkpoint begun without a record (by an earlier version: 64 buckets keyed by their
    # numbers) carries on with 64 buckets: another count would refuse its state
    with monkeypatch.context() as patch:  # shuffle partitions unknown: the buckets keep their numbers
        patch.setattr("streamspark.engine.session.planned_shuffle_partitions", lambda *args: None)
        legacy = counting("legacy-buckets", state_buckets=64)
        legacy.run(count=n1 + n2, timeout=60)
    (legacy.checkpoint_dir / STATE_BUCKETS_FILE).unlink()
    n3 = _clicks(kafka, src, users=20, per_user=1, partitions=2, start=3)
    assert Counter(r["n"] for r in counting("legacy-buckets").run(count=n3, timeout=60)) == {4: 20}
    assert not (legacy.checkpoint_dir / STATE_BUCKETS_FILE).exists()
    # another count for it is refused when the state of a bucket both counts number alike is read
    n4 = _clicks(kafka, src, users=20, per_user=1, partitions=2, start=4)
    with pytest.raises(ProcessingError, match="state_buckets=64, the application now uses 16"):
        counting("legacy-buckets", state_buckets=16).run(count=n4, timeout=60)


def test_dedupe_and_two_stateful_steps_share_the_stream_state(make_app, kafka):
    src = kafka.new_topic(partitions=2)
    events = [("a", "x"), ("a", "y"), ("b", "x"), ("a", "x"), ("b", "x"), ("b", "z")]
    kafka.produce(
        src, [{"value": json.dumps({"e": e}).encode(), "key": k.encode(), "partition": 0 if k == "a" else 1} for k, e in events]
    )
    app = make_app()
    sdf = app.dataframe(app.topic(src))
    sdf = sdf.filter(lambda v, state: not state.exists(v["e"]), stateful=True)
    sdf.update(lambda v, state: state.set(v["e"], True), stateful=True)
    sdf = sdf.apply(count, stateful=True)
    rows = app.run(count=4, timeout=60, metadata=True)
    assert sorted((r["_key"], r["e"], r["n"]) for r in rows) == [(b"a", "x", 1), (b"a", "y", 2), (b"b", "x", 1), (b"b", "z", 2)]


def test_clear_state_starts_counting_again(make_app, kafka):
    src = kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(3)], key=lambda v: b"k"))
    app = make_app(consumer_group="clear-me")
    app.dataframe(app.topic(src)).apply(count, stateful=True)
    assert [r["n"] for r in app.run(count=3, timeout=60)] == [1, 2, 3]
    app.clear_state()
    app2 = make_app(consumer_group="clear-me", auto_offset_reset="earliest")
    app2.dataframe(app2.topic(src)).apply(count, stateful=True)
    # the group's Kafka offsets are at the end: nothing new to read, the checkpoint is gone
    kafka.produce(src, json_messages([{"i": 3}], key=lambda v: b"k"))
    assert [r["n"] for r in app2.run(count=1, timeout=60)] == [1]


def test_unserializable_state_value_stops_with_the_step_named(make_app, kafka):
    src = kafka.new_topic()
    kafka.produce(src, json_messages([{"i": 1}], key=lambda v: b"k"))
    app = make_app()

    def remember(value, state):
        state.set("when", {1, 2})

    app.dataframe(app.topic(src)).update(remember, stateful=True)
    with pytest.raises(ProcessingError, match=r"update\(remember\) .* not JSON-serialisable"):
        app.run(count=1, timeout=60)


def test_running_count_100k_messages_4_partitions_1k_keys_is_exact(make_app, kafka):
    src = kafka.new_topic(partitions=4)
    keys, per_key = 1000, 100
    batch = []
    for i in range(per_key):
        for k in range(keys):
            batch.append({"value": b'{"v":1}', "key": f"k{k:04d}".encode(), "partition": k % 4})
    kafka.produce(src, batch)
    app = make_app(max_records_per_partition=25_000)
    app.dataframe(app.topic(src)).apply(count, stateful=True)
    rows = app.run(count=keys * per_key, timeout=120, metadata=True)
    assert len(rows) == keys * per_key
    seqs: dict[bytes, list[int]] = {}
    for r in rows:
        seqs.setdefault(r["_key"], []).append(r["n"])
    assert len(seqs) == keys
    assert all(ns == list(range(1, per_key + 1)) for ns in seqs.values())
