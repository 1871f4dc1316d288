"""Windows on the real broker and Spark: state survives a restart in the middle of open windows,
and .final() emits each window exactly once (exactly-once guarantee); closing by partition."""

from __future__ import annotations

import json
from collections import Counter

from ...conftest import json_messages


def _events(keys, start_ms, end_ms, step_ms):
    return [
        {"value": json.dumps({"v": 1}).encode(), "key": k.encode(), "timestamp": ts, "partition": i % 2}
        for ts in range(start_ms, end_ms, step_ms)
        for i, k in enumerate(keys)
    ]


def test_tumbling_final_across_a_restart_exactly_once(make_app, kafka, tmp_path):
    src, out = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2)
    keys = ["k0", "k1", "k2", "k3"]
    group, state = "windows-restart", str(tmp_path / "state")

    def run():
        app = make_app(consumer_group=group, state_dir=state, processing_guarantee="exactly-once")
        sdf = app.dataframe(app.topic(src)).tumbling_window(1000).count().final()
        sdf.to_topic(app.topic(out, key_serializer="bytes"))
        app.run(timeout=3)

    kafka.produce(src, _events(keys, 100, 2600, 100))  # windows 0 and 1000 close, 2000 stays open
    run()
    first = kafka.consume(out, expected=8, timeout=10, isolation="read_committed")
    assert sorted((m.key(), json.loads(m.value())["start"]) for m in first) == sorted(
        (k.encode(), s) for k in keys for s in (0, 1000)
    )
    kafka.produce(src, _events(keys, 2600, 5100, 100))  # the restart continues the open window
    run()
    results = [(m.key(), json.loads(m.value())) for m in kafka.consume(out, expected=20, timeout=15, isolation="read_committed")]
    seen = Counter((k, r["start"]) for k, r in results)
    assert all(n == 1 for n in seen.values()), seen  # no window emitted twice
    by_window = {(k, r["start"]): r for k, r in results}
    assert sorted(by_window) == sorted((k.encode(), s) for k in keys for s in (0, 1000, 2000, 3000, 4000))
    for (k, start), r in by_window.items():
        expected = 9 if start == 0 else 10  # events every 100 ms from 100 ms on
        assert r == {"start": start, "end": start + 1000, "value": expected}, (k, r)
    # the output record's timestamp is the window start
    stamps = [
        (m.timestamp()[1], json.loads(m.value())["start"])
        for m in kafka.consume(out, expected=20, timeout=5, isolation="read_committed")
    ]
    # (librdkafka cannot produce timestamp 0: the epoch window gets the produce time)
    assert all(ts == start for ts, start in stamps if start > 0), stamps


def test_closing_by_partition_on_spark(make_app, kafka):
    src = kafka.new_topic(partitions=1)
    kafka.produce(
        src,
        [
            {"value": b"1", "key": b"a", "timestamp": 100},
            {"value": b"1", "key": b"b", "timestamp": 200},
            {"value": b"1", "key": b"b", "timestamp": 1500},  # closes a's window too
            {"value": b"1", "key": b"a", "timestamp": 900},  # late for the partition
        ],
    )
    app = make_app()
    sdf = app.dataframe(app.topic(src, value_deserializer="json"))
    sdf = sdf.tumbling_window(1000).sum().final(closing_strategy="partition")
    rows = app.run(timeout=3, metadata=True)
    assert sorted((r["_key"], r["start"], r["value"]) for r in rows) == [(b"a", 0, 1), (b"b", 0, 1)]
    _ = json_messages


def test_quiet_key_windows_close_by_processing_time(make_app, kafka):
    """Key a sends twice and goes quiet; with close_idle_after its open window is emitted by a Spark
    timer although no later record of a arrives (without it, .final() would never fire)."""
    src = kafka.new_topic(partitions=1)
    kafka.produce(src, [{"value": b"1", "key": b"a", "timestamp": 100}, {"value": b"2", "key": b"a", "timestamp": 200}])
    app = make_app()
    sdf = app.dataframe(app.topic(src, value_deserializer="json"))
    sdf = sdf.tumbling_window(1000).sum().final(close_idle_after=1500)
    rows = app.run(timeout=15, count=1, metadata=True)
    assert [(r["_key"], r["start"], r["end"], r["value"]) for r in rows] == [(b"a", 0, 1000, 3)]


