"""``ArrowAvroDecoder`` against fastavro: a chunk it decodes gives exactly fastavro's records, and
a chunk holding anything fastavro would read differently (or refuse) is refused."""

from __future__ import annotations

import io
import math
import random
import struct
from typing import Any

import fastavro
import pytest

from streamspark.models.serializers.avro import ArrowAvroDecoder, AvroDeserializer

ALL_TYPES: dict[str, Any] = {
    "type": "record",
    "name": "Every",
    "namespace": "test",
    "fields": [
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "b", "type": "bytes"},
        {"name": "o", "type": "boolean"},
        {"name": "n", "type": "null"},
        {"name": "boxed", "type": {"type": "long"}},
        {"name": "us", "type": ["null", "string"], "default": None},
        {"name": "ul", "type": ["long", "null"]},
        {"name": "ud", "type": ["null", "double"]},
        {"name": "uo", "type": ["null", "boolean"]},
        {"name": "ub", "type": ["null", "bytes"]},
    ],
}
PARSED = fastavro.parse_schema(ALL_TYPES)


def _encode(record: dict[str, Any], schema: Any = PARSED) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, schema, record)
    return buffer.getvalue()


def _fastavro(values: list[bytes], schema: Any = PARSED) -> list[dict[str, Any]]:
    return [fastavro.schemaless_reader(io.BytesIO(v), schema, None) for v in values]


def _random_record(rnd: random.Random) -> dict[str, Any]:
    return {
        "i": rnd.choice([0, -1, 1, 63, -64, 64, 2**31 - 1, -(2**31), rnd.randint(-(2**31), 2**31 - 1)]),
        "l": rnd.choice([0, 2**63 - 1, -(2**63), 2**56, -(2**35), rnd.randint(-(2**62), 2**62)]),
        "f": rnd.choice([0.0, -0.0, 1.5, 3.4e38, 1e-45, rnd.uniform(-1e6, 1e6)]),
        "d": rnd.choice([0.0, -0.0, 1e308, 5e-324, rnd.uniform(-1, 1)]),
        "s": rnd.choice(["", "north", "süd", "東京", "a\nb", "x" * rnd.randrange(200)]),
        "b": bytes(rnd.randrange(256) for _ in range(rnd.randrange(140))),
        "o": rnd.random() < 0.5,
        "n": None,
        "boxed": rnd.randint(-1000, 1000),
        "us": rnd.choice([None, "", "ü", "value"]),
        "ul": rnd.choice([None, 0, -(2**63), 2**40]),
        "ud": rnd.choice([None, 2.5, -1e-300]),
        "uo": rnd.choice([None, True, False]),
        "ub": rnd.choice([None, b"", b"\x00\xff"]),
    }


def _same(got: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert list(a) == list(b)  # field order too
        for name in a:
            x, y = a[name], b[name]
            if isinstance(y, float):
                # bit for bit (tells -0.0 from 0.0)
                assert isinstance(x, float) and struct.pack("<d", x) == struct.pack("<d", y), name
            else:
                assert type(x) is type(y) and x == y, name


@pytest.mark.parametrize("seed", range(8))
def test_a_chunk_gives_fastavros_records(seed):
    rnd = random.Random(seed)
    values = [_encode(_random_record(rnd)) for _ in range(rnd.randrange(1, 400))]
    decoder = ArrowAvroDecoder.for_schema(PARSED)
    assert decoder is not None
    table = decoder.decode(values)
    assert table is not None
    _same(table.to_pylist(), _fastavro(values))


def test_floats_keep_their_float32_value_and_nan_and_infinities_decode():
    schema = fastavro.parse_schema(
        {"type": "record", "name": "F", "fields": [{"name": "f", "type": "float"}, {"name": "d", "type": "double"}]}
    )
    records = [{"f": 0.1, "d": 0.1}, {"f": math.inf, "d": -math.inf}, {"f": math.nan, "d": math.nan}]
    values = [_encode(r, schema) for r in records]
    got = ArrowAvroDecoder.for_schema(schema).decode(values).to_pylist()  # type: ignore[union-attr]
    expected = _fastavro(values, schema)
    assert got[0] == expected[0] and got[0]["f"] != 0.1  # the float32 nearest 0.1, widened
    assert got[1] == expected[1]
    assert all(math.isnan(got[2][k]) for k in "fd")


def _one_long_and_string(raw: bytes) -> Any:
    schema = fastavro.parse_schema(
        {"type": "record", "name": "LS", "fields": [{"name": "n", "type": "long"}, {"name": "s", "type": "string"}]}
    )
    return ArrowAvroDecoder.for_schema(schema).decode([_encode({"n": 1, "s": "ok"}, schema), raw])  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"\x02\x04o", id="truncated string"),
        pytest.param(b"\x02", id="missing field"),
        pytest.param(b"", id="empty value"),
        pytest.param(b"\x02\x04ok\x00", id="a byte left over"),
        pytest.param(b"\x02\x03ok", id="negative length"),
        pytest.param(b"\x02\x04\xff\xfe", id="invalid utf-8"),
        pytest.param(b"\x80" * 10 + b"\x01\x00", id="varint over 10 bytes"),
        pytest.param(b"\xff" * 9 + b"\x02\x00", id="10th byte past 64 bits"),
        pytest.param(b"\x80", id="varint cut short"),
    ],
)
def test_a_chunk_with_a_value_that_is_not_exactly_one_record_is_refused(raw):
    assert _one_long_and_string(raw) is None


