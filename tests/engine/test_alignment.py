"""Timestamp order across topics (``engine/alignment.py``) and when a plan needs it."""

from __future__ import annotations

import random

from streamspark.dataframe import StreamingDataFrame
from streamspark.engine.alignment import in_time_order
from streamspark.engine._plan import PipelinePlan
from streamspark.models import Topic


def test_each_partition_keeps_its_offset_order_and_heads_go_by_timestamp():
    a = [("a", 0, o, ts) for o, ts in enumerate([10, 40, 20])]  # not sorted by time within the partition
    b = [("b", 0, o, ts) for o, ts in enumerate([15, 30])]
    records = a + b
    random.Random(3).shuffle(records)
    got = [(r[0], r[2]) for r in in_time_order(records, {"a": 0, "b": 1})]
    assert got == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2)]
    for name in "ab":  # offset order per partition, always
        offsets = [o for t, o in got if t == name]
        assert offsets == sorted(offsets)


def test_ties_go_to_the_topic_defined_first_then_the_lower_partition():
    records = [("b", 0, 0, 5), ("a", 1, 0, 5), ("a", 0, 0, 5)]
    assert [(r[0], r[1]) for r in in_time_order(records, {"a": 0, "b": 1})] == [("a", 0), ("a", 1), ("b", 0)]
    assert [(r[0], r[1]) for r in in_time_order(records, {"b": 0, "a": 1})] == [("b", 0), ("a", 0), ("a", 1)]


def test_other_positions_and_a_single_partition():
    rows = [(7, "k", "v", 30, None, "t", 0, 1), (7, "k", "v", 10, None, "t", 0, 0)]
    assert [r[7] for r in in_time_order(rows, {"t": 0}, 5, 6, 7, 3)] == [0, 1]


def _plan(roots):
    return PipelinePlan(
        run_id="r",
        topics={name: Topic(name) for name in roots},
        roots=roots,
        producer_config={},
        on_consumer_error=lambda *a: False,
        on_processing_error=lambda *a: False,
        on_producer_error=lambda *a: False,
    )


def test_plans_align_when_topics_meet():
    a, b = StreamingDataFrame(Topic("a")), StreamingDataFrame(Topic("b"))
    branches = a.apply(lambda v: v).concat(a.apply(lambda v: v))
    assert not _plan({"a": branches.stream.root()}).time_aligned
    a.concat(b)
    assert _plan({"a": a.stream.root(), "b": b.stream.root()}).time_aligned
    c, d = StreamingDataFrame(Topic("c")), StreamingDataFrame(Topic("d"))
    c.join_asof(d)
    assert _plan({"c": c.stream.root(), "d": d.stream.root()}).time_aligned


def _head_merge(records, rank):
    """The order by definition: each partition in offset order, always the head with the
    smallest timestamp next, ties to the topic ranked first, then the lower partition."""
    queues = {}
    for record in records:
        queues.setdefault((record[0], record[1]), []).append(record)
    for queue in queues.values():
        queue.sort(key=lambda r: r[2])
    out = []
    while any(queues.values()):
        tp = min((tp for tp, q in queues.items() if q), key=lambda tp: (queues[tp][0][3], rank.get(tp[0], len(rank)), tp[1]))
        out.append(queues[tp].pop(0))
    return out


def test_partitions_in_time_order_or_out_of_it_merge_as_their_heads_do():
    rnd = random.Random(7)
    rank = {"a": 0, "b": 1}
    for case in range(200):
        records = []
        for topic in ("a", "b", "c"):  # "c": not ranked, comes last on ties
            for partition in range(rnd.randint(0, 3)):
                stamps = [rnd.randint(0, 30) for _ in range(rnd.randint(0, 12))]
                if case % 3:  # mostly partitions already in timestamp order, as Kafka timestamps usually are
                    stamps.sort()
                records.extend((topic, partition, offset, ts) for offset, ts in enumerate(stamps))
        expected = _head_merge(records, rank)
        assert in_time_order(list(records), rank) == expected  # runs of one partition (the source's chunks)
        rnd.shuffle(records)
        assert in_time_order(records, rank) == expected  # interleaved
