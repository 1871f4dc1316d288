"""``join_asof`` and ``join_interval`` on the broker and Spark: the case tables give the same
outputs as ``sdf.test()``, late records arrive in a later micro-batch, and topics with
different partition counts are refused."""

from __future__ import annotations

import json

import pytest

from streamspark.models.topics import TopicPartitionsMismatch

from .cases import CASES, CONFIGS, L, build

# one None-key case only: on Spark all cases share the topics, and None keys cannot be told apart
_NONE_CASE = next(i for i, c in enumerate(CASES) if any(e[3] is None for e in c.events))
E2E = [(i, c) for i, c in enumerate(CASES) if i == _NONE_CASE or all(e[3] is not None for e in c.events)]


def case_key(index, key):
    return None if key is None else f"{index}|".encode() + key


def tagged(config):
    def tag(value, key, timestamp, headers):
        return {"config": config, "value": value, "key": key, "ts": timestamp}

    return tag


def topology(app_or_none, left_topic, right_topic):
    """Every configuration joined once, outputs tagged with their configuration."""
    from streamspark.dataframe import StreamingDataFrame

    if app_or_none is None:
        left, right = StreamingDataFrame(left_topic), StreamingDataFrame(right_topic)
    else:
        left, right = app_or_none.dataframe(left_topic), app_or_none.dataframe(right_topic)
    last = None
    for config in CONFIGS:
        last = build(left, right, config).apply(tagged(config), metadata=True)
    return left, right, last


def phase_events(phase):
    """The events of ``phase`` of every case, in (timestamp, left first) order: each topic's
    records are then in timestamp order, so time alignment gives this order per key."""
    events = [
        (ts, 0 if side == L else 1, n, side, value, case_key(i, key))
        for i, case in E2E
        for n, (ph, side, value, key, ts) in enumerate(case.events)
        if ph == phase
    ]
    return sorted(events, key=lambda e: (e[0], e[1]))


def in_process(phases):
    """What ``sdf.test()`` gives for the same events, per phase."""
    from streamspark.models import Topic

    left, right, joined = topology(None, Topic("left"), Topic("right"))
    outputs = []
    for phase in phases:
        got = []
        for ts, _rank, _n, side, value, key in phase_events(phase):
            topic = left.topic if side == L else right.topic
            got.extend(v for v, *_ in joined.test(value, key=key, timestamp=ts, topic=topic))
        outputs.append(got)
    return outputs


def canonical(rows):
    return sorted(json.dumps({**r, "key": None if r["key"] is None else r["key"].decode()}, sort_keys=True) for r in rows)


def test_in_process_outputs_match_the_case_tables():
    """The e2e's expected outputs are the case tables' (the tables are pinned by test_joins.py)."""
    phases = sorted({e[0] for _, c in E2E for e in c.events})
    got = [row for rows in in_process(phases) for row in rows]
    for i, case in E2E:

        def belongs(row, i=i, case=case):
            if row["config"] != case.config:
                return False
            return row["key"] is None if i == _NONE_CASE else (row["key"] or b"").startswith(f"{i}|".encode())

        mine = [(r["value"], r["key"], r["ts"]) for r in got if belongs(r)]
        assert mine == [(v, case_key(i, k), t) for v, k, t in case.expected], case.id


def test_join_cases_on_spark_match_sdf_test(make_app, kafka):
    left_name, right_name = kafka.new_topic(prefix="join-left"), kafka.new_topic(prefix="join-right")
    phases = sorted({e[0] for _, c in E2E for e in c.events})
    expected = in_process(phases)
    app = make_app()
    topology(app, app.topic(left_name, key_deserializer="bytes"), app.topic(right_name, key_deserializer="bytes"))
    for phase, want in zip(phases, expected):
        for ts, _rank, _n, side, value, key in phase_events(phase):
            kafka.produce(
                left_name if side == L else right_name, [{"value": json.dumps(value).encode(), "key": key, "timestamp": ts}]
            )
        got = app.run(count=len(want), timeout=60) if want else app.run(timeout=8)
        assert canonical(got) == canonical(want), f"phase {phase}"


def test_join_of_topics_with_different_partition_counts_is_refused(make_app, kafka):
    left_name, right_name = kafka.new_topic(partitions=2), kafka.new_topic(partitions=1)
    app = make_app()
    app.dataframe(app.topic(left_name)).join_asof(app.dataframe(app.topic(right_name)))
    with pytest.raises(TopicPartitionsMismatch, match=rf'"{left_name}" \(2 partitions\), "{right_name}" \(1 partitions\)'):
        app.run(timeout=5)


def test_join_after_group_by_on_both_sides(make_app, kafka):
    """Both sides re-keyed by a column: the join runs after the shuffle, per new key."""
    left_name, right_name = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2)
    kafka.produce(
        right_name,
        [{"value": json.dumps({"device": "d1", "model": "m1"}).encode(), "key": b"x", "timestamp": 1_000, "partition": 1}],
    )
    kafka.produce(
        left_name,
        [
            {"value": json.dumps({"device": "d1", "t": 20}).encode(), "key": b"y", "timestamp": 2_000, "partition": 0},
            {"value": json.dumps({"device": "d2", "t": 30}).encode(), "key": b"z", "timestamp": 2_000, "partition": 1},
        ],
    )
    app = make_app()
    readings = app.dataframe(app.topic(left_name)).group_by("device")
    configs = app.dataframe(app.topic(right_name)).group_by("device")
    readings.join_asof(configs, how="left", on_merge="keep-left")
    rows = app.run(count=2, timeout=60)
    assert sorted(rows, key=lambda r: r["t"]) == [{"device": "d1", "model": "m1", "t": 20}, {"device": "d2", "t": 30}]


def test_the_same_right_dataframe_joined_twice_on_spark(make_app, kafka):
    """Two joins of one right dataframe under different names: its records reach both."""
    left_name, right_name = kafka.new_topic(), kafka.new_topic()
    kafka.produce(right_name, [{"value": json.dumps({"model": "m1"}).encode(), "key": b"d1", "timestamp": 1_000}])
    kafka.produce(left_name, [{"value": json.dumps({"t": 20}).encode(), "key": b"d1", "timestamp": 2_000}])
    app = make_app()
    readings = app.dataframe(app.topic(left_name))
    configs = app.dataframe(app.topic(right_name))
    first = readings.join_asof(configs, how="left", on_merge="keep-left", name="a")
    both = first.join_asof(configs, how="left", on_merge=lambda left, right: {**left, "again": right}, name="b")
    both.apply(lambda v: v)
    rows = app.run(count=1, timeout=60)
    assert rows == [{"t": 20, "model": "m1", "again": {"model": "m1"}}]
