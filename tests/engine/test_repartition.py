"""group_by through a repartition topic (engine/repartition.py), as the reference runs it: for
plans whose state before the group_by the shuffle cannot keep apart (a stateful step before it),
and as the plain path of the ``group-by-shuffle`` fast path, which must give the same results."""

from __future__ import annotations

import collections
import json

import pytest
from confluent_kafka.admin import AdminClient

from streamspark.dataframe import StreamingDataFrame
from streamspark.engine import runner as runner_module
from streamspark.engine._plan import PipelinePlan
from streamspark.engine.repartition import needs_repartition_topics, through_repartition_topics
from streamspark.engine.strategies import Strategies
from streamspark.exceptions import InvalidTopology
from streamspark.kafka import Producer
from streamspark.models import Topic


def count_per_key(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "per_key": n}


def count_per_room(value, state):
    n = state.get("n", 0) + 1
    state.set("n", n)
    return {**value, "per_room": n}


def _plan(*sdfs) -> PipelinePlan:
    return PipelinePlan(
        run_id="r",
        topics={s.topic.name: s.topic for s in sdfs},
        roots={s.topic.name: s.stream.root() for s in sdfs},
        producer_config={},
        on_consumer_error=bool,
        on_processing_error=bool,
        on_producer_error=bool,
    )


def test_the_rewrite_cuts_a_copy_and_leaves_the_dataframes_as_they_were():
    sdf = StreamingDataFrame(Topic("orders"))
    grouped = sdf.apply(count_per_key, stateful=True).group_by("room")
    grouped.apply(lambda v: {**v, "after": True})
    plan = _plan(sdf)
    assert needs_repartition_topics(plan, Strategies())
    with pytest.raises(InvalidTopology, match="needs a repartition topic"):
        plan.validate()
    seen = []
    names = through_repartition_topics(
        plan, lambda group, sources: seen.append((group.name, [t.name for t in sources])) or Topic("rp")
    )
    assert names == ["rp"] and seen == [("room", ["orders"])]
    plan.validate()  # no group_by left: the shuffle's limits do not apply
    kinds = [node.kind for node in plan.nodes()]
    assert "group_by" not in kinds and "repartition" in kinds
    assert [c.kind for c in plan.roots["rp"].children] == ["apply"]
    # the application's own tree still re-keys in place (sdf.test, a later run)
    assert grouped.test({"room": "r1"}, key=b"k")[0][1] == "r1"
    assert plan.roots["orders"] is not sdf.stream.root()


def test_a_merge_fed_by_a_group_by_is_fed_by_its_repartition_topic():
    """``orders.concat(payments.group_by(...))`` and a join with a re-keyed right side: after
    the rewrite the merge's records come from the repartition topic (what its time alignment,
    its co-partitioning check and its topics follow)."""
    from streamspark.core.stream import sources_of
    from streamspark.core.stream.nodes import MergeNode

    orders, payments = StreamingDataFrame(Topic("orders")), StreamingDataFrame(Topic("payments"))
    orders.concat(payments.group_by("order")).apply(count_per_key, stateful=True)
    plan = _plan(orders, payments)
    through_repartition_topics(plan, lambda group, sources: Topic(f"rp-{group.name}"))
    (merge,) = [node for node in plan.nodes() if isinstance(node, MergeNode)]
    assert sorted(plan.roots[name].id for name in ("orders", "rp-order")) == sorted(root.id for root in sources_of(merge))
    assert plan.time_aligned

    readings, configs = StreamingDataFrame(Topic("readings")), StreamingDataFrame(Topic("configs"))
    readings.join_asof(configs.group_by("device"))
    plan = _plan(readings, configs)
    through_repartition_topics(plan, lambda group, sources: Topic(f"rp-{group.name}"))
    (join,) = [node for node in plan.nodes() if isinstance(node, MergeNode)]
    assert {id(root) for root in sources_of(join, through_group_by=False)} == {
        id(plan.roots["readings"]),
        id(plan.roots["rp-device"]),
    }


