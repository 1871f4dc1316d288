"""ProtobufSerializer / ProtobufDeserializer with a real protobuf message class (built from a
FileDescriptorProto in ``protos.py``); the Confluent wire format through confluent-kafka's own
in-memory Schema Registry (``mock://``), pinned by literal bytes from the published format
(magic byte 0, 4-byte big-endian schema id, message indexes, Protobuf encoding)."""

from __future__ import annotations

import inspect
import pickle
import uuid

import pytest
from google.protobuf import struct_pb2
from google.protobuf.struct_pb2 import Value

from streamspark.models import Topic
from streamspark.models.serializers import SerializationContext, SerializationError
from streamspark.models.serializers.protobuf import ProtobufDeserializer, ProtobufSerializer
from streamspark.models.serializers.confluent_registry import registry_client
from streamspark.models.serializers.schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

from .protos import Reading

CTX = SerializationContext("readings")
#: Reading{sensor_id: "a", value: 1.5, kind: KIND_TEMPERATURE}: field 1 (len 1, "a"), field 2 (fixed64), field 3 (varint 1)
PAYLOAD = b"\x0a\x01a" + b"\x11" + b"\x00\x00\x00\x00\x00\x00\xf8\x3f" + b"\x18\x01"
RECORD = {"sensorId": "a", "value": 1.5, "kind": "KIND_TEMPERATURE"}


def mock_registry() -> SchemaRegistryClientConfig:
    """A fresh in-memory registry (confluent-kafka's mock client)."""
    return SchemaRegistryClientConfig(url=f"mock://{uuid.uuid4().hex}")


def test_defaults_are_the_references():
    de = inspect.signature(ProtobufDeserializer).parameters
    assert list(de) == [
        "msg_type",
        "use_integers_for_enums",
        "preserving_proto_field_name",
        "to_dict",
        "schema_registry_client_config",
        "schema_registry_serialization_config",
    ]
    assert de["to_dict"].default is True and de["use_integers_for_enums"].default is False
    ser = inspect.signature(ProtobufSerializer).parameters
    assert ser["deterministic"].default is False and ser["ignore_unknown_fields"].default is False


def test_plain_bytes_are_the_message_encoding():
    assert ProtobufSerializer(Reading)(RECORD, None) == PAYLOAD
    assert ProtobufSerializer(Reading)(Reading(sensor_id="a", value=1.5, kind=1), None) == PAYLOAD
    assert ProtobufDeserializer(Reading)(PAYLOAD, None) == RECORD


def test_to_dict_options():
    assert ProtobufDeserializer(Reading, use_integers_for_enums=True, preserving_proto_field_name=True)(PAYLOAD, None) == {
        "sensor_id": "a",
        "value": 1.5,
        "kind": 1,
    }
    message = ProtobufDeserializer(Reading, to_dict=False)(PAYLOAD, None)
    assert isinstance(message, Reading) and message.sensor_id == "a"


def test_fields_left_at_their_defaults_are_in_the_dict():
    # as the reference: scalars without presence tracking appear with their default values
    assert ProtobufDeserializer(Reading)(b"", None) == {"sensorId": "", "value": 0.0, "kind": "KIND_UNKNOWN"}
    assert ProtobufDeserializer(Reading, use_integers_for_enums=True, preserving_proto_field_name=True)(b"\x0a\x01a", None) == {
        "sensor_id": "a",
        "value": 0.0,
        "kind": 0,
    }


@pytest.mark.parametrize("value", [5, None])
def test_a_value_neither_dict_nor_message_is_refused_with_its_type(value):
    with pytest.raises(SerializationError, match=rf"must be of type `.*Reading'>` or dict, not `{type(value)}`"):
        ProtobufSerializer(Reading)(value, None)


def test_a_value_protobufs_json_parser_refuses_is_a_serialization_error():
    with pytest.raises(SerializationError, match='no field named "a"'):
        ProtobufSerializer(Reading)("a", None)


def test_well_known_types_take_their_json_forms():
    """As protobuf's ``ParseDict`` reads them: a Timestamp from an RFC 3339 string, a Value from
    a number, a wrapper from its value."""
    from google.protobuf.timestamp_pb2 import Timestamp
    from google.protobuf.wrappers_pb2 import Int64Value

    stamp = Timestamp()
    stamp.FromJsonString("2024-01-02T03:04:05Z")
    assert ProtobufSerializer(Timestamp)("2024-01-02T03:04:05Z", None) == stamp.SerializeToString()
    assert ProtobufDeserializer(Value)(ProtobufSerializer(Value)(1.5, None), None) == 1.5
    assert ProtobufDeserializer(Int64Value)(ProtobufSerializer(Int64Value)(5, None), None) == "5"


