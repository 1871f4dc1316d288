"""Timestamp order across topics, for pipelines where records of several topics meet.

When a ``concat`` or a join brings several topics together, the reference's consumer hands
out records of one partition number in timestamp order across the topics (each partition's
own records stay in offset order). A state bucket does the same with the records of its
micro-batch: the next record is always the head, among its topic partitions, with the
smallest timestamp; ties go to the topic defined first, then the lower partition.

>>> a = [("a", 0, 0, 10), ("a", 0, 1, 30)]
>>> b = [("b", 0, 0, 20), ("b", 0, 1, 5)]
>>> [(r[0], r[2]) for r in in_time_order(a + b, {"a": 0, "b": 1})]
[('a', 0), ('b', 0), ('b', 1), ('a', 1)]
"""

from __future__ import annotations

import heapq
from itertools import groupby
from operator import itemgetter
from typing import Any, Iterable

__all__ = ("in_time_order",)


def in_time_order(
    records: Iterable[tuple[Any, ...]],
    topic_rank: dict[str, int],
    topic_at: int = 0,
    partition_at: int = 1,
    offset_at: int = 2,
    timestamp_at: int = 3,
) -> list[tuple[Any, ...]]:
    """``records`` (tuples) merged by timestamp across their topic partitions.

    :param topic_rank: the order of the topics for ties (unknown topics come last).
    :param topic_at: the positions of the topic, partition, offset and timestamp in a record.
    """
    queues: dict[tuple[str, int], list[tuple[Any, ...]]] = {}
    # records come in runs of one topic partition (a source's chunk): one dict lookup per run
    for tp, run in groupby(records, itemgetter(topic_at, partition_at)):
        queue = queues.get(tp)
        if queue is None:
            queues[tp] = list(run)
        else:
            queue.extend(run)
    if len(queues) < 2:
        only = next(iter(queues.values()), [])
        only.sort(key=itemgetter(offset_at))
        return only
    last = len(topic_rank)
    ordered = [queue for _, queue in sorted(queues.items(), key=lambda item: (topic_rank.get(item[0][0], last), item[0][1]))]
    by_offset = itemgetter(offset_at)
    for queue in ordered:
        queue.sort(key=by_offset)
    merged = _sorted_runs(ordered, itemgetter(timestamp_at))
    if merged is not None:
        return merged
    return list(heapq.merge(*ordered, key=itemgetter(timestamp_at)))


def _sorted_runs(queues: list[list[tuple[Any, ...]]], by_time: Any) -> "list[tuple[Any, ...]] | None":
    """The head merge of ``queues`` when each is already in timestamp order (the usual case),
    as one stable sort of their concatenation, which gives the same order: equal timestamps
    keep the queues' order, then each queue's own. None when a queue is out of timestamp
    order (or its timestamps do not compare): the heap then merges them."""
    merged: list[tuple[Any, ...]] = []
    try:
        for queue in queues:
            stamps = list(map(by_time, queue))
            if stamps != sorted(stamps):
                return None
            merged += queue
        merged.sort(key=by_time)
    except TypeError:
        return None
    return merged
