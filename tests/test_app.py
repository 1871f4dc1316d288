"""End-to-end: produce → Application on Spark → consume, against the real broker."""

from __future__ import annotations

import json
import time

import pytest

from streamspark import TopicConfig
from streamspark.exceptions import BrokerUnreachableError
from streamspark.sinks import ListSink

from .conftest import json_messages


def test_issue_example_pipeline(make_app, kafka):
    """The program from the spine issue: filter, column arithmetic, apply, to_topic with a new key."""
    src_name, out_name = kafka.new_topic(), kafka.new_topic()
    readings = [{"sensor": f"s{i % 3}", "temp": i} for i in range(40)]
    kafka.produce(src_name, json_messages(readings, key=lambda v: v["sensor"].encode()))

    app = make_app()
    src = app.topic(src_name)
    out = app.topic(out_name, value_serializer="json", key_serializer="str")
    sdf = app.dataframe(src)
    sdf = sdf[sdf["temp"] > 30]
    sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
    sdf = sdf.apply(lambda v: {**v, "tag": "hot"})
    sdf.to_topic(out, key=lambda v: v["sensor"])
    rows = app.run(count=9, timeout=60, metadata=True)

    expected = [{"sensor": f"s{i % 3}", "temp": i, "temp_f": i * 9 / 5 + 32, "tag": "hot"} for i in range(31, 40)]
    assert [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows] == expected
    assert [r["_offset"] for r in rows] == list(range(31, 40))
    assert all(r["_topic"] == src_name and r["_partition"] == 0 for r in rows)
    assert [r["_key"] for r in rows] == [f"s{i % 3}".encode() for i in range(31, 40)]

    produced = kafka.consume(out_name, expected=9)
    assert [json.loads(m.value()) for m in produced] == expected
    assert [m.key() for m in produced] == [f"s{i % 3}".encode() for i in range(31, 40)]


def test_multi_partition_headers_and_timestamps_preserved(make_app, kafka):
    src_name, out_name = kafka.new_topic(partitions=4), kafka.new_topic(partitions=4)
    msgs = []
    for i in range(200):
        msgs.append(
            {
                "value": json.dumps({"i": i}).encode(),
                "key": f"k{i % 7}".encode(),
                "partition": i % 4,
                "headers": [("trace", f"t{i}".encode())],
                "timestamp": 1_700_000_000_000 + i,
            }
        )
    kafka.produce(src_name, msgs)
    app = make_app()
    sdf = app.dataframe(app.topic(src_name))
    sdf.to_topic(app.topic(out_name))
    rows = app.run(count=200, timeout=60, metadata=True)
    assert sorted(r["i"] for r in rows) == list(range(200))
    assert {r["_partition"] for r in rows} == {0, 1, 2, 3}

    produced = kafka.consume(out_name, expected=200)
    assert len(produced) == 200
    by_i = {json.loads(m.value())["i"]: m for m in produced}
    for i in (0, 57, 199):
        m = by_i[i]
        assert m.key() == f"k{i % 7}".encode()
        assert m.headers() == [("trace", f"t{i}".encode())]
        assert m.timestamp()[1] == 1_700_000_000_000 + i


def test_branching_expand_and_two_outputs(make_app, kafka):
    """Two branches from one parent, each with its own output; the input is read once."""
    src_name, a_name, b_name = kafka.new_topic(), kafka.new_topic(), kafka.new_topic()
    kafka.produce(src_name, json_messages([{"n": n, "words": ["x"] * n} for n in range(1, 6)]))
    app = make_app()
    sdf = app.dataframe(app.topic(src_name))
    evens = sdf[sdf["n"] % 2 == 0]
    evens.to_topic(app.topic(a_name))
    words = sdf.apply(lambda v: [{"n": v["n"], "w": i} for i in range(len(v["words"]))], expand=True)
    words.to_topic(app.topic(b_name))
    rows = app.run(count=2 + 15, timeout=60)
    assert len(rows) == 17

    got_a = [json.loads(m.value()) for m in kafka.consume(a_name, expected=2)]
    assert [v["n"] for v in got_a] == [2, 4]
    got_b = [json.loads(m.value()) for m in kafka.consume(b_name, expected=15)]
    assert len(got_b) == 15
    assert sorted((v["n"], v["w"]) for v in got_b) == sorted((n, w) for n in range(1, 6) for w in range(n))