def test_columnar_and_general_window_paths_agree_on_spark(make_app, kafka, tmp_path, monkeypatch):
    """``.final()`` windows with built-in aggregations run columnar (a batch at a time) by
    default; forcing the record-by-record path must give the same outputs, per key in the same
    order, over several micro-batches with late and out-of-order records."""
    import random

    from streamspark.dataframe.windows import Count, Max, Mean, Min, Sum
    from streamspark.engine import runner as runner_module
    from streamspark.engine.strategies import Strategies

    src = kafka.new_topic(partitions=2)
    rnd = random.Random(7)
    events, clock = [], 0
    for i in range(600):
        clock += rnd.randint(0, 40)
        # some out of order, some late; none in the epoch's windows (librdkafka cannot produce
        # timestamp 0, so their outputs would carry the produce time)
        ts = 2000 + clock - rnd.choice([0, 0, 0, 150, 700])
        key = f"k{rnd.randint(0, 5)}"
        value = {"temp": round(rnd.uniform(-20, 40), 2), "units": rnd.randint(0, 9), "i": i}
        events.append({"value": json.dumps(value).encode(), "key": key.encode(), "timestamp": ts, "partition": int(key[1]) % 2})
    kafka.produce(src, events)

    outputs = {}
    for columnar in (True, False):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if columnar else {"columnar-windows"}))
        out = kafka.new_topic()
        app = make_app(state_dir=str(tmp_path / f"state-{columnar}"), max_records_per_partition=120)
        sdf = app.dataframe(app.topic(src))
        sdf = (
            sdf.hopping_window(1000, 250, grace_ms=300)
            .agg(n=Count(), units=Sum("units"), total=Sum("temp"), avg=Mean("temp"), hi=Max("temp"), lo=Min("temp"))
            .final()
        )
        sdf.to_topic(app.topic(out, key_serializer="bytes"))
        app.run(timeout=3)
        produced = kafka.consume(out, expected=sum(kafka.high_watermarks(out).values()), timeout=10)
        per_key: dict = {}
        for m in produced:
            per_key.setdefault(m.key(), []).append((m.timestamp()[1], m.value()))
        outputs[columnar] = per_key
    assert sum(len(v) for v in outputs[True].values()) > 50
    assert outputs[True] == outputs[False]


def test_after_update_closes_windows_early_on_spark_as_in_sdf_test(make_app, kafka):
    """A window closed by ``after_update`` is emitted by ``.final()`` at once, on Spark as in
    ``sdf.test()`` (the columnar path is not taken: the callback sees every record)."""
    from streamspark import Application
    from streamspark.models import Topic

    src = kafka.new_topic(partitions=1)
    events = [(k, v, ts) for ts in range(100, 1600, 100) for k, v in (("a", ts // 100), ("b", 1))]
    kafka.produce(src, [{"value": str(v).encode(), "key": k.encode(), "timestamp": ts} for k, v, ts in events])

    def build(sdf):
        return sdf.tumbling_window(1000, after_update=lambda total, *_: total >= 10).sum().final()

    app = make_app()
    build(app.dataframe(app.topic(src, value_deserializer="json")))
    on_spark = sorted((r["_key"], r["start"], r["value"]) for r in app.run(timeout=3, metadata=True))

    local = build(Application("127.0.0.1:1", loglevel=None).dataframe(Topic("t", value_deserializer="json")))
    in_test = sorted(
        (k.encode(), r["start"], r["value"]) for k, v, ts in events for r, *_ in local.test(v, key=k.encode(), timestamp=ts)
    )
    # a: 1+2+3+4 closes early, 5+6 too, the rest of [0, 1000) and [1000, 2000) stay open until
    # event time passes them; b: one per record, never 10 in a window
    assert on_spark == in_test
    assert (b"a", 0, 10) in on_spark and (b"a", 0, 11) in on_spark
    assert (b"b", 0, 9) in on_spark


def test_sliding_windows_on_spark_as_in_sdf_test_with_records_out_of_order(make_app, kafka):
    """Sliding windows keep their windows in Spark's state between micro-batches: records out of
    order, over two runs of the app, give what ``sdf.test()`` gives."""
    from streamspark import Application
    from streamspark.models import Topic

    src = kafka.new_topic(partitions=1)
    stamps = [5, 12, 20, 15, 3, 30, 26, 41, 40, 38, 55]
    events = [(k, 1 << i, ts * 10) for i, ts in enumerate(stamps) for k in ("a", "b") if k == "a" or i % 2]

    def build(sdf):
        return sdf.sliding_window(100, grace_ms=50).sum().current()

    app = make_app()
    build(app.dataframe(app.topic(src, value_deserializer="json")))
    half = len(events) // 2
    kafka.produce(src, [{"value": str(v).encode(), "key": k.encode(), "timestamp": ts} for k, v, ts in events[:half]])
    on_spark = [(r["_key"], r["start"], r["end"], r["value"]) for r in app.run(timeout=3, metadata=True)]
    app2 = make_app(consumer_group=app.config.consumer_group, state_dir=str(app.config.state_dir))
    build(app2.dataframe(app2.topic(src, value_deserializer="json")))
    kafka.produce(src, [{"value": str(v).encode(), "key": k.encode(), "timestamp": ts} for k, v, ts in events[half:]])
    on_spark += [(r["_key"], r["start"], r["end"], r["value"]) for r in app2.run(timeout=3, metadata=True)]

    local = build(Application("127.0.0.1:1", loglevel=None).dataframe(Topic("t", value_deserializer="json")))
    in_test = [
        (k.encode(), r["start"], r["end"], r["value"])
        for k, v, ts in events
        for r, *_ in local.test(v, key=k.encode(), timestamp=ts)
    ]
    assert sorted(on_spark) == sorted(in_test)
    # the record at 150 comes after the one at 200 dropped the window of 120: its own window
    # holds it alone, and it counts in the open window of 200; the record at 30 is late
    assert (b"a", 50, 150, 8) in on_spark and (b"a", 100, 200, 4 + 8 + 2) in on_spark
    assert not [r for r in on_spark if r[0] == b"a" and r[2] == 30]
