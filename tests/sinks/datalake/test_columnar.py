"""The lake sink's raw-JSON chunk path against the per-record path (``plan_files``).

Every accepted chunk must give the same files (paths, column order, types, values) as decoding
each value with orjson and planning row by row; chunks where Arrow's JSON reader could differ
from orjson are refused.
"""

from __future__ import annotations

import io
import random
from typing import Any, Optional

import orjson
import pyarrow as pa
import pytest

from streamspark.models.serializers.avro import AvroDeserializer
from streamspark.sinks.datalake._columnar import plan_chunks, read_avro_chunk, read_chunk
from streamspark.sinks.datalake._layout import plan_files

HOUR_MS = 3_600_000
BASE_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
HOURS = ["year", "month", "day", "hour"]


def _chunk(values: list[Any], keys: Optional[list[Any]] = None, stamps: Optional[list[int]] = None, raw: bool = False):
    encoded = values if raw else [orjson.dumps(v) for v in values]
    keys = keys if keys is not None else [f"k{i}".encode() for i in range(len(values))]
    stamps = stamps if stamps is not None else [BASE_MS + i for i in range(len(values))]
    return encoded, keys, stamps


def _plain(chunks: list[tuple[list[bytes], list[Any], list[int]]], hive: list[str], schema=None, max_rows=0):
    rows = [(orjson.loads(v), k, t) for values, keys, stamps in chunks for v, k, t in zip(values, keys, stamps)]
    return plan_files(rows, "ts", hive, schema, max_rows)


def _fast(chunks, hive, schema=None, max_rows=0):
    read = [read_chunk(values, keys, stamps, "ts") for values, keys, stamps in chunks]
    assert all(c is not None for c in read), "a chunk was refused"
    return plan_chunks(read, "ts", hive, schema, max_rows)


def _same(plain, fast) -> None:
    assert fast is not None
    assert [p.path_parts for p in fast] == [p.path_parts for p in plain]
    for a, b in zip(plain, fast):
        assert b.partition == a.partition
        assert b.table.schema == a.table.schema, f"{a.path_parts}: {a.table.schema} != {b.table.schema}"
        assert b.table.to_pylist() == a.table.to_pylist()


def _random_value(rnd: random.Random, i: int, with_ts: bool, temp_kind: str) -> dict[str, Any]:
    value: dict[str, Any] = {"n": i}
    if with_ts:
        value["ts"] = BASE_MS + rnd.randrange(-2, 5) * HOUR_MS + rnd.randrange(HOUR_MS)
    if rnd.random() < 0.9:
        value["temp"] = (
            rnd.randrange(-50, 50)
            if temp_kind == "int"
            else (
                round(rnd.uniform(-50, 50), rnd.randrange(1, 17))
                if temp_kind == "float"
                else rnd.choice([rnd.randrange(100), rnd.uniform(0, 1)])
            )
        )
    if rnd.random() < 0.7:
        value["name"] = rnd.choice(["north", "süd", "東", 'a"quote', "back\\slash", "2024-01-01", ""])
    if rnd.random() < 0.5:
        value["ok"] = rnd.random() < 0.5
    if rnd.random() < 0.3:
        value["note"] = None
    if rnd.random() < 0.2:
        value[f"extra{i % 3}"] = i
    items = list(value.items())
    rnd.shuffle(items)  # field order differs between values
    return dict(items)


@pytest.mark.parametrize("seed", range(12))
def test_random_chunks_give_the_files_of_the_per_record_path(seed):
    rnd = random.Random(seed)
    chunks = []
    for c in range(rnd.randrange(1, 5)):
        n = rnd.randrange(1, 60)
        with_ts = rnd.random() < 0.8  # a whole chunk without the column takes Kafka timestamps
        temp_kind = rnd.choice(["int", "float", "mixed"])
        values = [_random_value(rnd, i, with_ts, temp_kind) for i in range(n)]
        keys = [rnd.choice([None, b"a", b"b", f"s{i}".encode()]) for i in range(n)]
        stamps = [BASE_MS + rnd.randrange(-3, 3) * HOUR_MS + rnd.randrange(HOUR_MS) for _ in range(n)]
        chunks.append(_chunk(values, keys, stamps))
    hive = rnd.choice([HOURS, ["year", "month", "day"], ["hour"], []])
    max_rows = rnd.choice([0, 7])
    plain = _plain(chunks, hive, max_rows=max_rows)
    _same(plain, _fast(chunks, hive, max_rows=max_rows))


def test_ints_of_one_hour_and_floats_of_another_keep_their_own_types():
    """Types are inferred per partition on the plain path: a chunk spanning hours is read per hour."""
    values = [{"ts": BASE_MS, "v": 1}, {"ts": BASE_MS + HOUR_MS, "v": 2.5}, {"ts": BASE_MS + 1, "v": 3}]
    chunks = [_chunk(values)]
    plain = _plain(chunks, HOURS)
    assert [p.table.schema.field("v").type for p in plain] == [pa.int64(), pa.float64()]
    _same(plain, _fast(chunks, HOURS))


