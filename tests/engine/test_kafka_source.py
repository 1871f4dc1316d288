"""The Kafka source's planning of a micro-batch into Spark tasks, and its reading (real broker)."""

from __future__ import annotations

import json

from pyspark.sql.datasource import InputPartition

from streamspark.engine._kafka_source import (
    SMALL_TASK_RECORDS,
    SOURCE_COLUMNS,
    SourcePrivate,
    _KafkaStreamReader,
    _worker_consumers,
    source_options,
    split_budget,
)


def _reader(address: str = "127.0.0.1:1", parallelism: int = 2, min_per_task: int = 100) -> _KafkaStreamReader:
    options = source_options(
        ["t"],
        "earliest",
        max_records_per_partition=10**6,
        request_timeout=5,
        min_records_per_task=min_per_task,
        parallelism=parallelism,
    )
    return _KafkaStreamReader(options, SourcePrivate.of({"bootstrap.servers": address, "group.id": "plan"}))


def _tasks(reader: _KafkaStreamReader, start: dict, end: dict) -> list[tuple]:
    """The tasks' offset ranges; a task of one range as that range."""
    return [p.value[0] if len(p.value) == 1 else p.value for p in reader.partitions(start, end)]


def test_partitions_are_split_only_to_give_every_core_a_task():
    reader = _reader(parallelism=2, min_per_task=100)
    # as many partitions as cores: one task each, however large, and empty ones skipped
    assert _tasks(reader, {"t": {"0": 0, "1": 0, "2": 5}}, {"t": {"0": 1000, "1": 800, "2": 5}}) == [
        ("t", 0, 0, 1000),
        ("t", 1, 0, 800),
    ]
    # one partition, two cores: two halves that cover the range exactly
    assert _tasks(reader, {"t": {"0": 10}}, {"t": {"0": 1011}}) == [("t", 0, 10, 511), ("t", 0, 511, 1011)]
    # too few records for two pieces of min_records_per_task: one task
    assert _tasks(reader, {"t": {"0": 0}}, {"t": {"0": 150}}) == [("t", 0, 0, 150)]
    # eight cores, three partitions: each split in three, no piece smaller than min_records_per_task
    wide = _reader(parallelism=8, min_per_task=100)
    tasks = _tasks(wide, {"t": {"0": 0, "1": 0, "2": 0}}, {"t": {"0": 900, "1": 250, "2": 90}})
    assert tasks == [
        ("t", 0, 0, 300),
        ("t", 0, 300, 600),
        ("t", 0, 600, 900),
        ("t", 1, 0, 125),
        ("t", 1, 125, 250),
        ("t", 2, 0, 90),
    ]


def test_small_batches_over_more_partitions_than_cores_are_packed_into_a_task_per_core():
    reader = _reader(parallelism=2, min_per_task=10_000)
    # 4 partitions, 2 cores, 6,000 records (<= 2 x 10,000, > SMALL_TASK_RECORDS): two tasks,
    # balanced by records (largest range first into the lighter task: 2500+1000 and
    # 1500+1000), each in partition order; the ranges are exactly the planned ones
    assert SMALL_TASK_RECORDS == 5_000
    start = {"t": {"0": 0, "1": 1000, "2": 0, "3": 700}}
    end = {"t": {"0": 2500, "1": 2000, "2": 1500, "3": 1700}}
    tasks = _tasks(reader, start, end)
    assert tasks == [(("t", 0, 0, 2500), ("t", 3, 700, 1700)), (("t", 1, 1000, 2000), ("t", 2, 0, 1500))]
    assert sorted(r for task in tasks for r in task) == sorted(("t", int(p), start["t"][p], end["t"][p]) for p in end["t"])
    # the same batch planned again (a replay) gets the same tasks
    assert _tasks(reader, start, end) == tasks
    # past 2 x 10,000 records: a task per core, of whole partitions balanced within 10,000
    # records (see test_task_per_core.py)
    big = {"t": {"0": 10_000, "1": 6_000, "2": 4_100}}
    assert _tasks(reader, {"t": {"0": 0, "1": 0, "2": 0}}, big) == [("t", 0, 0, 10_000), (("t", 1, 0, 6_000), ("t", 2, 0, 4_100))]
    # two topics: packing mixes them; tasks and the ranges in each keep the planned order
    two = _reader(parallelism=2, min_per_task=10_000)
    assert _tasks(two, {"a": {"0": 0, "1": 0}, "b": {"0": 0}}, {"a": {"0": 2500, "1": 4000}, "b": {"0": 3000}}) == [
        (("a", 0, 0, 2500), ("b", 0, 0, 3000)),
        ("a", 1, 0, 4000),
    ]


