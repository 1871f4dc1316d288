"""A micro-batch over more partitions than cores is read by a task per core (the ``task-per-core``
fast path); the plain path reads a task per partition. Both must give the same results."""

from __future__ import annotations

import json
import random

import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine._kafka_source import MAX_TASK_RECORDS, SMALL_TASK_RECORDS, Range, plan_tasks
from streamspark.engine.strategies import Strategies


def _covered(tasks: list[tuple[Range, ...]]) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """The offsets the tasks read, per partition, as sorted disjoint intervals (adjacent pieces
    merged); overlapping pieces fail."""
    pieces: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for task in tasks:
        for t, p, lo, hi in task:
            pieces.setdefault((t, p), []).append((lo, hi))
    merged = {}
    for tp, spans in pieces.items():
        spans.sort()
        out = [spans[0]]
        for lo, hi in spans[1:]:
            assert lo >= out[-1][1], f"{tp}: offsets {lo}..{out[-1][1]} read twice"
            out[-1:] = [(out[-1][0], hi)] if lo == out[-1][1] else [out[-1], (lo, hi)]
        merged[tp] = out
    return merged


def _load(task: tuple[Range, ...]) -> int:
    return sum(hi - lo for _, _, lo, hi in task)


def test_tasks_per_core_cover_every_record_once_and_are_balanced():
    rng = random.Random(11)
    for _ in range(3000):
        parallelism = rng.randrange(1, 9)
        min_per_task = rng.choice([0, 1, 10, 100, 20_000])
        ranges: list[Range] = []
        for topic in rng.sample(["a", "b", "c"], rng.randrange(1, 4)):
            for p in range(rng.randrange(1, 7)):
                begin = rng.randrange(0, 1000)
                size = rng.choice([1, 7, rng.randrange(1, 500), rng.randrange(1, 60_000), rng.randrange(1, 700_000)])
                ranges.append((topic, p, begin, begin + size))
        total = sum(hi - lo for _, _, lo, hi in ranges)
        tasks = plan_tasks(ranges, parallelism, min_per_task)
        # every planned record is read exactly once, and pieces of a range keep their order
        assert _covered(tasks) == _covered([(r,) for r in ranges])
        assert all(lo < hi for task in tasks for _, _, lo, hi in task)
        assert plan_tasks(ranges, parallelism, min_per_task) == tasks  # a replay plans the same tasks
        plain = plan_tasks(ranges, parallelism, min_per_task, per_core=False)
        assert _covered(plain) == _covered([(r,) for r in ranges])
        if len(ranges) <= parallelism:
            assert plain == tasks  # the split rule either way (tested in test_kafka_source)
            continue
        assert plain == [(r,) for r in ranges]  # the plain path: a task per range
        if total <= parallelism * min_per_task:
            assert len(tasks) == min(parallelism, -(-total // SMALL_TASK_RECORDS))
            assert sorted(r for task in tasks for r in task) == sorted(ranges)  # whole ranges
            continue
        # a task per core (a multiple of the cores past MAX_TASK_RECORDS an even share, never
        # more than the plain path's tasks rounded up to whole waves), balanced
        waves = min(-(-total // (parallelism * MAX_TASK_RECORDS)), -(-len(ranges) // parallelism))
        count = parallelism * waves
        assert len(tasks) == min(count, total)
        share = -(-total // count)
        assert max(_load(task) for task in tasks) <= share + min_per_task
        # the ranges of a task, and the tasks, follow the planned order of the ranges
        order = {(t, p): i for i, (t, p, _, _) in enumerate(ranges)}
        firsts = [(order[(task[0][0], task[0][1])], task[0][2]) for task in tasks]
        assert firsts == sorted(firsts)
        for task in tasks:
            keys = [(order[(t, p)], lo) for t, p, lo, _ in task]
            assert keys == sorted(keys)


def test_large_batches_over_more_partitions_than_cores_get_a_task_per_core():
    # four equal partitions, two cores: two tasks of two whole partitions each
    four = [("t", p, 0, 100_000) for p in range(4)]
    assert plan_tasks(four, parallelism=2, min_per_task=20_000) == [(four[0], four[2]), (four[1], four[3])]
    # three equal partitions: whole ranges would load one task twice the other, so the
    # middle partition is cut at the even share
    three = [("t", p, 10, 90_010) for p in range(3)]
    assert plan_tasks(three, parallelism=2, min_per_task=20_000) == [
        (("t", 0, 10, 90_010), ("t", 1, 10, 45_010)),
        (("t", 1, 45_010, 90_010), ("t", 2, 10, 90_010)),
    ]
    # uneven partitions that whole ranges balance within min_per_task: no cut
    assert plan_tasks([("t", 0, 0, 60_000), ("t", 1, 0, 30_000), ("t", 2, 0, 25_000)], 2, 20_000) == [
        (("t", 0, 0, 60_000),),
        (("t", 1, 0, 30_000), ("t", 2, 0, 25_000)),
    ]
    # past MAX_TASK_RECORDS an even share: as many tasks again per core (2.4M records: 3 x 2 tasks)
    assert MAX_TASK_RECORDS == 500_000
    eight = [("t", p, 0, 300_000) for p in range(8)]
    tasks = plan_tasks(eight, parallelism=2, min_per_task=20_000)
    assert [_load(task) for task in tasks] == [400_000] * 6
    # never more tasks than partitions, rounded up to whole waves (exactly-once has a marker
    # slot per task): 3 partitions of 4M records on 2 cores give 4 tasks, not 24
    huge = [("t", p, 0, 4_000_000) for p in range(3)]
    assert [_load(task) for task in plan_tasks(huge, parallelism=2, min_per_task=20_000)] == [3_000_000] * 4
    # the plain path: a task per partition
    assert plan_tasks(three, parallelism=2, min_per_task=20_000, per_core=False) == [(r,) for r in three]


def _tasks_per_batch(monkeypatch) -> list[int]:
    """Record, per micro-batch with records, how many source tasks read records (on the fused
    path a task reports one summary)."""
    seen: list[int] = []
    real = runner_module.QueryRunner._raise_errors

    def spy(summaries):
        if any(s.input_count for s in summaries):
            seen.append(len({s.spark_partition for s in summaries if s.input_count}))
        return real(summaries)

    monkeypatch.setattr(runner_module.QueryRunner, "_raise_errors", staticmethod(spy))
    return seen


@pytest.fixture
def small_tasks(monkeypatch):
    """The test's few hundred records count as a large micro-batch: min_records_per_task 10."""
    real = runner_module.source_options
    monkeypatch.setattr(runner_module, "source_options", lambda *a, **k: real(*a, **{**k, "min_records_per_task": 10}))


# five partitions of 300, 300, 300, 50 and 10 records: whole ranges would load one task 600
# records and the other 360, so the second partition is cut between the two tasks
SIZES = (300, 300, 300, 50, 10)


def _produce(kafka) -> str:
    src = kafka.new_topic(partitions=len(SIZES))
    kafka.produce(
        src,
        [
            {
                "value": json.dumps({"p": p, "i": i}).encode(),
                "key": f"p{p}-k{i % 4}".encode(),
                "partition": p,
                "timestamp": 1_000 + i,
            }
            for p, size in enumerate(SIZES)
            for i in range(size)
        ],
    )
    return src


@pytest.mark.usefixtures("small_tasks")
def test_stateless_pipeline_gives_the_same_outputs_with_a_task_per_core_or_per_partition(make_app, kafka, tmp_path, monkeypatch):
    src = _produce(kafka)
    tasks = _tasks_per_batch(monkeypatch)
    expected = sum(SIZES) - sum(1 for size in SIZES for i in range(size) if i % 3 == 0)
    results = {}
    for per_core in (True, False):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if per_core else {"task-per-core"}))
        out = kafka.new_topic()
        app = make_app(state_dir=str(tmp_path / f"state-{per_core}"))
        sdf = app.dataframe(app.topic(src, key_deserializer="str"))
        sdf = sdf[sdf["i"] % 3 != 0]
        sdf["twice"] = sdf["i"] * 2
        sdf.to_topic(app.topic(out, key_serializer="str"))
        app.run(timeout=3)  # the whole backlog in one micro-batch (a count would bound its records)
        msgs = kafka.consume(out, expected=expected)
        results[per_core] = sorted((m.key(), m.value(), m.timestamp()[1]) for m in msgs)
    assert len(results[True]) == expected
    assert results[True] == results[False]
    # one micro-batch each: two tasks (one per core of the local[2] session), then one per partition
    assert tasks == [2, len(SIZES)]


@pytest.mark.usefixtures("small_tasks")
def test_stateful_pipeline_counts_in_offset_order_when_a_partition_is_cut_between_tasks(
    make_app, kafka, tmp_path, monkeypatch, spark
):
    src = _produce(kafka)
    # the tasks the source plans for this batch on the session's cores: partition 1 is cut
    from streamspark.engine.session import parallelism

    planned = plan_tasks([(src, p, 0, size) for p, size in enumerate(SIZES)], parallelism(spark), 10)
    assert len(planned) == 2 and all(any(p == 1 for _, p, _, _ in task) for task in planned)
    results = {}
    for per_core in (True, False):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if per_core else {"task-per-core"}))
        out = kafka.new_topic()
        app = make_app(state_dir=str(tmp_path / f"state-{per_core}"))

        def count(value, state):
            n = state.get("n", 0) + 1
            state.set("n", n)
            return {**value, "n": n}

        app.dataframe(app.topic(src, key_deserializer="str")).apply(count, stateful=True).to_topic(
            app.topic(out, key_serializer="str")
        )
        app.run(count=sum(SIZES), timeout=90)
        values = [json.loads(m.value()) for m in kafka.consume(out, expected=sum(SIZES))]
        results[per_core] = sorted((v["p"], v["i"], v["n"]) for v in values)
    # a key's records are counted in offset order, also across the cut in partition 1
    assert results[True] == sorted((p, i, i // 4 + 1) for p, size in enumerate(SIZES) for i in range(size))
    assert results[True] == results[False]