def test_well_known_type_and_pickle():
    ser, de = pickle.loads(pickle.dumps(ProtobufSerializer(Value))), pickle.loads(pickle.dumps(ProtobufDeserializer(Reading)))
    assert ProtobufDeserializer(Value)(ser({"stringValue": "x"}, None), None) == {"stringValue": "x"}
    assert de(PAYLOAD, None) == RECORD


def test_unknown_fields():
    with pytest.raises(SerializationError, match="no field named"):
        ProtobufSerializer(Reading)({"nope": 1}, None)
    assert ProtobufSerializer(Reading, ignore_unknown_fields=True)({"nope": 1, "value": 1.5}, None) == PAYLOAD[3:12]


def test_bad_bytes_are_serialization_errors():
    with pytest.raises(SerializationError, match="not a valid Reading"):
        ProtobufDeserializer(Reading)(b"\xff\xff", None)


def test_a_value_refused_on_produce_names_the_output_topic():
    topic = Topic("hot-readings", value_serializer=ProtobufSerializer(Reading))
    with pytest.raises(SerializationError, match=r'Value does not fit Reading \(topic "hot-readings", value\): .*n/a'):
        topic.serialize(value={"sensorId": "a", "value": "n/a"})
    with pytest.raises(SerializationError, match=r'not a valid Reading \(topic "readings", value\)'):
        ProtobufDeserializer(Reading)(b"\xff\xff", CTX)


def test_registry_wire_format():
    config = mock_registry()
    data = ProtobufSerializer(Reading, schema_registry_client_config=config)(RECORD, CTX)
    assert registry_client(config).get_latest_version("readings-value").schema_id == 1
    # magic byte, schema id 1 big-endian, message index list [0] written as the single byte 0
    assert data == b"\x00\x00\x00\x00\x01\x00" + PAYLOAD
    assert ProtobufDeserializer(Reading, schema_registry_client_config=config)(data, CTX) == RECORD


def test_registry_serialization_config_is_passed_on():
    config = mock_registry()
    settings = SchemaRegistrySerializationConfig(auto_register_schemas=False)
    ser = ProtobufSerializer(Reading, schema_registry_client_config=config, schema_registry_serialization_config=settings)
    with pytest.raises(SerializationError, match="Schema Registry"):
        ser(RECORD, CTX)  # not registered, and not allowed to register it
    # the deprecated (non zig-zag) message indexes: confluent-kafka 2.x no longer has them, and
    # (as in Quix Streams) making either side with them says so
    settings = SchemaRegistrySerializationConfig(use_deprecated_format=True)
    for side in (ProtobufSerializer, ProtobufDeserializer):
        with pytest.raises(ValueError, match="use.deprecated.format is no longer supported"):
            side(Reading, schema_registry_client_config=config, schema_registry_serialization_config=settings)


def test_registry_bad_bytes_are_serialization_errors():
    config = mock_registry()
    ProtobufSerializer(Reading, schema_registry_client_config=config)(RECORD, CTX)
    with pytest.raises(SerializationError, match="Invalid magic byte"):
        ProtobufDeserializer(Reading, schema_registry_client_config=config)(b"\x07\x00\x00\x00\x01\x00" + PAYLOAD, CTX)


def test_registry_reading_takes_the_message_class_as_the_schema():
    """As in Quix Streams, the deserializer parses with ``msg_type`` and never asks the registry:
    a schema id the registry does not know still reads, and so do well-known types."""
    empty = mock_registry()  # nothing registered
    unknown_id = b"\x00\x00\x00\x00\x63\x00" + PAYLOAD  # schema id 99
    assert ProtobufDeserializer(Reading, schema_registry_client_config=empty)(unknown_id, CTX) == RECORD
    config = mock_registry()
    value = struct_pb2.Struct()
    value.update({"a": 1, "b": "x"})
    data = ProtobufSerializer(struct_pb2.Struct, schema_registry_client_config=config)(value, CTX)
    assert ProtobufDeserializer(struct_pb2.Struct, schema_registry_client_config=config)(data, CTX) == {"a": 1.0, "b": "x"}
