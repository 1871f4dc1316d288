"""group_by: re-key, shuffle by the new key on Spark, state per new key."""

from __future__ import annotations

import json

import pytest

from streamspark.dataframe import StreamingDataFrame
from streamspark.dataframe.exceptions import GroupByDuplicate, GroupByLimitExceeded, GroupByNestingLimit
from streamspark.models import Topic

from .test_stateful_e2e import count


def test_group_by_rules_and_in_process_rekey():
    sdf = StreamingDataFrame(Topic("orders"))
    grouped = sdf.group_by("customer")
    # as the reference: another group_by may branch from the same dataframe under another name;
    # the same one twice, or a group_by of a grouped dataframe, is refused
    branched = StreamingDataFrame(Topic("orders"))
    first = branched.group_by("customer")
    assert branched.group_by("other").stream_id == "orders--groupby--other"
    with pytest.raises(GroupByDuplicate):
        branched.group_by("customer")
    with pytest.raises(GroupByNestingLimit):
        first.group_by("other")
    assert issubclass(GroupByDuplicate, GroupByLimitExceeded) and issubclass(GroupByNestingLimit, GroupByLimitExceeded)
    with pytest.raises(ValueError, match="name"):
        StreamingDataFrame(Topic("o")).group_by(lambda v: v["x"])
    with pytest.raises(ValueError, match="name"):
        StreamingDataFrame(Topic("o")).group_by(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        StreamingDataFrame(Topic("o")).group_by(5, name="five")  # type: ignore[arg-type]
    assert grouped.stream_id == "orders--groupby--customer"
    by_fn = StreamingDataFrame(Topic("o")).group_by(lambda v: v["x"] * 2, name="double")
    assert by_fn.stream_id == "o--groupby--double"
    grouped = grouped.apply(count, stateful=True)
    assert [r[:2] for r in grouped.test({"customer": "c1"}, key=b"store")] == [({"customer": "c1", "n": 1}, "c1")]
    assert [r[:2] for r in grouped.test({"customer": "c1"}, key=b"other-store")] == [({"customer": "c1", "n": 2}, "c1")]


def test_group_by_column_counts_per_new_key_across_partitions(make_app, kafka):
    src, out = kafka.new_topic(partitions=3), kafka.new_topic()
    # keyed by store, spread over partitions; we count per customer
    msgs = []
    for i in range(60):
        msgs.append(
            {
                "value": json.dumps({"store": f"s{i % 3}", "customer": f"c{i % 4}", "i": i}).encode(),
                "key": f"s{i % 3}".encode(),
                "partition": i % 3,
            }
        )
    kafka.produce(src, msgs)
    app = make_app(state_buckets=4)
    sdf = app.dataframe(app.topic(src))
    sdf.to_topic(app.topic(out))  # before the group_by: the original key
    sdf = sdf.group_by("customer")
    sdf = sdf.apply(count, stateful=True)
    rows = app.run(count=60, timeout=60, metadata=True)  # to_topic is in-place: the only leaf is the count
    grouped = [r for r in rows if "n" in r]
    assert len(grouped) == len(rows) == 60
    by_customer: dict[str, list[int]] = {}
    for r in grouped:
        assert r["_key"] == r["customer"]
        by_customer.setdefault(r["customer"], []).append(r["n"])
    assert {c: sorted(ns) for c, ns in by_customer.items()} == {f"c{c}": list(range(1, 16)) for c in range(4)}
    assert len(kafka.consume(out, expected=60)) == 60


def test_group_by_callable_then_to_topic_with_new_key(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"user": {"id": u}}).encode(), "key": b"x"} for u in (1, 2, 1)])
    app = make_app()
    sdf = app.dataframe(app.topic(src)).group_by(lambda v: f"user-{v['user']['id']}", name="uid")
    sdf.to_topic(app.topic(out, key_serializer="str"))
    app.run(count=3, timeout=60)
    assert sorted(m.key() for m in kafka.consume(out, expected=3)) == [b"user-1", b"user-1", b"user-2"]


def test_group_by_column_then_to_topic_with_default_serializers(make_app, kafka):
    """The new key is a str; the output topic's default key serializer ("bytes") passes it on
    and the broker receives its UTF-8 bytes, as with the reference (no SerializationError)."""
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    msgs = [{"value": json.dumps({"zone": f"z{i % 2}", "i": i}).encode(), "key": b"dev", "partition": i % 2} for i in range(6)]
    kafka.produce(src, msgs)
    app = make_app(state_buckets=2)
    sdf = app.dataframe(app.topic(src))
    sdf = sdf.group_by("zone")
    sdf.to_topic(app.topic(out, value_serializer="json"))
    app.run(count=6, timeout=60)
    produced = kafka.consume(out, expected=6)
    assert sorted((m.key(), json.loads(m.value())["i"]) for m in produced) == sorted((f"z{i % 2}".encode(), i) for i in range(6))