def test_set_timestamp_and_set_headers_reach_output(make_app, kafka):
    src_name, out_name = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src_name, json_messages([{"id": i, "ts": 1_600_000_000_000 + i * 1000} for i in range(3)]))
    app = make_app()
    sdf = app.dataframe(app.topic(src_name))
    sdf = sdf.set_timestamp(lambda v, k, t, h: v["ts"])
    sdf = sdf.set_headers(lambda v, k, t, h: [("id", str(v["id"]).encode())])
    sdf.to_topic(app.topic(out_name))
    app.run(count=3, timeout=60)
    produced = kafka.consume(out_name, expected=3)
    assert [m.timestamp()[1] for m in produced] == [1_600_000_000_000 + i * 1000 for i in range(3)]
    assert [m.headers() for m in produced] == [[("id", str(i).encode())] for i in range(3)]


def test_records_without_a_timestamp_are_stamped_by_the_producer(make_app, kafka):
    import time

    src_name, out_name = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src_name, json_messages([{"id": i} for i in range(2)]))
    app = make_app()
    app.dataframe(app.topic(src_name)).set_timestamp(lambda v, k, t, h: None).to_topic(app.topic(out_name))
    before = int(time.time() * 1000)
    app.run(count=2, timeout=60)
    produced = kafka.consume(out_name, expected=2)
    assert len(produced) == 2 and all(m.timestamp()[1] >= before - 60_000 for m in produced)


def test_run_timeout_on_empty_topic_returns_nothing(make_app, kafka):
    src_name = kafka.new_topic()
    app = make_app()
    app.dataframe(app.topic(src_name))
    started = time.monotonic()
    assert app.run(timeout=2) == []
    assert time.monotonic() - started < 90


def test_run_count_returns_exactly_count_and_restart_resumes(make_app, kafka):
    """count stops the run; a new run of the same group continues after what it committed."""
    src_name = kafka.new_topic()
    kafka.produce(src_name, json_messages([{"i": i} for i in range(10)]))
    app = make_app(consumer_group="resume-group", commit_every=4)
    app.dataframe(app.topic(src_name))
    first = app.run(count=3, timeout=60)
    assert first == [{"i": 0}, {"i": 1}, {"i": 2}]

    kafka.produce(src_name, json_messages([{"i": i} for i in range(10, 12)]))
    app2 = make_app(consumer_group="resume-group", commit_every=4)
    app2.dataframe(app2.topic(src_name))
    second = app2.run(timeout=3)
    # as in the reference, the first run read and committed just the records of its 3 outputs
    # (offsets 0-2): the rest comes now
    assert second == [{"i": i} for i in list(range(3, 10)) + [10, 11]]
    # consumer-group offsets are committed to Kafka for lag tools
    assert kafka.committed("resume-group", src_name) == {0: 12}


def test_run_count_writes_count_outputs_to_the_topic(make_app, kafka):
    """As the reference ("stop the application after processing N outputs"): with a backlog of
    60 records on two partitions, a stateful pipeline that gives an output per record writes
    exactly ``count`` outputs to its topic and commits just the records behind them."""
    src_name, out_name = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(
        src_name,
        [{"value": json.dumps({"x": i}).encode(), "key": f"k{i % 4}".encode(), "partition": i % 2} for i in range(60)],
    )

    def running(value, state):
        total = state.get("total", 0) + value["x"]
        state.set("total", total)
        return {"total": total}

    app = make_app(consumer_group="count-group")
    app.dataframe(app.topic(src_name)).apply(running, stateful=True).to_topic(app.topic(out_name))
    assert len(app.run(count=5, timeout=60)) == 5
    assert len(kafka.consume(out_name, expected=6, timeout=5)) == 5  # no more than 5 arrive
    assert sum(kafka.committed("count-group", src_name).values()) == 5


