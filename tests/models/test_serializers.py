from __future__ import annotations

import pickle

import pytest

from streamspark.models.serializers import (
    BytesDeserializer,
    BytesSerializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
    SerializationError,
    SerializerIsNotProvidedError,
    StringDeserializer,
    StringSerializer,
    resolve_deserializer,
    resolve_serializer,
)


@pytest.mark.parametrize(
    "ser, de, value",
    [
        (JSONSerializer(), JSONDeserializer(), {"a": [1, 2.5, None, "x"]}),
        (StringSerializer(), StringDeserializer(), "héllo"),
        (StringSerializer("utf_16"), StringDeserializer("utf_16"), "héllo"),
        (IntegerSerializer(), IntegerDeserializer(), -(2**40)),
        (DoubleSerializer(), DoubleDeserializer(), 3.25),
        (BytesSerializer(), BytesDeserializer(), b"\x00\x01"),
    ],
)
def test_round_trip(ser, de, value):
    assert de(ser(value, None), None) == value


@pytest.mark.parametrize(
    "ser, bad",
    [(StringSerializer(), 1), (IntegerSerializer(), "1"), (IntegerSerializer(), True), (DoubleSerializer(), "x"), (BytesSerializer(), "s"), (JSONSerializer(), {1, 2})],
)
def test_wrong_types_raise_serialization_error(ser, bad):
    with pytest.raises(SerializationError):
        ser(bad, None)


def test_integer_deserializer_reads_4_byte_ints():
    assert IntegerDeserializer()((-5).to_bytes(4, "big", signed=True), None) == -5


def test_json_schema_validation_both_ways_and_pickles():
    schema = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}
    ser, de = JSONSerializer(schema=schema), JSONDeserializer(schema=schema)
    assert ser({"t": 1}, None) == b'{"t":1}'
    with pytest.raises(SerializationError, match="'t' is a required property"):
        ser({}, None)
    with pytest.raises(SerializationError):
        de(b'{"t": "x"}', None)
    de2 = pickle.loads(pickle.dumps(de))
    with pytest.raises(SerializationError):
        de2(b"{}", None)


def test_resolve_by_name_and_instance():
    assert isinstance(resolve_serializer("str"), StringSerializer)
    assert isinstance(resolve_deserializer("double"), DoubleDeserializer)
    inst = JSONSerializer()
    assert resolve_serializer(inst) is inst
    with pytest.raises(SerializerIsNotProvidedError, match="Unknown serializer 'avro'"):
        resolve_serializer("avro")
    with pytest.raises(SerializerIsNotProvidedError):
        resolve_deserializer("nope")
