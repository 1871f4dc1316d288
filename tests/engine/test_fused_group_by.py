"""Pipelines with a group_by: the steps before it run inside the Kafka source's read(), which
packs the re-keyed records per state bucket (the fused group_by path, used automatically). The
plain path (source rows -> mapInArrow -> a row per re-keyed record) must give the same results,
report errors alike, and a checkpoint written by one must carry on with the other."""

from __future__ import annotations

import json
import pickle

import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.engine.task_entry import pack_grouped
from streamspark.engine.task_failure import TaskFailure
from streamspark.engine.summary import Stage
from streamspark.exceptions import ProcessingError


def count(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "n": n}


def _produce(kafka, topic, start, n):
    kafka.produce(
        topic,
        [
            {
                # a room's records all come from one partition (i % 7 % 3), so the order in which
                # its count sees them does not depend on where micro-batches end
                "value": json.dumps({"i": i, "room": f"r{i % 7 % 3}-{i % 2}"}).encode(),
                "key": f"k{i % 7}".encode(),
                "partition": i % 7 % 3,
                "timestamp": 1_000 + i,
                "headers": [("h", str(i).encode())] if i % 4 == 0 else None,
            }
            for i in range(start, start + n)
        ],
    )


def _use(monkeypatch, fused: bool) -> list[object]:
    """Take the fused group_by path or the plain one; returns the plans the source was given to run."""
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if fused else {"fused-group-by"}))
    given: list[object] = []
    real = runner_module.query_source
    monkeypatch.setattr(
        runner_module, "query_source", lambda config, plan=None: (plan is not None and given.append(plan)) or real(config, plan)
    )
    return given


def _run(make_app, src, out, state_dir, group, expected, fused, monkeypatch):
    given = _use(monkeypatch, fused)
    app = make_app(state_dir=state_dir, consumer_group=group, state_buckets=4, max_records_per_partition=25)
    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    sdf = sdf[sdf["i"] % 11 != 0]  # a filter before the group_by
    sdf["doubled"] = sdf["i"] * 2
    sdf = sdf.group_by("room")
    sdf = sdf.apply(count, stateful=True)
    sdf.to_topic(app.topic(out, key_serializer="str"))
    rows = app.run(count=expected, timeout=60, metadata=True)
    assert len(given) == (1 if fused else 0), "the source ran the steps before the group_by exactly on the fused path"
    return sorted((r["_key"], r["i"], r["n"], r["doubled"], r["_partition"], r["_offset"], r["_timestamp"]) for r in rows)


def _kept(start, n):
    return sum(1 for i in range(start, start + n) if i % 11 != 0)


def test_fused_and_plain_group_by_agree_and_share_checkpoints(make_app, kafka, tmp_path, monkeypatch):
    src = kafka.new_topic(partitions=3)
    _produce(kafka, src, 0, 140)
    both_dir, fused_dir = str(tmp_path / "plain-then-fused"), str(tmp_path / "fused")
    # several micro-batches (25 records per partition each) on the plain path
    first = _run(make_app, src, kafka.new_topic(), both_dir, "g1", _kept(0, 140), False, monkeypatch)
    _produce(kafka, src, 140, 70)
    # the same checkpoint continues on the fused path: the counts go on from the plain path's state
    second = _run(make_app, src, kafka.new_topic(), both_dir, "g1", _kept(140, 70), True, monkeypatch)
    # the fused path from scratch over everything
    out = kafka.new_topic()
    fused = _run(make_app, src, out, fused_dir, "g2", _kept(0, 210), True, monkeypatch)

    assert len(fused) == _kept(0, 210)
    assert sorted(first + second) == fused
    per_room: dict[str, list[tuple[int, int]]] = {}
    for room, i, n, doubled, _, _, _ in fused:
        assert doubled == 2 * i and room == f"r{i % 7 % 3}-{i % 2}"
        per_room.setdefault(room, []).append((i, n))
    # each new key counted in Kafka order, from 1 without a gap
    assert all([n for _, n in sorted(seq)] == list(range(1, len(seq) + 1)) for seq in per_room.values())
    assert len(per_room) == 6
    produced = kafka.consume(out, expected=len(fused))
    assert sorted((m.key().decode(), json.loads(m.value())["i"], json.loads(m.value())["n"]) for m in produced) == sorted(
        (room, i, n) for room, i, n, _, _, _, _ in fused
    )


