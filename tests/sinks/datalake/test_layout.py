"""Rows to Hive-partitioned files: timestamp units, padding, the __None__ sentinel, bad input."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from streamspark.sinks.datalake._layout import HIVE_NULL, conform_table, detect_unit, plan_files

T = dt.datetime(2024, 3, 5, 7, 30, tzinfo=dt.timezone.utc)
SECONDS = int(T.timestamp())


@pytest.mark.parametrize(
    "stamp",
    [
        SECONDS,
        SECONDS * 1000,
        SECONDS * 1_000_000,
        SECONDS * 1_000_000_000,
        float(SECONDS),
        "2024-03-05T07:30:00Z",
        "2024-03-05T08:30:00+01:00",
        T,
    ],
)
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


def test_a_field_missing_from_the_first_rows_is_kept():
    rows = [({"ts": SECONDS, "a": 1}, b"k", 0), ({"ts": SECONDS, "a": 2, "b": "late"}, b"k", 0)]
    [f] = plan_files(rows, "ts", ["year"])
    assert f.table.column_names == ["ts", "a", "b", "__key", "year"]
    assert f.table.column("b").to_pylist() == [None, "late"]


def _rows_of(stamps, unit_scale):
    return [({"ts": s * unit_scale, "i": i}, b"k", 0) for i, s in enumerate(stamps)]


@pytest.mark.parametrize("scale", [1, 1000, 1_000_000, 1_000_000_000])
def test_partitions_found_per_hour_match_each_rows_own_time(scale):
    from streamspark.sinks.datalake._layout import _time_parts, _to_datetime, detect_unit

    # seconds around hour and day boundaries, before the epoch too, in arrival (not time) order
    base = SECONDS - SECONDS % 86400
    stamps = [base - 1, base, base + 3599, base + 3600, base - 86400 * 30 - 1, -1, -3600, -3601, 0, base + 1]
    if scale == 1:
        stamps = [s for s in stamps if s > 1e9] + [s for s in stamps if s <= 1e9]  # detect "s" from the first
    files = plan_files(_rows_of(stamps, scale), "ts", ["year", "month", "day", "hour"])
    unit = detect_unit(float(stamps[0] * scale))
    for f in files:
        for stamp in f.table.column("ts").to_pylist():
            parts = _time_parts(_to_datetime(stamp, unit, "ts"))
            assert f.path_parts == tuple(f"{c}={parts[c]}" for c in ("year", "month", "day", "hour"))
    assert sum(f.table.num_rows for f in files) == len(stamps)
    assert [r for f in files for r in f.table.column("i").to_pylist()] == [
        r for _, r in sorted((f.path_parts, i) for f in files for i in f.table.column("i").to_pylist())
    ]  # files sorted by partition, rows in arrival order inside each


@pytest.mark.parametrize(
    "values",
    [
        [{"ts": SECONDS, "t": 1.5, "n": 1}, {"n": 2, "t": 3, "s": "x"}, {"ts": None, "t": None, "b": True}],
        [{"v": 1}, {"v": 2.5}, {"__key": "own", "year": "1999", "v": None}],
        [{"ts": "2024-03-05T07:30:00Z", "v": b"raw"}, {"v": b"x", "w": None, "ts": "2024-03-05T08:00:00Z"}],
    ],
)
def test_columnar_and_row_builds_give_the_same_table(values):
    from streamspark.sinks.datalake._layout import _columnar_table, _Group, _row_table

    group = _Group(("year=2024",), {"year": "2024"})
    for i, value in enumerate(values):
        group.values.append(value)
        group.keys.append(f"k{i}".encode() if i else None)
        group.stamps.append(value.get("ts", SECONDS * 1000))
        group.filled = group.filled or "ts" not in value
    columnar, by_row = _columnar_table(group, "ts", ["year"]), _row_table(group, "ts", ["year"])
    assert columnar.schema == by_row.schema
    assert columnar.to_pylist() == by_row.to_pylist()


def test_nested_and_mixed_values_take_the_row_build():
    rows = [({"ts": SECONDS, "meta": {"a": {}}, "tags": [1]}, b"k", 0), ({"ts": SECONDS, "meta": {}}, b"k", 0)]
    [f] = plan_files(rows, "ts", ["year"])
    assert f.table.column("meta").to_pylist() == [{"a": None}, None]
    with pytest.raises(TypeError, match="Values of partition year=2024 have mixed types"):
        plan_files([({"ts": SECONDS, "v": 1}, b"k", 0), ({"ts": SECONDS, "v": "one"}, b"k", 0)], "ts", ["year"])
