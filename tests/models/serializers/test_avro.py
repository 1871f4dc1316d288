"""AvroSerializer / AvroDeserializer: fastavro for plain Avro; the Confluent wire format through
confluent-kafka's own in-memory Schema Registry (``mock://`` URLs: a real client, a stand-in
registry), checked against literal bytes written from the published format description
(magic byte 0, 4-byte big-endian schema id, Avro binary encoding)."""

from __future__ import annotations

import inspect
import io
import json
import pickle
import uuid

import fastavro
import pytest
from confluent_kafka.schema_registry import Schema

from streamspark.models import Topic
from streamspark.models.serializers import SerializationContext, SerializationError
from streamspark.models.serializers.avro import AvroDeserializer, AvroSerializer
from streamspark.models.serializers.confluent_registry import registry_client
from streamspark.models.serializers.schema_registry import SchemaRegistryClientConfig

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string", "default": "x"}],
}
CTX = SerializationContext("readings")


def mock_registry() -> SchemaRegistryClientConfig:
    """A fresh in-memory registry (confluent-kafka's mock client), shared by every serializer
    given this config in the process."""
    return SchemaRegistryClientConfig(url=f"mock://{uuid.uuid4().hex}")


def test_defaults_are_the_references():
    ser = inspect.signature(AvroSerializer)
    assert list(ser.parameters) == [
        "schema",
        "strict",
        "strict_allow_default",
        "disable_tuple_notation",
        "schema_registry_client_config",
        "schema_registry_serialization_config",
    ]
    de = inspect.signature(AvroDeserializer).parameters
    assert de["handle_unicode_errors"].default == "strict"
    assert de["schema"].default is None and de["return_named_type"].default is False


def test_plain_avro_bytes_are_fastavros_schemaless_encoding():
    # zigzag(5) = 0x0a, then the string: zigzag length 2 = 0x04, b"hi"
    assert AvroSerializer(SCHEMA)({"a": 5, "b": "hi"}, None) == b"\x0a\x04hi"
    assert AvroDeserializer(SCHEMA)(b"\x0a\x04hi", None) == {"a": 5, "b": "hi"}


def test_round_trip_and_pickle():
    ser, de = AvroSerializer(SCHEMA), AvroDeserializer(SCHEMA)
    ser2, de2 = pickle.loads(pickle.dumps(ser)), pickle.loads(pickle.dumps(de))
    records = [{"a": -1, "b": ""}, {"a": 2**31 - 1, "b": "é"}]
    assert [de2(ser2(r, None), None) for r in records] == records


def test_strict_modes():
    assert AvroSerializer(SCHEMA)({"a": 1}, None) == b"\x02\x02x"  # missing field: its default
    with pytest.raises(SerializationError, match="b"):
        AvroSerializer(SCHEMA, strict=True)({"a": 1}, None)
    assert AvroSerializer(SCHEMA, strict_allow_default=True)({"a": 1}, None) == b"\x02\x02x"
    with pytest.raises(SerializationError):
        AvroSerializer(SCHEMA, strict=True)({"a": 1, "b": "y", "extra": 0}, None)


def test_reader_schema_migrates_old_records():
    reader = {**SCHEMA, "fields": SCHEMA["fields"] + [{"name": "c", "type": "long", "default": 7}]}
    assert AvroDeserializer(SCHEMA, reader_schema=reader)(b"\x0a\x04hi", None) == {"a": 5, "b": "hi", "c": 7}


