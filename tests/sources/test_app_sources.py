"""Sources through the Application on real Spark: ``app.dataframe(source=...)``,
``app.add_source(...)`` beside a pipeline, a source-only application, and a failing source
stopping the run with ``SourceException``."""

from __future__ import annotations

import json
import os
import time

import pytest

from streamspark.sources import Source, SourceException
from streamspark.sources.core.csv import CSVSource


class Numbers(Source):
    """Produces ``count`` JSON values ``{"n": i}`` keyed ``k<i % 3>``, then finishes."""

    def __init__(self, name: str, count: int) -> None:
        super().__init__(name=name)
        self.count = count

    def run(self) -> None:
        for i in range(self.count):
            if not self.running:
                return
            msg = self.serialize(key=f"k{i % 3}", value={"n": i})
            self.produce(key=msg.key, value=msg.value)
        self.flush()


class Broken(Source):
    """Produces one record, then fails."""

    def run(self) -> None:
        msg = self.serialize(key="x", value={"n": 0})
        self.produce(key=msg.key, value=msg.value)
        self.flush()
        raise RuntimeError("the sensor bus went away")


class FailsOnMarker(Source):
    """Fails once ``marker`` exists (a micro-batch of the pipeline beside it writes it)."""

    def __init__(self, name: str, marker: str) -> None:
        super().__init__(name=name)
        self.marker = marker

    def run(self) -> None:
        while self.running and not os.path.exists(self.marker):
            time.sleep(0.05)
        raise RuntimeError("the sensor bus went away")


def test_dataframe_from_a_csv_source_to_a_topic(make_app, kafka, tmp_path):
    path = tmp_path / "readings.csv"
    path.write_text("sensor,temp\n" + "".join(f"s{i % 4},{20 + i}\n" for i in range(12)))
    out = kafka.new_topic()
    app = make_app()
    sdf = app.dataframe(source=CSVSource(str(path), name=f"readings-{out}", key_extractor=lambda row: row["sensor"]))
    assert sdf.topic.name == f"source__readings-{out}"
    sdf["temp_f"] = sdf["temp"].apply(float) * 9 / 5 + 32
    sdf.to_topic(app.topic(out, key_serializer="bytes"))
    app.run(count=12, timeout=60)
    got = [(m.key(), json.loads(m.value())) for m in kafka.consume(out, expected=12)]
    assert sorted(int(v["temp"]) for _, v in got) == list(range(20, 32))  # CSV values are strings
    assert all(v["temp_f"] == float(v["temp"]) * 9 / 5 + 32 for _, v in got)
    assert {k for k, _ in got} == {b"s0", b"s1", b"s2", b"s3"}


def test_add_source_beside_a_pipeline_and_a_source_only_app(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    # a source-only application: run() ends when its sources finish
    feeder = make_app()
    feeder.add_source(Numbers(f"numbers-{src}", 30), topic=feeder.topic(src))
    assert feeder.run() == []
    assert sum(kafka.high_watermarks(src).values()) == 30
    # a pipeline over that topic, with another source running beside it into a third topic
    # that a second dataframe reads: the run's count takes the outputs of both, so it ends
    # once the side source's records went through as well
    side, side_out = kafka.new_topic(), kafka.new_topic()
    app = make_app()
    app.add_source(Numbers(f"side-{side}", 5), topic=app.topic(side))
    app.dataframe(app.topic(src)).apply(lambda v: {"n2": v["n"] * 2}).to_topic(app.topic(out))
    app.dataframe(app.topic(side)).apply(lambda v: {"n3": v["n"] * 3}).to_topic(app.topic(side_out))
    app.run(count=35, timeout=60)
    assert sorted(json.loads(m.value())["n2"] for m in kafka.consume(out, expected=30)) == [2 * i for i in range(30)]
    assert sum(kafka.high_watermarks(side).values()) == 5
    assert sorted(json.loads(m.value())["n3"] for m in kafka.consume(side_out, expected=5)) == [3 * i for i in range(5)]


def test_a_failing_source_stops_the_run_with_source_exception(make_app, kafka):
    out = kafka.new_topic()
    app = make_app()
    sdf = app.dataframe(source=Broken(name=f"broken-{out}"))
    sdf.to_topic(app.topic(out))
    with pytest.raises(SourceException, match=f"broken-{out}") as info:
        app.run()  # unbounded: only the source's failure ends it
    assert "the sensor bus went away" in str(info.value) + str(info.value.__cause__)


def test_a_source_failing_during_a_micro_batch_is_the_error_run_raises(make_app, kafka, tmp_path):
    """The failed source stops the query at once, cutting the micro-batch in flight short:
    ``run()`` raises the source's error, not Spark's interruption of that batch."""
    src, side, out = kafka.new_topic(), kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, [{"key": b"k", "value": b'{"n": 1}'}])
    marker = str(tmp_path / "batch-started")

    def slow(value):
        open(marker, "w").close()
        time.sleep(30)
        return value

    app = make_app()
    app.add_source(FailsOnMarker(f"fails-{side}", marker), topic=app.topic(side))
    app.dataframe(app.topic(src)).apply(slow).to_topic(app.topic(out))
    with pytest.raises(SourceException, match=f"fails-{side}") as info:
        app.run()
    assert "the sensor bus went away" in str(info.value) + str(info.value.__cause__)
    assert os.path.exists(marker)  # the source failed while the micro-batch ran