def test_run_count_counts_the_outputs_of_every_branch(make_app, kafka):
    """As Quix Streams: a dataframe split into two branches gives two outputs per record, and
    ``count=10`` stops after 10 outputs in all, 5 on each branch's topic, 5 records committed."""
    src_name, out_a, out_b = kafka.new_topic(partitions=2), kafka.new_topic(), kafka.new_topic()
    kafka.produce(
        src_name,
        [{"value": json.dumps({"x": i}).encode(), "key": f"k{i % 4}".encode(), "partition": i % 2} for i in range(60)],
    )
    app = make_app(consumer_group="branches-count-group")
    sdf = app.dataframe(app.topic(src_name))
    sdf.apply(lambda v: {**v, "branch": "a"}).to_topic(app.topic(out_a))
    sdf.apply(lambda v: {**v, "branch": "b"}).to_topic(app.topic(out_b))
    rows = app.run(count=10, timeout=60)
    assert len(rows) == 10 and sorted(r["branch"] for r in rows) == ["a"] * 5 + ["b"] * 5
    assert len(kafka.consume(out_a, expected=6, timeout=5)) == 5
    assert len(kafka.consume(out_b, expected=6, timeout=5)) == 5
    assert sum(kafka.committed("branches-count-group", src_name).values()) == 5


def test_run_count_with_an_expand_writes_the_count_not_a_multiple(make_app, kafka):
    """As Quix Streams: three outputs per record, ``count=9`` stops after 9 outputs (checked
    side by side: Quix Streams wrote 9 and committed 3 records); the first micro-batch reads
    one record to learn how many outputs a record gives."""
    src_name, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(
        src_name,
        [{"value": json.dumps({"n": i}).encode(), "key": f"k{i % 4}".encode(), "partition": i % 2} for i in range(60)],
    )
    app = make_app(consumer_group="expand-count-group")
    sdf = app.dataframe(app.topic(src_name)).apply(lambda v: [{"n": v["n"], "j": j} for j in range(3)], expand=True)
    sdf.to_topic(app.topic(out))
    rows = app.run(count=9, timeout=60)
    assert len(rows) == 9
    assert len(kafka.consume(out, expected=10, timeout=5)) == 9
    assert sum(max(offset, 0) for offset in kafka.committed("expand-count-group", src_name).values()) == 3


def test_run_count_reads_more_while_records_give_no_output(make_app, kafka):
    """A filter that drops the first records: the run reads on until it has its outputs."""
    src_name = kafka.new_topic()
    kafka.produce(src_name, json_messages([{"i": i} for i in range(100)]))
    app = make_app()
    app.dataframe(app.topic(src_name)).filter(lambda v: v["i"] >= 50)
    assert app.run(count=3, timeout=60) == [{"i": 50}, {"i": 51}, {"i": 52}]


def test_collect_false_returns_empty_list(make_app, kafka):
    src_name = kafka.new_topic()
    kafka.produce(src_name, json_messages([{"i": 1}]))
    app = make_app()
    sink = ListSink()
    app.dataframe(app.topic(src_name)).sink(sink)
    assert app.run(count=1, timeout=60, collect=False) == []
    assert list(sink) == [{"i": 1}]


def test_topic_config_creates_partitions(make_app, kafka):
    name = f"cfg-{time.monotonic_ns()}"
    app = make_app()
    app.topic(name, config=TopicConfig(num_partitions=3, replication_factor=1))
    app.topic_manager.ensure_topics()
    assert len(kafka.admin.list_topics(timeout=10).topics[name].partitions) == 3


def test_unreachable_broker_fails_fast_with_clear_error(spark, tmp_path):
    from streamspark import Application

    app = Application(broker_address="127.0.0.1:1", consumer_group="x", request_timeout=3, state_dir=str(tmp_path), loglevel=None)
    app.dataframe(app.topic("whatever"))
    started = time.monotonic()
    with pytest.raises(BrokerUnreachableError, match="127.0.0.1:1"):
        app.run(timeout=5)
    assert time.monotonic() - started < 30


