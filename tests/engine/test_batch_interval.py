"""The Kafka source holds new records back until ``min_batch_interval`` passed since the last
micro-batch, unless a partition has a backlog (real broker); and ``app.run()`` with a sink
starts the next micro-batch at once after a capped one."""

from __future__ import annotations

import time

import pytest

from streamspark.engine._kafka_source import _KafkaStreamReader


@pytest.fixture
def reader_of(source_planner):
    """A reader of one topic holding records back for ``interval`` seconds."""

    def make(topic: str, cap: int, interval: float) -> _KafkaStreamReader:
        return source_planner([topic], cap, min_batch_interval=interval)

    return make


def _produce(kafka, topic: str, n: int) -> None:
    kafka.produce(topic, [{"value": b"v"} for _ in range(n)])


def test_new_records_wait_for_the_interval_after_the_last_batch(kafka, reader_of):
    topic = kafka.new_topic()
    _produce(kafka, topic, 3)
    reader = reader_of(topic, cap=100, interval=1.5)
    # the first micro-batch is planned at once
    end = reader.latestOffset({topic: {"0": 0}}, None)
    assert end == {topic: {"0": 3}}
    # nothing new: nothing to plan
    assert reader.latestOffset(end, None) == end
    # new records within the interval: held back (Spark runs no micro-batch)
    _produce(kafka, topic, 2)
    assert reader.latestOffset(end, None) == end
    # once the interval is over they are planned
    time.sleep(1.6)
    assert reader.latestOffset(end, None) == {topic: {"0": 5}}


def test_a_backlog_is_planned_at_once(kafka, reader_of):
    topic = kafka.new_topic()
    _produce(kafka, topic, 10)
    reader = reader_of(topic, cap=4, interval=60.0)
    end = reader.latestOffset({topic: {"0": 0}}, None)
    assert end == {topic: {"0": 4}}
    # six waiting, more than a batch's four: the next batch right away
    end = reader.latestOffset(end, None)
    assert end == {topic: {"0": 8}}
    # two left by a capped batch: the end of the backlog, right away too
    end = reader.latestOffset(end, None)
    assert end == {topic: {"0": 10}}
    # the backlog is read: new records wait for the interval again
    _produce(kafka, topic, 3)
    assert reader.latestOffset(end, None) == {topic: {"0": 10}}


def test_without_an_interval_records_are_planned_as_they_arrive(kafka, reader_of):
    topic = kafka.new_topic()
    _produce(kafka, topic, 2)
    reader = reader_of(topic, cap=100, interval=0.0)
    end = reader.latestOffset({topic: {"0": 0}}, None)
    _produce(kafka, topic, 1)
    assert reader.latestOffset(end, None) == {topic: {"0": 3}}


def test_a_sink_pipeline_reads_a_backlog_without_waiting_for_the_commit_interval(make_app, kafka):
    """commit_interval=60 and a cap of 5 records per micro-batch: 20 records are read in four
    micro-batches in a row; one micro-batch per commit interval would take three minutes."""
    import threading

    from streamspark.sinks import ListSink
    from tests.conftest import json_messages

    src = kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(20)]))
    app = make_app(commit_interval=60.0, max_records_per_partition=5)
    sink = ListSink()
    app.dataframe(app.topic(src)).sink(sink)
    batches: list[int] = []

    def stop_when_done() -> None:
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and len(sink) < 20:
            time.sleep(0.1)
        batches.append(app.status().get("batches", 0))
        app.stop()

    stopper = threading.Thread(target=stop_when_done)
    stopper.start()
    app.run()
    stopper.join()
    assert [v["i"] for v in sink] == list(range(20))
    assert batches[0] >= 4