def test_return_record_name_for_unions():
    union = [
        {"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}]},
        {"type": "record", "name": "B", "fields": [{"name": "y", "type": "int"}]},
    ]
    data = AvroSerializer(union)(("B", {"y": 1}), None)
    assert data == b"\x02\x02"  # branch 1, then y
    assert AvroDeserializer(union)(data, None) == {"y": 1}
    assert AvroDeserializer(union, return_record_name=True)(data, None) == ("B", {"y": 1})


def test_bad_records_and_bytes_are_serialization_errors():
    with pytest.raises(SerializationError, match="does not match the Avro schema"):
        AvroSerializer(SCHEMA)({"a": "not an int"}, None)
    with pytest.raises(SerializationError, match="not valid Avro"):
        AvroDeserializer(SCHEMA)(b"\x0a", None)  # the string is missing


def test_a_record_refused_on_produce_names_the_output_topic():
    topic = Topic("hot-readings", value_serializer=AvroSerializer(SCHEMA))
    with pytest.raises(SerializationError, match=r'does not match the Avro schema \(topic "hot-readings", value\)'):
        topic.serialize(value={"a": "not an int"})


@pytest.mark.parametrize("schema", [None, {}, ""])
def test_deserializer_needs_a_schema_or_a_registry(schema):
    with pytest.raises(ValueError, match="Either `schema` or `schema_registry_client_config` must be provided"):
        AvroDeserializer(schema)


def test_registry_wire_format_is_magic_byte_and_big_endian_id():
    config = mock_registry()
    data = AvroSerializer(SCHEMA, schema_registry_client_config=config)({"a": 5, "b": "hi"}, CTX)
    registered = registry_client(config).get_latest_version("readings-value")
    assert data == b"\x00" + registered.schema_id.to_bytes(4, "big") + b"\x0a\x04hi"
    assert data == b"\x00\x00\x00\x00\x01\x0a\x04hi"  # the first schema of a fresh registry: id 1
    assert AvroDeserializer(schema_registry_client_config=config)(data, CTX) == {"a": 5, "b": "hi"}


def test_registry_reads_bytes_written_by_another_client():
    config = mock_registry()
    client = registry_client(config)
    schema_id = client.register_schema("other-value", Schema(json.dumps(SCHEMA), "AVRO"))
    assert schema_id == 1
    # as any Confluent-compatible producer writes it
    assert AvroDeserializer(schema_registry_client_config=config)(b"\x00\x00\x00\x00\x01\x0a\x04hi", CTX) == {"a": 5, "b": "hi"}


def test_with_a_registry_the_schema_given_is_the_one_read_into():
    """As the reference: the writer's schema comes from the registry, ``schema`` is the
    reader's (a field it adds takes its default; one it drops is left out)."""
    config = mock_registry()
    data = AvroSerializer(SCHEMA, schema_registry_client_config=config)({"a": 5, "b": "hi"}, CTX)
    newer = {
        "type": "record",
        "name": "Reading",
        "fields": [{"name": "a", "type": "long"}, {"name": "c", "type": "string", "default": "d"}],
    }
    assert AvroDeserializer(newer, schema_registry_client_config=config)(data, CTX) == {"a": 5, "c": "d"}
    assert AvroDeserializer(reader_schema=newer, schema_registry_client_config=config)(data, CTX) == {"a": 5, "c": "d"}


def test_registry_serializer_pickles_without_its_client():
    config = mock_registry()
    ser = pickle.loads(pickle.dumps(AvroSerializer(SCHEMA, schema_registry_client_config=config)))
    data = ser({"a": 1, "b": "c"}, CTX)
    assert fastavro.schemaless_reader(io.BytesIO(data[5:]), fastavro.parse_schema(SCHEMA)) == {"a": 1, "b": "c"}


@pytest.mark.parametrize(
    "data, match",
    [
        (b"\x07\x00\x00\x00\x01\x0a\x04hi", "Invalid magic byte"),  # wrong magic byte
        (b"\x00\x00\x00\x00\x63\x0a\x04hi", "Schema Not Found"),  # id 99: unknown to the registry
        (b"\x00\x00", "Expecting data framing"),  # too short for the header
    ],
)
def test_registry_bad_bytes_are_serialization_errors(data, match):
    config = mock_registry()
    AvroSerializer(SCHEMA, schema_registry_client_config=config)({"a": 1}, CTX)  # registers id 1
    with pytest.raises(SerializationError, match=match):
        AvroDeserializer(schema_registry_client_config=config)(data, CTX)


def test_registry_record_not_matching_is_a_serialization_error():
    with pytest.raises(SerializationError, match="Schema Registry"):
        AvroSerializer(SCHEMA, schema_registry_client_config=mock_registry())({"a": "x"}, CTX)


def test_registry_strict_is_passed_on():
    ser = AvroSerializer(SCHEMA, strict=True, schema_registry_client_config=mock_registry())
    with pytest.raises(SerializationError):
        ser({"a": 1}, CTX)


def test_registry_needs_the_topic():
    with pytest.raises(SerializationError, match="SerializationContext"):
        AvroSerializer(SCHEMA, schema_registry_client_config=mock_registry())({"a": 1}, None)


def test_serialization_config_needs_a_client_config():
    from streamspark.models.serializers.schema_registry import SchemaRegistrySerializationConfig

    with pytest.raises(ValueError, match="schema_registry_client_config"):
        AvroSerializer(SCHEMA, schema_registry_serialization_config=SchemaRegistrySerializationConfig())