def test_a_trickle_is_read_by_one_task():
    # at most SMALL_TASK_RECORDS records over more partitions than cores: one task, whatever
    # the cores (a task costs more of Spark's time than these records take)
    reader = _reader(parallelism=4, min_per_task=20_000)
    start = {"t": {str(p): 100 * p for p in range(8)}}
    end = {"t": {str(p): 100 * p + 600 for p in range(8)}}
    tasks = _tasks(reader, start, end)
    assert tasks == [tuple(("t", p, 100 * p, 100 * p + 600) for p in range(8))]
    # one record more than SMALL_TASK_RECORDS: two tasks
    end["t"]["0"] = 100 * 0 + 600 + (SMALL_TASK_RECORDS - 8 * 600) + 1
    assert len(_tasks(reader, start, end)) == 2


def test_read_records_are_tuples_in_source_column_order(kafka):
    topic = kafka.new_topic(partitions=1)
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i}".encode(),
                "timestamp": 1000 + i,
                "headers": [("h", b"v")] if i == 1 else None,
            }
            for i in range(3)
        ],
    )
    options = source_options([topic], "earliest", max_records_per_partition=100, request_timeout=10)
    private = SourcePrivate.of({"bootstrap.servers": kafka.address, "group.id": "read"})
    reader = _KafkaStreamReader(options, private)
    try:
        chunks = list(reader._read_records(InputPartition(((topic, 0, 1, 3),)), pickled_headers=False))
    finally:  # the worker-wide consumer this process opened
        _worker_consumers.pop(private.kafka_config_json).close()
    rows = [dict(zip(SOURCE_COLUMNS, r)) for chunk in chunks for r in chunk]
    assert [(r["offset"], r["key"], r["value"], r["timestamp"], r["headers"]) for r in rows] == [
        (1, b"k1", b'{"i": 1}', 1001, [("h", b"v")]),
        (2, b"k2", b'{"i": 2}', 1002, None),
    ]
    assert {(r["topic"], r["partition"]) for r in rows} == {(topic, 0)}


def test_a_task_of_several_ranges_reads_each_range_exactly(kafka):
    topic = kafka.new_topic(partitions=3)
    kafka.produce(topic, [{"value": b"%d" % i, "partition": i % 3} for i in range(30)])
    options = source_options([topic], "earliest", max_records_per_partition=100, request_timeout=10)
    private = SourcePrivate.of({"bootstrap.servers": kafka.address, "group.id": "multi"})
    reader = _KafkaStreamReader(options, private)
    try:
        chunks = list(
            reader._read_records(InputPartition(((topic, 2, 3, 7), (topic, 0, 0, 2), (topic, 1, 9, 10))), pickled_headers=False)
        )
    finally:
        _worker_consumers.pop(private.kafka_config_json).close()
    # a chunk per range, in the task's order, each holding exactly its offsets
    assert [[(r[1], r[2]) for r in chunk] for chunk in chunks] == [[(2, 3), (2, 4), (2, 5), (2, 6)], [(0, 0), (0, 1)], [(1, 9)]]
    assert [int(r[6]) % 3 for chunk in chunks for r in chunk] == [2, 2, 2, 2, 0, 0, 1]


def test_a_budget_is_shared_out_fairly_and_wholly():
    import random

    rng = random.Random(7)
    for _ in range(2000):
        available = [rng.choice([0, 1, 3, rng.randrange(50), rng.randrange(10_000)]) for _ in range(rng.randrange(1, 9))]
        budget = rng.randrange(1, 20_000)
        taken = split_budget(available, budget)
        assert all(0 <= t <= a for t, a in zip(taken, available))
        # every record of the budget is used while records wait
        assert sum(taken) == min(budget, sum(available))
        # max-min fair: a partition left with records waiting got at least as many as any other
        # but one (the integer remainder)
        for i, (t, a) in enumerate(zip(taken, available)):
            if t < a:
                assert all(t >= other - 1 for other in taken)