def test_a_field_only_in_another_hour_is_not_a_column_here():
    values = [{"ts": BASE_MS, "a": 1}, {"ts": BASE_MS + HOUR_MS, "b": "x"}]
    fast = _fast([_chunk(values)], HOURS)
    assert [p.table.column_names[:2] for p in fast] == [["ts", "a"], ["ts", "b"]]
    _same(_plain([_chunk(values)], HOURS), fast)


def test_chunks_with_and_without_the_timestamp_share_a_partition():
    with_ts = _chunk([{"ts": BASE_MS + 5, "v": 1}])
    without = _chunk([{"v": 2.0}], stamps=[BASE_MS + 6])
    _same(_plain([without, with_ts], HOURS), _fast([without, with_ts], HOURS))
    _same(_plain([with_ts, without], HOURS), _fast([with_ts, without], HOURS))


def test_with_the_table_schema_the_columns_are_cast_the_same_way():
    schema = pa.schema([("ts", pa.int64()), ("v", pa.float64()), ("name", pa.string())])
    chunks = [_chunk([{"ts": BASE_MS, "v": 1, "name": None}, {"ts": BASE_MS, "v": 2}])]
    _same(_plain(chunks, HOURS, schema), _fast(chunks, HOURS, schema))


def test_seconds_and_microseconds_are_detected_from_the_first_stamp():
    for scale in (1 / 1000, 1000):
        chunks = [_chunk([{"ts": int((BASE_MS + i * HOUR_MS) * scale)} for i in range(3)])]
        _same(_plain(chunks, HOURS), _fast(chunks, HOURS))


def test_timestamps_before_the_epoch():
    chunks = [_chunk([{"ts": -1}, {"ts": -HOUR_MS - 1}, {"ts": 0}])]
    plain = _plain(chunks, HOURS)
    assert len(plain) == 3
    _same(plain, _fast(chunks, HOURS))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"ts": 1, "v": NaN}',  # orjson refuses NaN and Infinity
        b'{"ts": 1, "v": Infinity}',
        b'{"ts": 1, "v": 1.5, "big": 18446744073709551615}',  # orjson keeps it an int; Arrow a double
        b'{"ts": 1, "big": -9223372036854775809}',
        b'{"ts": 1, "v": 1e300}',  # as large as those: refused too
        b'{"ts": 1}{"ts": 2}',  # two documents in one value
        b'{"ts": 1,\n "v": 2}',  # a line break inside a value
        b' {"ts": 1}',  # whitespace around the object
        b'\xef\xbb\xbf{"ts": 1}',  # a byte order mark
        b'{"ts": 1, "ts": 2}',  # a repeated field (orjson keeps the last)
        b'{"ts": null}',  # null timestamp: no Kafka timestamp for it
        b'{"ts": 1.5}',  # not an integer timestamp
        b'{"ts": "2024-01-01T00:00:00Z"}',
        b'{"ts": 1, "nested": {"a": 1}}',  # nested values are built row by row
        b'{"ts": 1, "list": [1, 2]}',
        b"[1, 2]",
        b"5",
        b"",
        b"{}",
    ],
)
def test_chunks_that_could_differ_from_orjson_are_refused(raw):
    values = [b'{"ts": 2, "v": 1.25}', raw]
    assert read_chunk(values, [None, None], [0, 0], "ts") is None


def test_a_tombstone_is_refused():
    assert read_chunk([b'{"ts": 1}', None], [None, None], [0, 0], "ts") is None


def test_iso_looking_strings_stay_strings():
    chunk = read_chunk([b'{"ts": 5, "day": "2024-01-01", "at": "2024-01-01T10:00:00"}'], [None], [0], "ts")
    assert chunk is not None
    assert chunk.table.schema.field("day").type == pa.string()
    chunks = [_chunk([{"ts": 5, "day": "2024-01-01", "at": "2024-01-01T10:00:00"}])]
    _same(_plain(chunks, HOURS), _fast(chunks, HOURS))


def test_types_the_plain_path_rejects_are_left_to_it():
    """A partition mixing strings and numbers over two chunks: the plain path words the error."""
    chunks = [_chunk([{"ts": BASE_MS, "v": 1}]), _chunk([{"ts": BASE_MS, "v": "x"}])]
    read = [read_chunk(*c, "ts") for c in chunks]
    assert plan_chunks(read, "ts", HOURS) is None
    with pytest.raises(TypeError, match="mixed types"):
        _plain(chunks, HOURS)


def test_a_partition_of_empty_objects_is_left_to_the_plain_path():
    values = [{"ts": BASE_MS, "v": 1}, {}]
    chunk = read_chunk(*_chunk(values, stamps=[BASE_MS, BASE_MS + 2 * HOUR_MS]), "ts")
    assert chunk is None  # the empty object has no timestamp: Arrow reads a null there
    chunk = read_chunk(*_chunk([{"v": 1}, {}], stamps=[BASE_MS, BASE_MS + 2 * HOUR_MS]), "ts")
    assert chunk is not None
    assert plan_chunks([chunk], "ts", HOURS) is None