def test_stop_from_another_thread_commits_the_batch_in_flight(make_app, kafka):
    import threading

    src_name = kafka.new_topic()
    kafka.produce(src_name, json_messages([{"i": i} for i in range(5)]))
    app = make_app(consumer_group="stopper")
    sink = ListSink()
    app.dataframe(app.topic(src_name)).sink(sink)

    def stop_when_done():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if len(sink) >= 5:
                app.stop()
                return
            time.sleep(0.1)

    stopper = threading.Thread(target=stop_when_done)
    stopper.start()
    app.run()  # no limits: only stop() ends it
    stopper.join()
    assert [v["i"] for v in sink] == list(range(5))
    assert kafka.committed("stopper", src_name) == {0: 5}


def test_two_input_topics_in_one_application(make_app, kafka):
    a, b, out = kafka.new_topic(), kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(a, json_messages([{"src": "a", "i": i} for i in range(3)]))
    kafka.produce(b, json_messages([{"src": "b", "i": i} for i in range(4)]))
    app = make_app()
    out_topic = app.topic(out)
    app.dataframe(app.topic(a)).apply(lambda v: {**v, "via": "A"}).to_topic(out_topic)
    app.dataframe(app.topic(b)).filter(lambda v: v["i"] % 2 == 0).to_topic(out_topic)
    rows = app.run(count=5, timeout=60)
    assert sorted((r["src"], r["i"]) for r in rows) == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 2)]
    assert all(r.get("via") == "A" for r in rows if r["src"] == "a")
    assert len(kafka.consume(out, expected=5)) == 5


def test_auto_offset_reset_latest_skips_existing_and_error_fails(make_app, kafka):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"old": True}]))
    app = make_app(auto_offset_reset="error")
    app.dataframe(app.topic(topic))
    with pytest.raises(Exception, match="auto_offset_reset='error'"):
        app.run(timeout=5)

    import threading

    app = make_app(auto_offset_reset="latest")
    sink = ListSink()
    app.dataframe(app.topic(topic)).sink(sink)

    def produce_later():
        # produce only after the source has fixed its start offset at the end of the topic
        deadline = time.monotonic() + 60
        while app._runner is None or app._runner._query is None or not app._runner._query.recentProgress:
            if time.monotonic() > deadline:
                return
            time.sleep(0.2)
        kafka.produce(topic, json_messages([{"new": True}]))

    t = threading.Thread(target=produce_later)
    t.start()
    app.run(count=1, timeout=60)
    t.join()
    assert list(sink) == [{"new": True}]


def test_on_message_processed_runs_per_input_message(make_app, kafka, tmp_path):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"i": i} for i in range(4)]))
    log = tmp_path / "processed.txt"

    def on_processed(t, p, o):  # runs in the Spark workers: leave a trace in a file
        with open(log, "a") as f:
            f.write(f"{t}:{p}:{o}\n")

    app = make_app(on_message_processed=on_processed)
    app.dataframe(app.topic(topic)).filter(lambda v: v["i"] >= 2)  # records 0 and 1 give no output
    app.run(count=2, timeout=60)
    assert sorted(log.read_text().split()) == [f"{topic}:0:{o}" for o in range(4)]


def test_get_producer_and_get_consumer_use_the_app_settings(make_app, kafka):
    topic = kafka.new_topic()
    app = make_app(consumer_group="clients")
    with app.get_producer() as producer:
        producer.produce(topic, key=b"k", value=b'{"x": 1}', headers=[("h", b"v")])
    with app.get_consumer() as consumer:
        consumer.subscribe([topic])
        msg = None
        deadline = time.monotonic() + 30
        while msg is None and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
        assert msg is not None and msg.error() is None
        assert (msg.key(), msg.value(), msg.headers()) == (b"k", b'{"x": 1}', [("h", b"v")])
        consumer.store_offsets(msg)
        consumer.commit(asynchronous=False)
    assert kafka.committed("clients", topic) == {0: 1}
