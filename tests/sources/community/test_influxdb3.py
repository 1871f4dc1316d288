"""InfluxDB3Source at its client boundary: no InfluxDB 3 server installs here, so a fake
``InfluxDBClient3`` answering InfluxQL queries from canned points stands in for the service (in
the source's process too). A Spark pipeline reading two measurements, the query windows,
retries, and bad input (unreachable database, empty database, failing window)."""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timedelta, timezone
from typing import Any, Optional

import pandas as pd
import pytest

from streamspark.sources import SourceInputError
from streamspark.sources.community.influxdb3 import InfluxDB3Source, NoMeasurementsFound

from ..conftest import run_in_process

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


class FakeInfluxDB:
    """Stands in for ``influxdb_client_3.InfluxDBClient3`` (client boundary): answers
    ``SHOW MEASUREMENTS`` and ``SELECT * FROM <m> WHERE time >= $start_time AND time < $end_time``
    from ``points`` ({measurement: [(time, {field: value})]}); ``fail`` queries raise first."""

    def __init__(self, points: dict, fail: int = 0, down: bool = False) -> None:
        self.points, self.fail, self.down = points, fail, down
        self.queries: list[tuple[str, Optional[dict]]] = []
        self.closed = False

    def query(self, query: str, mode: str = "all", language: str = "sql", query_parameters: Optional[dict] = None):
        assert (mode, language) == ("pandas", "influxql")
        if self.down:
            raise ConnectionError("failed to connect to all addresses")
        self.queries.append((query, query_parameters))
        if query == "SHOW MEASUREMENTS":
            return pd.DataFrame({"iox::measurement": ["measurements"] * len(self.points), "name": list(self.points)})
        if self.fail:
            self.fail -= 1
            raise TimeoutError("query timed out")
        measurement = re.search(r"FROM (\S+)", query).group(1)  # type: ignore[union-attr]
        start, end = (datetime.fromisoformat(query_parameters[k]) for k in ("start_time", "end_time"))  # type: ignore[index]
        rows = [
            {"iox::measurement": measurement, "time": pd.Timestamp(t), **fields}
            for t, fields in self.points.get(measurement, [])
            if start <= t < end
        ]
        return pd.DataFrame(rows)

    def close(self) -> None:
        self.closed = True


