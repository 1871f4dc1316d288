"""Sinks inside Spark tasks: flush per micro-batch, failures and backpressure."""

from __future__ import annotations

import csv
import json

import pytest

from streamspark.exceptions import ProcessingError
from streamspark.sinks import BatchingSink, CSVSink, ListSink, SinkBackpressureError

from ..conftest import json_messages


class FlakyFileSink(BatchingSink):
    """Writes JSON lines; the first ``fail_times`` flushes raise (a real file marks the attempts,
    since each Spark worker process has its own copy of the sink)."""

    def __init__(self, path: str, marker: str, fail_times: int, backpressure: bool) -> None:
        super().__init__()
        self.path = path
        self.marker = marker
        self.fail_times = fail_times
        self.backpressure = backpressure

    def write(self, batch):
        with open(self.marker, "a+") as m:
            m.seek(0)
            attempts = len(m.read())
            if attempts < self.fail_times:
                m.write("x")
                if self.backpressure:
                    raise SinkBackpressureError(retry_after=0.5)
                raise ConnectionError("destination refused the write")
        with open(self.path, "a") as f:
            for item in batch:
                f.write(json.dumps(item.value) + "\n")


def test_list_sink_with_metadata(make_app, kafka):
    topic = kafka.new_topic(partitions=2)
    kafka.produce(topic, [{"value": b'{"a": 1}', "key": b"k", "partition": 1, "timestamp": 1234}])
    app = make_app()
    sink = ListSink(metadata=True)
    app.dataframe(app.topic(topic)).sink(sink)
    app.run(count=1, timeout=60)
    assert list(sink) == [
        {"a": 1, "_key": b"k", "_timestamp": 1234, "_headers": None, "_topic": topic, "_partition": 1, "_offset": 0}
    ]


def test_csv_sink_writes_all_partitions_to_one_file(make_app, kafka, tmp_path):
    topic = kafka.new_topic(partitions=3)
    kafka.produce(
        topic,
        [
            {"value": json.dumps({"i": i}).encode(), "key": f"k{i}".encode(), "partition": i % 3, "timestamp": 1000 + i}
            for i in range(30)
        ],
    )
    path = tmp_path / "out.csv"
    app = make_app()
    app.dataframe(app.topic(topic, key_deserializer="str")).sink(CSVSink(str(path)))
    app.run(count=30, timeout=60)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 30
    assert set(rows[0]) == {"key", "value", "timestamp", "topic", "partition", "offset"}
    by_i = {json.loads(r["value"])["i"]: r for r in rows}
    assert sorted(by_i) == list(range(30))
    r7 = by_i[7]
    assert (r7["key"], r7["timestamp"], r7["topic"], r7["partition"]) == ("k7", "1007", topic, "1")


def test_failing_flush_fails_the_batch_and_replay_delivers(make_app, kafka, tmp_path):
    topic = kafka.new_topic()
    kafka.produce(topic, json_messages([{"i": i} for i in range(5)]))
    out, marker = tmp_path / "out.jsonl", tmp_path / "attempts"
    app = make_app(consumer_group="flaky-flush")
    app.dataframe(app.topic(topic)).sink(FlakyFileSink(str(out), str(marker), fail_times=1, backpressure=False))
    with pytest.raises(ProcessingError, match="sink failed: ConnectionError: destination refused the write"):
        app.run(count=5, timeout=60)
    assert not out.exists()
    assert kafka.committed("flaky-flush", topic)[0] < 0  # nothing committed

    app2 = make_app(consumer_group="flaky-flush")
    app2.dataframe(app2.topic(topic)).sink(FlakyFileSink(str(out), str(marker), fail_times=1, backpressure=False))
    app2.run(count=5, timeout=60)
    assert [json.loads(line) for line in out.read_text().splitlines()] == [{"i": i} for i in range(5)]


@pytest.mark.parametrize("partitions", [1, 2])
def test_backpressure_retries_without_loss_or_duplicates(make_app, kafka, tmp_path, partitions):
    topic, echo = kafka.new_topic(partitions=partitions), kafka.new_topic()
    kafka.produce(topic, [{"value": json.dumps({"i": i}).encode(), "partition": i % partitions} for i in range(20)])
    out, marker = tmp_path / "out.jsonl", tmp_path / "attempts"
    listed = ListSink()
    csv_path = tmp_path / "out.csv"
    app = make_app()
    sdf = app.dataframe(app.topic(topic))
    sdf.to_topic(app.topic(echo))
    sdf.sink(listed)
    sdf.sink(CSVSink(str(csv_path)))
    sdf.sink(FlakyFileSink(str(out), str(marker), fail_times=2, backpressure=True))
    app.run(count=20 * 3, timeout=60)  # three sink branches are three leaves
    assert len(marker.read_text()) == 2  # backpressure happened twice
    assert sorted(json.loads(line)["i"] for line in out.read_text().splitlines()) == list(range(20))
    # the other outputs of the batch were not repeated by the retries
    assert sorted(v["i"] for v in listed) == list(range(20))
    with open(csv_path, newline="") as f:
        assert sorted(json.loads(r["value"])["i"] for r in csv.DictReader(f)) == list(range(20))
    assert sorted(json.loads(m.value())["i"] for m in kafka.consume(echo, expected=20)) == list(range(20))