def test_a_micro_batch_takes_at_most_its_budget_from_all_partitions(kafka):
    """Backlogs of 5, 60 and 40 records and a budget of 50: the small partition is read to its
    end and the two others split the rest; the next micro-batches read the remainder, and the
    partitions' caps still hold within the budget."""
    topic = kafka.new_topic(partitions=3)
    sizes = {0: 5, 1: 60, 2: 40}
    kafka.produce(topic, [{"value": b"x", "partition": p} for p, size in sizes.items() for _ in range(size)])
    private = SourcePrivate.of({"bootstrap.servers": kafka.address, "group.id": "budget"})

    def reader(**caps) -> _KafkaStreamReader:
        return _KafkaStreamReader(source_options([topic], "earliest", request_timeout=10, **caps), private)

    budgeted = reader(max_records_per_partition=1000, max_records_per_batch=50)
    start = budgeted.initialOffset()
    assert start == {topic: {"0": 0, "1": 0, "2": 0}}
    ends = []
    for _ in range(3):
        end = budgeted.latestOffset(start, None)
        ends.append({p: end[topic][p] - start[topic][p] for p in sorted(end[topic])})
        start = end
    assert ends == [{"0": 5, "1": 23, "2": 22}, {"0": 0, "1": 32, "2": 18}, {"0": 0, "1": 5, "2": 0}]
    # a budget below the partitions with records waiting still reads a record of each
    tiny = reader(max_records_per_partition=1000, max_records_per_batch=2)
    assert tiny.latestOffset({topic: {"0": 0, "1": 0, "2": 0}}, None) == {topic: {"0": 1, "1": 1, "2": 1}}
    # the per-partition cap bounds each partition inside the budget
    capped = reader(max_records_per_partition=10, max_records_per_batch=50)
    assert capped.latestOffset({topic: {"0": 0, "1": 0, "2": 0}}, None) == {topic: {"0": 5, "1": 10, "2": 10}}
    # without a budget, only the caps bound a micro-batch
    whole = reader(max_records_per_partition=1000)
    assert whole.latestOffset({topic: {"0": 0, "1": 0, "2": 0}}, None) == {topic: {"0": 5, "1": 60, "2": 40}}
    for r in (budgeted, tiny, capped, whole):
        r.stop()


def test_a_run_with_a_count_reads_what_the_budget_file_says(kafka):
    """``app.run(count=N)``: the driver writes the next micro-batch's budget into a file and the
    source takes exactly that many records (below the partitions waiting too); each planning
    reads the file again; without the file only the caps bound a micro-batch."""
    from streamspark.engine.count_budget import CountBudget

    topic = kafka.new_topic(partitions=3)
    sizes = {0: 5, 1: 60, 2: 40}
    kafka.produce(topic, [{"value": b"x", "partition": p} for p, size in sizes.items() for _ in range(size)])
    private = SourcePrivate.of({"bootstrap.servers": kafka.address, "group.id": "count-budget"})
    budget = CountBudget(2)
    counted = _KafkaStreamReader(
        source_options([topic], "earliest", 1000, request_timeout=10, count_budget_file=budget.path), private
    )
    start = counted.initialOffset()
    end = counted.latestOffset(start, None)
    assert sum(end[topic][p] - start[topic][p] for p in end[topic]) == 2
    budget.update(inputs=2, outputs=1)  # one output missing, one per two records: read 2 more
    again = counted.latestOffset(end, None)
    assert sum(again[topic][p] - end[topic][p] for p in end[topic]) == 2
    budget.close()  # no file: no bound but the caps
    assert counted.latestOffset(start, None) == {topic: {"0": 5, "1": 60, "2": 40}}
    counted.stop()


def test_docstring_examples():
    import doctest

    from streamspark.engine import _kafka_source, session

    for module in (_kafka_source, session):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0