@pytest.mark.parametrize("order", ["a first", "b first"])
def test_a_group_by_fed_by_another_ones_topic_is_given_that_topic_first(order):
    """Whatever order the dataframes were made in (the plan's roots follow it)."""
    a, b = StreamingDataFrame(Topic("a")), StreamingDataFrame(Topic("b"))
    b.concat(a.group_by("x")).group_by("y").apply(count_per_key, stateful=True)
    plan = _plan(a, b) if order == "a first" else _plan(b, a)
    asked = []

    def topic_for(group, sources):
        asked.append((group.name, sorted(t.name for t in sources)))
        return Topic(f"rp-{group.name}")

    assert through_repartition_topics(plan, topic_for) == ["rp-x", "rp-y"]
    assert asked == [("x", ["a"]), ("y", ["b", "rp-x"])]


def test_a_branch_into_a_repartition_topic_is_not_counted_as_an_output():
    sdf = StreamingDataFrame(Topic("orders"))
    sdf = sdf.apply(count_per_key, stateful=True)
    sdf.group_by("room").apply(count_per_room, stateful=True)
    sdf.apply(lambda v: v)  # a branch beside the group_by: one output per record
    plan = _plan(sdf)
    through_repartition_topics(plan, lambda group, sources: Topic("rp"))
    assert plan.outputs_per_record() == 1


def test_a_shuffle_that_can_run_the_plan_is_kept_unless_left_out():
    sdf = StreamingDataFrame(Topic("orders"))
    sdf.group_by("room").apply(count_per_room, stateful=True)
    plan = _plan(sdf)
    assert not needs_repartition_topics(plan, Strategies())
    assert needs_repartition_topics(plan, Strategies(plain={"group-by-shuffle"}))
    assert not needs_repartition_topics(_plan(StreamingDataFrame(Topic("x"))), Strategies(plain={"group-by-shuffle"}))


def _produce(kafka, topic, n):
    # a key's records (and a room's) all come from one partition: their counts do not depend
    # on where micro-batches end or how partitions interleave
    kafka.produce(
        topic,
        [
            {
                "value": json.dumps({"i": i, "room": f"r{i % 3}"}).encode(),
                "key": f"k{i % 6}".encode(),
                "partition": i % 3,
                "timestamp": 1_000 + i,
            }
            for i in range(n)
        ],
    )


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_a_stateful_step_before_a_group_by_runs_through_a_repartition_topic(make_app, kafka, guarantee):
    src, out = kafka.new_topic(partitions=3), kafka.new_topic()
    _produce(kafka, src, 60)
    app = make_app(state_buckets=4, max_records_per_partition=7, processing_guarantee=guarantee)
    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    sdf = sdf.apply(count_per_key, stateful=True)  # state by the message key
    sdf = sdf.group_by("room")
    sdf = sdf.apply(count_per_room, stateful=True)  # state by the room
    sdf.to_topic(app.topic(out, key_serializer="str"))
    rows = app.run(count=60, timeout=90, metadata=True)

    repartition = f"repartition__{app.config.consumer_group}--{src}--room"
    assert len(rows) == 60
    assert {r["_topic"] for r in rows} == {repartition}, "the steps after the group_by read the repartition topic"
    per_key = collections.defaultdict(list)
    per_room = collections.defaultdict(list)
    for r in sorted(rows, key=lambda r: r["i"]):
        per_key[f"k{r['i'] % 6}"].append(r["per_key"])
        per_room[r["_key"]].append(r["per_room"])
    assert dict(per_key) == {f"k{k}": list(range(1, 11)) for k in range(6)}
    assert {room: sorted(ns) for room, ns in per_room.items()} == {f"r{k}": list(range(1, 21)) for k in range(3)}
    # the room's count follows the input order (the room's records come from one partition)
    assert all(ns == sorted(ns) for ns in per_room.values())

    produced = kafka.consume(out, expected=60, isolation="read_committed")
    assert sorted(m.key() for m in produced) == sorted(f"r{i % 3}".encode() for i in range(60))
    topic = AdminClient({"bootstrap.servers": kafka.address}).list_topics(timeout=10).topics[repartition]
    assert len(topic.partitions) == 3, "the repartition topic copies the input topic's partitions"
    written = kafka.consume(repartition, expected=60, isolation="read_committed")
    assert sorted({m.key() for m in written}) == [b'"r0"', b'"r1"', b'"r2"'], "keyed by the new key, as JSON"
    assert sorted(json.loads(m.value())["per_key"] for m in written) == sorted(list(range(1, 11)) * 6)


