"""Rows to Hive-partitioned files: timestamp units, padding, the __None__ sentinel, bad input."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from streamspark.sinks.datalake._layout import HIVE_NULL, conform_table, detect_unit, plan_files

T = dt.datetime(2024, 3, 5, 7, 30, tzinfo=dt.timezone.utc)
SECONDS = int(T.timestamp())


@pytest.mark.parametrize("stamp", [SECONDS, SECONDS * 1000, SECONDS * 1_000_000, SECONDS * 1_000_000_000,
                                   float(SECONDS), "2024-03-05T07:30:00Z", "2024-03-05T08:30:00+01:00", T])
def test_time_columns_from_every_timestamp_form(stamp):
    [f] = plan_files([({"ts": stamp, "v": 1}, b"k", 0)], "ts", ["year", "month", "day", "hour"])
    assert f.path_parts == ("year=2024", "month=03", "day=05", "hour=07")
    row = f.table.to_pylist()[0]
    assert (row["year"], row["month"], row["day"], row["hour"]) == ("2024", "03", "05", "07")
    assert row["ts"] == stamp or isinstance(stamp, dt.datetime)  # the column keeps its value and type


def test_unit_detection_thresholds():
    assert [detect_unit(x) for x in (1e11, 1e11 + 1, 1e14 + 1, 1.1e17)] == ["s", "ms", "us", "ns"]


def test_missing_timestamp_uses_the_kafka_timestamp():
    [f] = plan_files([({"v": 1}, b"k", SECONDS * 1000)], "ts_ms", ["year", "day"])
    assert f.path_parts == ("year=2024", "day=05")
    assert f.table.to_pylist()[0]["ts_ms"] == SECONDS * 1000


def test_none_values_go_to_the_null_partition_and_other_columns_work():
    rows = [({"ts": None, "site": None, "v": 1}, b"a", 0), ({"ts": SECONDS, "site": "north/1", "v": 2}, b"b", 0)]
    files = plan_files(rows, "ts", ["site", "year"])
    assert [f.path_parts for f in files] == [
        (f"site={HIVE_NULL}", f"year={HIVE_NULL}"),
        ("site=north%2F1", "year=2024"),
    ]
    assert files[0].table.to_pylist()[0]["year"] is None  # NULL in the data, the sentinel only in the path


def test_key_column_and_split_by_size():
    rows = [({"ts": SECONDS, "i": i}, f"k{i}".encode(), 0) for i in range(10)]
    files = plan_files(rows, "ts", ["year"], max_rows_per_file=4)
    assert [f.table.num_rows for f in files] == [4, 4, 2]
    assert files[0].table.column("__key").to_pylist()[:2] == [b"k0", b"k1"]


def test_non_dict_and_unparsable_timestamps_are_clear_errors():
    with pytest.raises(TypeError, match="dict values only"):
        plan_files([([1, 2], b"k", 0)], "ts", [])
    with pytest.raises(ValueError, match="Cannot read timestamp column 'ts'.*'yesterday'"):
        plan_files([({"ts": "yesterday"}, b"k", 0)], "ts", ["year"])


def test_empty_dicts_become_null_and_conform_casts_to_the_table():
    [f] = plan_files([({"ts": 1, "meta": {}, "n": 1, "x": None}, b"k", 0)], "ts", [])
    assert f.table.to_pylist()[0]["meta"] is None
    assert f.table.schema.field("x").type == pa.string()  # an all-null new column becomes a string
    table = pa.table({"n": [1, 2]})
    assert conform_table(table, pa.schema([("n", pa.float64())])).column("n").to_pylist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="Column 'n' has type double in this batch but int64"):
        conform_table(pa.table({"n": [1.5]}), pa.schema([("n", pa.int64())]))