def test_a_key_counts_its_records_in_partition_order_on_both_paths(make_app, kafka, tmp_path, monkeypatch):
    """Records of one new key from one partition reach the state in offset order, across chunks."""
    src = kafka.new_topic(partitions=1)
    kafka.produce(src, [{"value": json.dumps({"i": i, "room": "one"}).encode(), "key": f"k{i}".encode()} for i in range(60)])
    results = {}
    for fused in (True, False):
        _use(monkeypatch, fused)
        app = make_app(state_dir=str(tmp_path / f"order-{fused}"), state_buckets=4, max_records_per_partition=1000)
        sdf = app.dataframe(app.topic(src)).group_by("room").apply(count, stateful=True)
        rows = app.run(count=60, timeout=60)
        results[fused] = [(r["i"], r["n"]) for r in sorted(rows, key=lambda r: r["i"])]
        assert results[fused] == [(i, i + 1) for i in range(60)]
    assert results[True] == results[False]


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "plain"])
def test_errors_before_the_group_by_are_reported_alike(make_app, kafka, fused, monkeypatch):
    src = kafka.new_topic()
    kafka.produce(src, [{"value": b'{"room": "a"}'}, {"value": b"not json"}, {"value": b'{"room": "b"}'}])
    _use(monkeypatch, fused)
    app = make_app()
    app.dataframe(app.topic(src)).group_by("room").apply(count, stateful=True)
    with pytest.raises(ProcessingError, match="offset=1"):
        app.run(count=2, timeout=60)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "plain"])
def test_a_skipped_error_before_the_group_by_skips_only_that_record(make_app, kafka, fused, monkeypatch):
    src = kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"room": r, "v": v}).encode()} for r, v in [("a", 1), ("a", 0), ("b", 2)]])
    _use(monkeypatch, fused)
    skipped = []
    app = make_app(on_processing_error=lambda exc, row, log: skipped.append(type(exc).__name__) or True)
    sdf = app.dataframe(app.topic(src)).apply(lambda v: {**v, "inv": 1 / v["v"]})
    sdf.group_by("room").apply(count, stateful=True)
    rows = app.run(count=2, timeout=60)
    assert sorted((r["room"], r["n"]) for r in rows) == [("a", 1), ("b", 1)]
    assert skipped == ["ZeroDivisionError"]


def test_fused_group_by_under_exactly_once(make_app, kafka):
    """The source task's transaction holds the outputs produced before the group_by; the state
    bucket's holds those after it."""
    src, before, after = kafka.new_topic(partitions=2), kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"v": i, "room": f"r{i % 3}"}).encode(), "partition": i % 2} for i in range(40)])
    app = make_app(processing_guarantee="exactly-once", state_buckets=4)
    sdf = app.dataframe(app.topic(src))
    sdf.to_topic(app.topic(before))
    sdf.group_by("room").apply(count, stateful=True).to_topic(app.topic(after))
    app.run(count=80, timeout=60)
    assert sorted(json.loads(m.value())["v"] for m in kafka.consume(before, expected=40, isolation="read_committed")) == list(
        range(40)
    )
    counted = [json.loads(m.value()) for m in kafka.consume(after, expected=40, isolation="read_committed")]
    assert sorted(v["v"] for v in counted) == list(range(40))
    for room in ("r0", "r1", "r2"):
        assert sorted(v["n"] for v in counted if v["room"] == room) == list(
            range(1, 1 + sum(1 for i in range(40) if i % 3 == int(room[1])))
        )


def test_pack_grouped_names_the_record_that_cannot_be_pickled():
    rows = [(0, 1, "k", {"ok": 1}, 5, None, "t", 2, 10), (0, 1, "k", {"bad": lambda: None}, 6, None, "t", 2, 11)]
    with pytest.raises(TaskFailure) as info:
        pack_grouped(rows)
    assert (info.value.stage, info.value.topic, info.value.partition, info.value.offset) == (Stage.GROUP_BY, "t", 2, 11)


def test_pack_grouped_keeps_each_buckets_records_in_order():
    rows = [(b % 2, 9, f"k{b}", {"i": b}, b, None, "t", 0, 100 + b) for b in range(6)]
    batch = pack_grouped(rows)
    assert batch.column("_bucket").to_pylist() == [0, 1]
    assert batch.column("partition").to_pylist() == [0, 0]
    assert batch.column("offset").to_pylist() == [100, 101]
    unpacked = [pickle.loads(blob) for blob in batch.column("records").to_pylist()]
    assert [[r[2]["i"] for r in chunk] for chunk in unpacked] == [[0, 2, 4], [1, 3, 5]]
    assert unpacked[0][0] == (9, "k0", {"i": 0}, 0, None, "t", 0, 100)