def _rooms(make_app, kafka, src, plain, monkeypatch):
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=plain))
    app = make_app(state_buckets=4, max_records_per_partition=9)
    sdf = app.dataframe(app.topic(src, key_deserializer="str"))
    sdf = sdf[sdf["i"] % 5 != 0]
    sdf = sdf.group_by("room")
    sdf = sdf.apply(count_per_room, stateful=True)
    rows = app.run(count=48, timeout=90, metadata=True)
    return app, sorted((r["_key"], r["i"], r["room"], r["per_room"], r["_timestamp"]) for r in rows)


def test_the_shuffle_and_the_repartition_topic_agree(make_app, kafka, monkeypatch):
    src = kafka.new_topic(partitions=3)
    _produce(kafka, src, 60)
    shuffle_app, shuffled = _rooms(make_app, kafka, src, (), monkeypatch)
    topic_app, through_topic = _rooms(make_app, kafka, src, {"group-by-shuffle"}, monkeypatch)
    assert len(shuffled) == 48
    assert through_topic == shuffled
    names = set(AdminClient({"bootstrap.servers": kafka.address}).list_topics(timeout=10).topics)
    assert f"repartition__{topic_app.config.consumer_group}--{src}--room" in names
    assert not any(shuffle_app.config.consumer_group in name for name in names), "the shuffle writes no topic"


def test_a_join_of_a_re_keyed_dataframe_with_one_that_is_not(make_app, kafka):
    """Only the left side is re-keyed (the right topic is keyed by device already): the left
    records go through a repartition topic, keyed by the device as the right topic is (its
    ``key_serializer="str"``), and the join runs per device on the records of both topics."""
    left_name, right_name = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2)
    # the right topic written by streamspark's producer, whose partitioner (murmur2, as the
    # reference's) places the repartition topic's keys too: a device's records sit in the same
    # partition of both topics
    with Producer(kafka.address) as producer:
        for d in range(2):
            producer.produce(right_name, json.dumps({"model": f"m{d}"}).encode(), f"d{d}".encode(), timestamp=1_000)
    kafka.produce(
        left_name,
        [
            {"value": json.dumps({"device": f"d{i % 3}", "t": i}).encode(), "key": b"gw", "timestamp": 2_000 + i, "partition": 0}
            for i in range(6)
        ],
    )
    app = make_app()
    readings = app.dataframe(app.topic(left_name)).group_by("device", key_serializer="str", key_deserializer="str")
    configs = app.dataframe(app.topic(right_name, key_deserializer="str"))
    readings.join_asof(configs, how="left", on_merge="keep-left")
    rows = app.run(count=6, timeout=60, metadata=True)
    assert {r["_topic"] for r in rows} == {f"repartition__{app.config.consumer_group}--{left_name}--device"}
    assert sorted((r["t"], r["_key"], r.get("model")) for r in rows) == [
        (i, f"d{i % 3}", None if i % 3 == 2 else f"m{i % 3}") for i in range(6)
    ]


def test_windows_closing_by_partition_after_a_group_by(make_app, kafka):
    """``closing_strategy="partition"`` after a ``group_by``: the windows close by the time of
    the repartition topic's partitions (a record far ahead on each room's partition closes all
    the windows before it). The input is one partition of two, so the records reach the
    repartition topic in timestamp order (records of two input partitions would interleave
    there in the order they were processed, as in the reference)."""
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    records = [(f"r{i % 3}", 1_000_000 + i * 1_000, i) for i in range(40)]
    flushes = [(f"r{r}", 9_000_000 + r, 0) for r in range(3)]
    kafka.produce(
        src,
        [
            {
                "value": json.dumps({"room": room, "v": v}).encode(),
                "key": f"k{n % 4}".encode(),
                "timestamp": ts,
                "partition": 0,
            }
            for n, (room, ts, v) in enumerate(records + flushes)
        ],
    )
    app = make_app()
    sdf = app.dataframe(app.topic(src)).group_by("room")
    sdf = sdf.apply(lambda v: v["v"]).tumbling_window(10_000).sum().final(closing_strategy="partition")
    rows = app.run(count=12, timeout=60, metadata=True)
    expected = collections.Counter()
    for room, ts, v in records:
        expected[(room, ts // 10_000 * 10_000)] += v
    assert len(expected) == 12
    assert sorted((r["_key"], r["start"], r["value"]) for r in rows) == sorted(
        (room, start, v) for (room, start), v in expected.items()
    )
