"""Joins over a skewed backlog on the broker and Spark: micro-batches capped by count end at a
common time across the joined topics, so the outputs are those of ``sdf.test()`` over the
records merged in timestamp order, as the reference's consumer hands them out."""

from __future__ import annotations

import json

from .cases import L, R
from .test_joins_e2e import canonical, topology

#: records per topic; with 2 partitions, 120 per partition, taken 50 at a time
N = 240


def backlog():
    """(timestamp, side, value, key, partition): the left topic's records span 1.2 s, the
    right topic's 12 s; no two records of different topics share a timestamp."""
    events = []
    for i in range(N):
        key = f"k{i % 4}".encode()
        events.append((10_000 + 5 * i, L, {"l": i}, key, i % 2))
        events.append((10_003 + 50 * i, R, {"r": i}, key, i % 2))
    return events


def in_process():
    """What ``sdf.test()`` gives for the backlog, merged in timestamp order."""
    from streamspark.models import Topic

    left, right, joined = topology(None, Topic("left"), Topic("right"))
    got = []
    for ts, side, value, key, _partition in sorted(backlog(), key=lambda e: e[0]):
        topic = left.topic if side == L else right.topic
        got.extend(v for v, *_ in joined.test(value, key=key, timestamp=ts, topic=topic))
    return got


def test_joins_over_a_skewed_backlog_match_sdf_test(make_app, kafka):
    left_name = kafka.new_topic(partitions=2, prefix="skew-left")
    right_name = kafka.new_topic(partitions=2, prefix="skew-right")
    for side, name in ((L, left_name), (R, right_name)):
        kafka.produce(
            name,
            [
                {"value": json.dumps(value).encode(), "key": key, "timestamp": ts, "partition": partition}
                for ts, s, value, key, partition in backlog()
                if s == side
            ],
        )
    want = in_process()
    # the right topic's first 50 records of a partition reach 5 s past the left topic's
    assert want and {row["config"] for row in want} >= {"asof-left-grace", "interval-outer", "interval-grace"}
    app = make_app(max_records_per_partition=50)
    topology(app, app.topic(left_name, key_deserializer="bytes"), app.topic(right_name, key_deserializer="bytes"))
    got = app.run(count=len(want), timeout=120)
    assert canonical(got) == canonical(want)