def test_a_hive_column_from_the_value_is_left_to_the_plain_path():
    chunk = read_chunk(*_chunk([{"ts": BASE_MS, "site": "a"}]), "ts")
    assert plan_chunks([chunk], "ts", ["site", "year"]) is None


# --- Avro chunks (``read_avro_chunk``): the files of decoding each value with fastavro ---

READING_AVRO: dict[str, Any] = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "ts", "type": "long"},
        {"name": "n", "type": "int"},
        {"name": "temp", "type": ["null", "double"]},
        {"name": "low", "type": "float"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "ok", "type": "boolean"},
        {"name": "note", "type": ["null", "long"]},
    ],
}


def _avro_chunk(records: list[dict[str, Any]], keys: list[Any], stamps: list[int], schema: Any):
    import fastavro

    values = []
    for record in records:
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, schema, record)
        values.append(buffer.getvalue())
    return values, keys, stamps


def _avro_plain(chunks, schema, hive, max_rows=0):
    import fastavro

    rows = [
        (fastavro.schemaless_reader(io.BytesIO(v), schema, None), k, t)
        for values, keys, stamps in chunks
        for v, k, t in zip(values, keys, stamps)
    ]
    return plan_files(rows, "ts", hive, None, max_rows)


def _avro_fast(chunks, schema, hive, max_rows=0):
    decoder = AvroDeserializer(schema).arrow_decoder()
    read = [read_avro_chunk(values, keys, stamps, "ts", decoder) for values, keys, stamps in chunks]
    assert all(c is not None for c in read), "a chunk was refused"
    return plan_chunks(read, "ts", hive, None, max_rows)


@pytest.mark.parametrize("seed", range(10))
def test_random_avro_chunks_give_the_files_of_the_per_record_path(seed):
    import fastavro

    schema = fastavro.parse_schema(READING_AVRO)
    rnd = random.Random(seed)
    chunks = []
    for _ in range(rnd.randrange(1, 4)):
        n = rnd.randrange(1, 50)
        records = [
            {
                "ts": BASE_MS + rnd.randrange(-2, 4) * HOUR_MS + rnd.randrange(HOUR_MS),
                "n": rnd.randrange(-(2**31), 2**31),
                # some chunks/hours have no temp or no note at all: null columns there
                "temp": rnd.choice([None, rnd.uniform(-50, 50)]) if rnd.random() < 0.5 else None,
                "low": rnd.uniform(-1, 1),
                "name": rnd.choice([None, "north", "süd", "東", ""]),
                "ok": rnd.random() < 0.5,
                "note": rnd.choice([None, 7]) if rnd.random() < 0.3 else None,
            }
            for _ in range(n)
        ]
        keys = [rnd.choice([None, b"a", f"s{i}".encode()]) for i in range(n)]
        stamps = [BASE_MS + rnd.randrange(HOUR_MS) for _ in range(n)]
        chunks.append(_avro_chunk(records, keys, stamps, schema))
    hive = rnd.choice([HOURS, ["year", "month", "day"], ["hour"], []])
    max_rows = rnd.choice([0, 7])
    _same(_avro_plain(chunks, schema, hive, max_rows), _avro_fast(chunks, schema, hive, max_rows))


def test_an_avro_column_null_in_one_hour_is_typed_there_as_on_the_plain_path():
    """The per-record path infers a partition's types from its values: a column of nulls
    there is not the schema's double."""
    import fastavro

    schema = fastavro.parse_schema(READING_AVRO)
    base = {"n": 1, "low": 0.5, "name": None, "ok": True, "note": None}
    records = [{**base, "ts": BASE_MS, "temp": 1.5}, {**base, "ts": BASE_MS + HOUR_MS, "temp": None}]
    chunks = [_avro_chunk(records, [b"k", b"k"], [0, 0], schema)]
    plain = _avro_plain(chunks, schema, HOURS)
    assert [p.table.schema.field("temp").type for p in plain] == [pa.float64(), pa.string()]
    _same(plain, _avro_fast(chunks, schema, HOURS))
    one_hour = [_avro_chunk(records[1:], [b"k"], [0], schema)]
    _same(_avro_plain(one_hour, schema, HOURS), _avro_fast(one_hour, schema, HOURS))


@pytest.mark.parametrize(
    "fields,record",
    [
        ([{"name": "ts", "type": "long"}, {"name": "b", "type": "bytes"}], {"ts": 1, "b": b"x"}),  # bytes: row by row
        ([{"name": "ts", "type": ["null", "long"]}], {"ts": None}),  # a null timestamp
        ([{"name": "ts", "type": "double"}], {"ts": 1.5}),  # not an integer timestamp
        ([{"name": "ts", "type": "long"}, {"name": "v", "type": "double"}], {"ts": 1, "v": float("nan")}),
    ],
)
def test_avro_chunks_the_per_record_path_could_build_differently_are_refused(fields, record):
    import fastavro

    schema = fastavro.parse_schema({"type": "record", "name": "X", "fields": fields})
    values, keys, stamps = _avro_chunk([record], [None], [0], schema)
    assert read_avro_chunk(values, keys, stamps, "ts", AvroDeserializer(schema).arrow_decoder()) is None