def test_a_non_canonical_varint_decodes_as_fastavro_reads_it():
    raw = b"\x82\x00\x04ok"  # 1 written in two bytes
    schema = fastavro.parse_schema(
        {"type": "record", "name": "LS", "fields": [{"name": "n", "type": "long"}, {"name": "s", "type": "string"}]}
    )
    assert _one_long_and_string(raw).to_pylist()[1] == _fastavro([raw], schema)[0] == {"n": 1, "s": "ok"}


@pytest.mark.parametrize(
    "raw,why",
    [
        (b"\x04", "a union branch that does not exist"),
        (b"\x01", "a negative union branch"),
    ],
)
def test_bad_union_branches_are_refused(raw, why):
    schema = fastavro.parse_schema({"type": "record", "name": "U", "fields": [{"name": "u", "type": ["null", "long"]}]})
    assert ArrowAvroDecoder.for_schema(schema).decode([raw + b"\x02"]) is None, why  # type: ignore[union-attr]


def test_a_boolean_byte_other_than_0_or_1_is_left_to_fastavro():
    schema = fastavro.parse_schema({"type": "record", "name": "B", "fields": [{"name": "o", "type": "boolean"}]})
    decoder = ArrowAvroDecoder.for_schema(schema)
    assert decoder.decode([b"\x01", b"\x00"]).to_pylist() == [{"o": True}, {"o": False}]  # type: ignore[union-attr]
    assert decoder.decode([b"\x02"]) is None  # type: ignore[union-attr]


def test_a_tombstone_or_an_empty_chunk_is_refused():
    decoder = ArrowAvroDecoder.for_schema(PARSED)
    assert decoder.decode([]) is None  # type: ignore[union-attr]
    assert decoder.decode([_encode(_random_record(random.Random(0))), None]) is None  # type: ignore[union-attr,list-item]


@pytest.mark.parametrize(
    "field_type",
    [
        {"type": "long", "logicalType": "timestamp-millis"},
        {"type": "int", "logicalType": "date"},
        {"type": "string", "logicalType": "uuid"},
        {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
        {"type": "enum", "name": "E", "symbols": ["A"]},
        {"type": "array", "items": "long"},
        {"type": "map", "values": "long"},
        {"type": "fixed", "name": "Fx", "size": 2},
        {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "long"}]},
        ["null", "long", "string"],
        ["long", "string"],
        ["null", {"type": "long", "logicalType": "timestamp-millis"}],
    ],
)
def test_schemas_with_types_it_does_not_cover_get_no_decoder(field_type):
    schema = fastavro.parse_schema({"type": "record", "name": "X", "fields": [{"name": "f", "type": field_type}]})
    assert ArrowAvroDecoder.for_schema(schema) is None


def test_only_a_plain_deserializer_offers_a_decoder():
    schema = {"type": "record", "name": "R", "fields": [{"name": "v", "type": "long"}]}
    assert AvroDeserializer(schema).arrow_decoder() is not None
    assert AvroDeserializer(schema, reader_schema=schema).arrow_decoder() is None
    assert AvroDeserializer(schema, return_record_name=True).arrow_decoder() is None
    assert AvroDeserializer(schema, handle_unicode_errors="replace").arrow_decoder() is None
    assert AvroDeserializer("long").arrow_decoder() is None  # not a record


def test_huge_lengths_are_refused_not_wrapped_around():
    """A length varint near 2**63 (e.g. a long read as a string's length) must not overflow the
    bounds check: the chunk is refused, nothing is read past the values."""
    schema = fastavro.parse_schema({"type": "record", "name": "S", "fields": [{"name": "s", "type": "string"}]})
    decoder = ArrowAvroDecoder.for_schema(schema)
    huge = b"\xfe" + b"\xff" * 8 + b"\x01"
    assert decoder.decode([huge + b"a", huge + b"b", b"\x04cd"]) is None  # type: ignore[union-attr]
    assert decoder.decode([huge + b"a", huge + b"b"]) is None  # type: ignore[union-attr]


def test_a_signalling_nan_float_decodes_under_strict_numpy_errors():
    import numpy as np

    schema = fastavro.parse_schema({"type": "record", "name": "F", "fields": [{"name": "f", "type": "float"}]})
    raw = struct.pack("<I", 0x7FA00000)  # a signalling NaN
    with np.errstate(all="raise"):
        table = ArrowAvroDecoder.for_schema(schema).decode([raw])  # type: ignore[union-attr]
    assert table is not None and math.isnan(table.to_pylist()[0]["f"])