class FakeBackedInfluxDB3Source(InfluxDB3Source):
    """An InfluxDB3Source querying a :class:`FakeInfluxDB` (made in the source's process)."""

    def __init__(self, points: dict, fail: int = 0, down: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("host", "http://influxdb.invalid:8181")
        super().__init__(token="t", organization_id="org", database="sensors", **kwargs)
        self.points, self.fail, self.down = points, fail, down
        self.fake: Optional[FakeInfluxDB] = None

    def influxdb_client(self) -> FakeInfluxDB:
        self.fake = FakeInfluxDB(self.points, self.fail, self.down)
        return self.fake


POINTS = {
    "temperature": [
        (T0 + timedelta(minutes=10), {"room": "a", "value": 20.5}),
        (T0 + timedelta(minutes=70), {"room": "b", "value": 21.0}),
    ],
    "humidity": [(T0 + timedelta(minutes=30), {"room": "a", "value": 40.0})],
}


def test_spark_pipeline_reads_every_measurement_client_boundary(make_app, kafka):
    out = kafka.new_topic()
    app = make_app()
    source = FakeBackedInfluxDB3Source(
        POINTS, start_date=T0, end_date=T0 + timedelta(hours=2), time_delta="1h", name=f"influx-{out}"
    )
    sdf = app.dataframe(source=source)
    sdf["fahrenheit"] = sdf["value"] * 9 / 5 + 32
    sdf.to_topic(app.topic(out))
    app.run(count=3, timeout=60)
    got = sorted(((m.key(), json.loads(m.value())) for m in kafka.consume(out, expected=3)), key=lambda kv: kv[1]["time"])
    assert [(k, v["_measurement_name"], v["room"], v["fahrenheit"], v["time"]) for k, v in got] == [
        (b"temperature", "temperature", "a", 68.9, "2024-05-01T12:10:00.000Z"),
        (b"humidity", "humidity", "a", 104.0, "2024-05-01T12:30:00.000Z"),
        (b"temperature", "temperature", "b", 69.8, "2024-05-01T13:10:00.000Z"),
    ]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_measurements_are_queried_one_after_another_in_windows_client_boundary():
    source = FakeBackedInfluxDB3Source(
        POINTS, start_date=T0, end_date=T0 + timedelta(hours=2), time_delta="1h", measurements=["temperature", "humidity"]
    )
    assert source.name == "influxdb3_sensors_temperature-humidity"
    msgs = run_in_process(source)
    assert [(m["key"], json.loads(m["value"])["value"], m["timestamp"]) for m in msgs] == [
        (b"temperature", 20.5, None),
        (b"temperature", 21.0, None),
        (b"humidity", 40.0, None),
    ]
    assert source.fake is not None and source.fake.closed
    windows = [(q.split()[3], p["start_time"][11:16], p["end_time"][11:16]) for q, p in source.fake.queries if p]
    assert windows == [
        ("temperature", "12:00", "13:00"),
        ("temperature", "13:00", "14:00"),
        ("humidity", "12:00", "13:00"),
        ("humidity", "13:00", "14:00"),
    ]


def test_custom_query_setters_and_column_name_client_boundary():
    source = FakeBackedInfluxDB3Source(
        POINTS,
        start_date=T0,
        end_date=T0 + timedelta(minutes=30),
        time_delta="30m",
        measurements="temperature",
        sql_query="SELECT room, value FROM {measurement_name} WHERE time >= {start_time} AND time < {end_time}",
        measurement_column_name="m",
        key_setter=lambda r: r["room"],
        timestamp_setter=lambda r: int(datetime.fromisoformat(r["time"]).timestamp() * 1000),
    )
    msgs = run_in_process(source)
    assert [(m["key"], json.loads(m["value"]), m["timestamp"]) for m in msgs] == [
        (
            b"a",
            {"time": "2024-05-01T12:10:00.000Z", "room": "a", "value": 20.5, "m": "temperature"},
            int((T0 + timedelta(minutes=10)).timestamp() * 1000),
        )
    ]
    assert source.fake is not None
    assert source.fake.queries[1][0] == ("SELECT room, value FROM temperature WHERE time >= $start_time AND time < $end_time")


def test_a_failed_query_is_retried_then_names_the_window_client_boundary():
    retried = FakeBackedInfluxDB3Source(
        POINTS, fail=1, max_retries=1, measurements="humidity", start_date=T0, end_date=T0 + timedelta(hours=1), time_delta="1h"
    )
    assert len(run_in_process(retried)) == 1
    failing = FakeBackedInfluxDB3Source(
        POINTS,
        fail=1,
        max_retries=0,
        measurements="humidity",
        start_date=T0,
        end_date=T0 + timedelta(hours=1),
        time_delta="1h",
        name="influx",
    )
    with pytest.raises(
        SourceInputError,
        match='Source "influx" cannot read the measurement "humidity" from '
        r"2024-05-01T12:00:00\+00:00 to 2024-05-01T13:00:00\+00:00: "
        "query timed out",
    ):
        run_in_process(failing)


def test_an_unreachable_or_empty_database_names_the_source_and_the_database_client_boundary():
    with pytest.raises(
        SourceInputError,
        match='Source "influx" cannot read the InfluxDB 3 database "sensors" at http://influxdb.invalid:8181: failed to connect',
    ):
        run_in_process(FakeBackedInfluxDB3Source(POINTS, down=True, name="influx"))
    with pytest.raises(NoMeasurementsFound, match='database "sensors": it has no measurements'):
        run_in_process(FakeBackedInfluxDB3Source({}, name="influx"))


def test_parameters_are_checked_when_the_source_is_created():
    with pytest.raises(ValueError, match="time_delta must be a positive count and a unit"):
        InfluxDB3Source("h", "t", "o", "db", time_delta="5 minutes")
    with pytest.raises(ValueError, match="max_retries must be >= 0"):
        InfluxDB3Source("h", "t", "o", "db", max_retries=-1)
    assert InfluxDB3Source("h", "t", "o", "db").name == "influxdb3_db_measurements"


def test_a_set_up_source_is_sent_to_its_process_without_its_client_client_boundary():
    """Clients belong to the source's process: a pickled source leaves its (unpicklable) client
    behind, and the copy sets up a client of its own."""
    from pyspark import cloudpickle

    source = FakeBackedInfluxDB3Source(POINTS, start_date=T0, end_date=T0 + timedelta(hours=1), time_delta="1h")
    source.setup()
    first, source.fake = source.fake, None  # (the test's own handle on the client)
    first.lock = threading.Lock()  # type: ignore[union-attr]  # what a real client holds: not picklable
    copy = cloudpickle.loads(cloudpickle.dumps(source))
    copy.setup()
    assert copy.fake is not None and copy.fake is not first and copy.fake.queries == [("SHOW MEASUREMENTS", None)]
