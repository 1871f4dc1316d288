"""SchemaRegistryClientConfig / SchemaRegistrySerializationConfig, and JSON Schema through the
registry for JSONSerializer / JSONDeserializer. The registry is confluent-kafka's own in-memory
one (``mock://`` URLs): a real client at the boundary, a stand-in registry behind it."""

from __future__ import annotations

import json
import pickle
import uuid

import pytest
from confluent_kafka.schema_registry import Schema, reference_subject_name_strategy, topic_subject_name_strategy

from streamspark.models import Topic
from streamspark.models.rows import RawMessage
from streamspark.models.serializers import JSONDeserializer, JSONSerializer, SerializationContext, SerializationError
from streamspark.models.serializers.confluent_registry import import_optional, registry_client
from streamspark.models.serializers.schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
CTX = SerializationContext("events")


def mock_registry() -> SchemaRegistryClientConfig:
    """A fresh in-memory registry (confluent-kafka's mock client)."""
    return SchemaRegistryClientConfig(url=f"mock://{uuid.uuid4().hex}")


def test_client_config_fields_become_the_clients_dotted_keys():
    config = SchemaRegistryClientConfig(
        url="https://sr:8081",
        ssl_ca_location="ca.pem",
        ssl_key_location="k.pem",
        ssl_certificate_location="c.pem",
        basic_auth_user_info="user:secret",
    )
    assert config.as_dict(plaintext_secrets=True) == {
        "url": "https://sr:8081",
        "ssl.ca.location": "ca.pem",
        "ssl.key.location": "k.pem",
        "ssl.certificate.location": "c.pem",
        "basic.auth.user.info": "user:secret",
    }
    assert "secret" not in repr(config) and "secret" not in str(config)  # masked unless asked for
    assert config.as_dict(include={"url"}) == {"url": "https://sr:8081"}


def test_client_config_needs_a_url(monkeypatch):
    monkeypatch.delenv("URL", raising=False)
    with pytest.raises(ValueError):
        SchemaRegistryClientConfig()
    monkeypatch.setenv("URL", "http://from-env:8081")  # pydantic settings: the environment fills it
    assert SchemaRegistryClientConfig().url == "http://from-env:8081"


def test_serialization_config_defaults_are_the_references():
    config = SchemaRegistrySerializationConfig()
    assert (config.auto_register_schemas, config.normalize_schemas, config.use_latest_version) == (True, False, False)
    assert (config.skip_known_types, config.use_deprecated_format) == (False, False)
    assert config.subject_name_strategy is topic_subject_name_strategy
    assert config.reference_subject_name_strategy is reference_subject_name_strategy
    assert config.as_dict(include={"auto_register_schemas", "subject_name_strategy"}) == {
        "auto.register.schemas": True,
        "subject.name.strategy": topic_subject_name_strategy,
    }


def test_missing_library_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install streamspark\[avro\]"):
        import_optional("streamspark_no_such_module", "avro")


def test_json_wire_format_and_round_trip():
    config = mock_registry()
    data = JSONSerializer(schema=SCHEMA, schema_registry_client_config=config)({"a": 1}, CTX)
    assert data == b'\x00\x00\x00\x00\x01{"a":1}'
    registered = registry_client(config).get_latest_version("events-value")
    assert (registered.schema_id, json.loads(registered.schema.schema_str)) == (1, SCHEMA)
    de = pickle.loads(pickle.dumps(JSONDeserializer(schema_registry_client_config=config)))
    assert de(data, CTX) == {"a": 1}


def test_json_reads_bytes_written_by_another_client():
    config = mock_registry()
    registry_client(config).register_schema("events-value", Schema(json.dumps(SCHEMA), "JSON"))
    de = JSONDeserializer(schema_registry_client_config=config)
    assert de(b'\x00\x00\x00\x00\x01{"a": 2}', CTX) == {"a": 2}
    with pytest.raises(SerializationError, match="not of type"):  # validated against the writer's schema
        de(b'\x00\x00\x00\x00\x01{"a": "x"}', CTX)


@pytest.mark.parametrize(
    "data, match",
    [
        (b'{"a": 1}', "Invalid magic byte"),
        (b'\x00\x00\x00\x00\x09{"a": 1}', "Schema Not Found"),
        (b"\x00", "Schema Registry failed"),
    ],
)
def test_json_bad_bytes_are_serialization_errors(data, match):
    config = mock_registry()
    JSONSerializer(schema=SCHEMA, schema_registry_client_config=config)({"a": 1}, CTX)
    with pytest.raises(SerializationError, match=match):
        JSONDeserializer(schema_registry_client_config=config)(data, CTX)


def test_json_record_not_matching_is_a_serialization_error():
    ser = JSONSerializer(schema=SCHEMA, schema_registry_client_config=mock_registry())
    with pytest.raises(SerializationError, match=r'validation failed \(topic "events", value\): .*not of type'):
        ser({"a": "x"}, CTX)


def test_json_incompatible_schema_on_produce():
    config = mock_registry()
    registry_client(config).register_schema("events-value", Schema(json.dumps(SCHEMA), "JSON"))
    other = {"type": "object", "properties": {"b": {"type": "string"}}}
    settings = SchemaRegistrySerializationConfig(auto_register_schemas=False)
    ser = JSONSerializer(schema=other, schema_registry_client_config=config, schema_registry_serialization_config=settings)
    with pytest.raises(SerializationError, match=r'Schema Registry failed \(topic "events", value\)'):
        ser({"b": "x"}, CTX)


def test_json_registry_arguments_are_checked():
    with pytest.raises(ValueError, match="needs a schema"):
        JSONSerializer(schema_registry_client_config=mock_registry())
    with pytest.raises(ValueError, match="schema_registry_client_config"):
        JSONSerializer(schema=SCHEMA, schema_registry_serialization_config=SchemaRegistrySerializationConfig())


def test_topic_hands_the_registry_serializers_their_topic():
    config = mock_registry()
    topic = Topic(
        "events",
        value_serializer=JSONSerializer(schema=SCHEMA, schema_registry_client_config=config),
        value_deserializer=JSONDeserializer(schema_registry_client_config=config),
    )
    produced = topic.serialize(value={"a": 3})
    assert produced.value == b'\x00\x00\x00\x00\x01{"a":3}'
    assert registry_client(config).get_subjects() == ["events-value"]
    row = topic.row_deserialize(RawMessage("events", 0, 5, None, produced.value, None, 10, 1))
    assert row.value == {"a": 3}