def test_a_subclass_that_changes_the_records_keeps_the_per_record_path():
    schema = {"type": "record", "name": "R", "fields": [{"name": "v", "type": "long"}]}

    class Tagged(AvroDeserializer):
        def __call__(self, value, ctx):
            return {**super().__call__(value, ctx), "tag": 1}

    assert Tagged(schema).arrow_decoder() is None


# --- ArrowAvroEncoder ---------------------------------------------------------------------

_ENCODER_KINDS = ["null", "boolean", "int", "long", "float", "double", "string", "bytes"]


def _encoder_value(kind: str, rnd: random.Random) -> Any:
    if kind == "null":
        return None
    if kind == "boolean":
        return rnd.random() < 0.5
    if kind == "int":
        if rnd.random() < 0.005:  # past 32 bits: the chunk is refused
            return rnd.choice([2**31, 2**40])
        return rnd.choice([0, -1, 63, 64, -65, 2**31 - 1, -(2**31), rnd.randint(-(10**6), 10**6)])
    if kind == "long":
        return rnd.choice([0, 1, -64, 8191, 8192, 2**62, -(2**62), 2**63 - 1, -(2**63), rnd.randint(-(10**12), 10**12)])
    if kind in ("float", "double"):
        return rnd.choice([0.0, -0.0, math.inf, -math.inf, 1e300, 1e-300, rnd.uniform(-1e6, 1e6), 3, -7, 2**53])
    if kind == "string":
        return rnd.choice(["", "a", "süd", "東京", "x" * 200, "\U0001f600"])
    return bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 150)))


@pytest.mark.parametrize("seed", range(60))
def test_the_encoder_gives_fastavros_bytes_or_refuses(seed):
    """Random flat schemas and records (extra keys, now and then a missing field or a value of
    another type): a chunk is either encoded to fastavro's bytes exactly, or refused."""
    from streamspark.models.serializers.avro import ArrowAvroEncoder

    rnd = random.Random(seed)
    fields = []
    for i in range(rnd.randint(1, 6)):
        kind = rnd.choice(_ENCODER_KINDS)
        union = kind != "null" and rnd.random() < 0.3
        fields.append({"name": f"f{i}", "type": (["null", kind] if rnd.random() < 0.5 else [kind, "null"]) if union else kind})
    schema = fastavro.parse_schema({"type": "record", "name": "R", "fields": fields})
    encoder = ArrowAvroEncoder.for_schema(schema)
    assert encoder is not None
    taken = 0
    for _ in range(25):
        records = []
        for _ in range(rnd.randint(1, 30)):
            record = {}
            for field in fields:
                kinds = field["type"] if isinstance(field["type"], list) else [field["type"]]
                kind = next(k for k in kinds if k != "null") if len(kinds) > 1 else kinds[0]
                record[field["name"]] = None if len(kinds) > 1 and rnd.random() < 0.3 else _encoder_value(kind, rnd)
            if rnd.random() < 0.2:
                record["extra"] = 1
            if rnd.random() < 0.02:
                record.pop(fields[0]["name"])
            if rnd.random() < 0.02:
                record[fields[-1]["name"]] = rnd.choice(["wrong", 1.5, True, None])
            records.append(record)
        encoded = encoder.encode(records)
        if encoded is None:
            continue
        taken += 1
        expected = []
        for record in records:
            buffer = io.BytesIO()
            fastavro.schemaless_writer(buffer, schema, record)
            expected.append(buffer.getvalue())
        assert encoded == expected
    assert taken >= 5  # most chunks are encoded (the rest hold a value of another type)


def test_the_encoder_refuses_what_fastavro_would_convert_or_reject():
    from streamspark.models.serializers.avro import ArrowAvroEncoder

    schema = fastavro.parse_schema(
        {"type": "record", "name": "R", "fields": [{"name": "n", "type": "long"}, {"name": "x", "type": "double"}]}
    )
    encoder = ArrowAvroEncoder.for_schema(schema)
    assert encoder.encode([{"n": 1, "x": 1.0}]) == [b"\x02" + struct.pack("<d", 1.0)]
    for bad in ({"n": 1.0, "x": 1.0}, {"n": True, "x": 1.0}, {"n": 1, "x": 2**53 + 1}, {"n": 2**64, "x": 1.0}, {"x": 1.0}):
        assert encoder.encode([{"n": 1, "x": 1.0}, bad]) is None, bad
    assert encoder.encode([[1, 1.0]]) is None  # not a dict
    # an int past 32 bits: fastavro refuses it in a union (and writes it as a long otherwise)
    for union in (["null", "int"], ["int", "null"], "int"):
        ints = ArrowAvroEncoder.for_schema(
            fastavro.parse_schema({"type": "record", "name": "I", "fields": [{"name": "v", "type": union}]})
        )
        assert ints.encode([{"v": 2**31 - 1}, {"v": -(2**31)}]) is not None
        assert ints.encode([{"v": 2**31}]) is None and ints.encode([{"v": -(2**31) - 1}]) is None
    assert encoder.encode([]) == []
