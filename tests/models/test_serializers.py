"""The serializers against literal wire bytes (Kafka's simple serdes and Quix Streams' JSON)."""

from __future__ import annotations

import datetime
import inspect
import pickle

import pytest
from confluent_kafka.serialization import SerializationError as ConfluentSerializationError
from jsonschema import Draft202012Validator, SchemaError

from streamspark.models.serializers import (
    BytesDeserializer,
    BytesSerializer,
    Deserializer,
    DeserializerIsNotProvidedError,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    JSONDeserializer,
    JSONSerializer,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    SerializerIsNotProvidedError,
    StringDeserializer,
    StringSerializer,
    resolve_deserializer,
    resolve_serializer,
)

CTX = SerializationContext("t", MessageField.VALUE)

#: (serializer, deserializer, python value, exact bytes on the wire)
WIRE = [
    (IntegerSerializer(), IntegerDeserializer(), 1, b"\x00\x00\x00\x01"),
    (IntegerSerializer(), IntegerDeserializer(), -2, b"\xff\xff\xff\xfe"),
    (IntegerSerializer(), IntegerDeserializer(), 2**31 - 1, b"\x7f\xff\xff\xff"),
    (IntegerSerializer(), IntegerDeserializer(), -(2**31), b"\x80\x00\x00\x00"),
    (DoubleSerializer(), DoubleDeserializer(), 1.5, b"\x3f\xf8\x00\x00\x00\x00\x00\x00"),
    (DoubleSerializer(), DoubleDeserializer(), -2.0, b"\xc0\x00\x00\x00\x00\x00\x00\x00"),
    (DoubleSerializer(), DoubleDeserializer(), 0.1, b"\x3f\xb9\x99\x99\x99\x99\x99\x9a"),
    (StringSerializer(), StringDeserializer(), "hé", b"h\xc3\xa9"),
    (StringSerializer("utf_16_be"), StringDeserializer("utf_16_be"), "hé", b"\x00h\x00\xe9"),
    (StringSerializer("latin_1"), StringDeserializer("latin_1"), "hé", b"h\xe9"),
    (BytesSerializer(), BytesDeserializer(), b"\x00\x01", b"\x00\x01"),
    (JSONSerializer(), JSONDeserializer(), {"a": 1, "b": [2.5, None, True, "é"]}, b'{"a":1,"b":[2.5,null,true,"\xc3\xa9"]}'),
    (JSONSerializer(), JSONDeserializer(), 'x"y', b'"x\\"y"'),
    (JSONSerializer(), JSONDeserializer(), None, b"null"),
]


@pytest.mark.parametrize("ser, de, value, wire", WIRE)
def test_exact_wire_bytes_both_ways(ser, de, value, wire):
    assert ser(value, CTX) == wire
    assert de(wire, CTX) == value


def test_int_and_double_take_what_kafkas_serdes_take():
    assert IntegerSerializer()(True, CTX) == b"\x00\x00\x00\x01"  # bool is an int
    assert DoubleSerializer()(1, CTX) == b"\x3f\xf0\x00\x00\x00\x00\x00\x00"  # ints are written as doubles


@pytest.mark.parametrize("ser", [StringSerializer(), IntegerSerializer(), DoubleSerializer(), BytesSerializer()])
def test_none_stays_a_kafka_null(ser):
    assert ser(None, CTX) is None


@pytest.mark.parametrize("de", [StringDeserializer(), IntegerDeserializer(), DoubleDeserializer(), BytesDeserializer()])
def test_none_deserializes_to_none(de):
    assert de(None, CTX) is None


def test_bytes_serializer_and_deserializer_pass_any_value_through():
    for value in ("zone-1", 5, bytearray(b"x")):
        assert BytesSerializer()(value, CTX) is value
        assert BytesDeserializer()(value, CTX) is value


def test_string_deserializer_takes_bytes_like_values():
    assert StringDeserializer()(bytearray(b"ok"), CTX) == "ok"
    assert StringDeserializer()(memoryview(b"ok"), CTX) == "ok"


@pytest.mark.parametrize(
    "ser, bad, match",
    [
        (IntegerSerializer(), 2**31, "4-byte int"),
        (IntegerSerializer(), -(2**31) - 1, "4-byte int"),
        (IntegerSerializer(), 1.5, "IntegerSerializer"),
        (IntegerSerializer(), "1", "IntegerSerializer"),
        (DoubleSerializer(), "x", "DoubleSerializer"),
        (DoubleSerializer(), 10**400, "DoubleSerializer"),
        (StringSerializer(), 1, "expects str, got int"),
        (StringSerializer(), b"x", "expects str, got bytes"),
        (StringSerializer(), "\ud800", "can.t encode"),
        (StringSerializer("ascii"), "é", "can.t encode"),
        (JSONSerializer(), {1, 2}, "not JSON-serializable"),
        (JSONSerializer(), {1: "non-str key"}, "Dict key must be str"),
        (JSONSerializer(), datetime.datetime(2024, 1, 1), "not JSON-serializable"),
        (JSONSerializer(), 2**64, "not JSON-serializable"),
    ],
)
def test_unserializable_values_raise_serialization_error(ser, bad, match):
    with pytest.raises(SerializationError, match=match):
        ser(bad, CTX)


@pytest.mark.parametrize(
    "de, bad, match",
    [
        (IntegerDeserializer(), b"\x00\x00\x00\x00\x00\x00\x00\x01", "expects 4 bytes, got 8"),
        (IntegerDeserializer(), b"\x01", "expects 4 bytes, got 1"),
        (IntegerDeserializer(), b"", "expects 4 bytes, got 0"),
        (IntegerDeserializer(), "abcd", "expects 4 bytes, got str"),
        (DoubleDeserializer(), b"\x00\x00\x00\x01", "expects 8 bytes, got 4"),
        (StringDeserializer(), b"\xff\xfe\xfa", "can.t decode"),
        (StringDeserializer(), "already text", "expects bytes, got str"),
        (JSONDeserializer(), b'{"a": ', "not valid JSON"),
        (JSONDeserializer(), b"", "not valid JSON"),
        (JSONDeserializer(), b"\xff", "not valid JSON"),
        (JSONDeserializer(), 5, "not valid JSON"),
    ],
)
def test_deserializer_failures_are_serialization_errors(de, bad, match):
    with pytest.raises(SerializationError, match=match):
        de(bad, CTX)


@pytest.mark.parametrize("de", [IntegerDeserializer(), DoubleDeserializer()])
def test_numeric_deserializers_given_text_raise_a_type_error_as_the_reference_does(de):
    with pytest.raises(TypeError, match="a bytes-like object is required, not 'str'") as caught:
        de("abcd", CTX)
    assert isinstance(caught.value, SerializationError)


def test_serialization_error_is_also_confluent_kafkas():
    with pytest.raises(ConfluentSerializationError):
        IntegerSerializer()("x", CTX)


def test_unknown_codec_is_refused_when_built():
    with pytest.raises(LookupError):
        StringSerializer("no-such-codec")
    with pytest.raises(LookupError):
        StringDeserializer("no-such-codec")


SCHEMA = {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}


def test_json_schema_validation_both_ways_and_pickles():
    ser, de = JSONSerializer(schema=SCHEMA), JSONDeserializer(schema=SCHEMA)
    assert ser({"t": 1}, CTX) == b'{"t":1}'
    with pytest.raises(SerializationError, match="'t' is a required property"):
        ser({}, CTX)
    with pytest.raises(SerializationError, match="is not of type 'number'"):
        de(b'{"t": "x"}', CTX)
    de2 = pickle.loads(pickle.dumps(de))
    with pytest.raises(SerializationError, match="'t' is a required property"):
        de2(b"{}", CTX)


def test_a_schema_violation_carries_jsonschemas_whole_report():
    # as the reference: the failing keyword, the schema part and the instance are in the message
    with pytest.raises(SerializationError) as info:
        JSONDeserializer(schema=SCHEMA)(b'{"t": "x"}', CTX)
    assert "Failed validating 'type' in schema['properties']['t']" in str(info.value)
    assert "On instance['t']" in str(info.value)


@pytest.mark.parametrize("cls", [JSONSerializer, JSONDeserializer])
def test_an_invalid_schema_is_refused_when_built(cls):
    with pytest.raises(SchemaError):
        cls(schema={"type": "no-such-type"})
    with pytest.raises(SchemaError):
        cls(validator=Draft202012Validator({"type": 5}))


@pytest.mark.parametrize("cls", [JSONSerializer, JSONDeserializer])
def test_a_validator_takes_precedence_over_the_schema_and_survives_pickling(cls):
    from pyspark import cloudpickle  # how a pipeline plan is shipped to Spark's workers

    only_strings = Draft202012Validator({"type": "string"})
    obj = cls(schema=SCHEMA, validator=only_strings)
    copy = cloudpickle.loads(cloudpickle.dumps(obj))
    for inst in (obj, copy):
        if cls is JSONSerializer:
            assert inst("s", CTX) == b'"s"'
            with pytest.raises(SerializationError):
                inst({"t": 1}, CTX)
        else:
            assert inst(b'"s"', CTX) == "s"
            with pytest.raises(SerializationError):
                inst(b'{"t": 1}', CTX)


def test_json_signatures_take_the_references_parameters():
    ser = inspect.signature(JSONSerializer).parameters
    de = inspect.signature(JSONDeserializer).parameters
    assert list(ser) == ["dumps", "schema", "validator", "schema_registry_client_config", "schema_registry_serialization_config"]
    assert list(de) == ["loads", "schema", "validator", "schema_registry_client_config"]
    assert all(ser[name].default is None for name in list(ser)[1:])
    assert all(de[name].default is None for name in list(de)[1:])


def test_schema_registry_serialization_config_needs_the_client_config():
    from streamspark.models.serializers.schema_registry import SchemaRegistrySerializationConfig

    with pytest.raises(ValueError, match="needs schema_registry_client_config"):
        JSONSerializer(schema=SCHEMA, schema_registry_serialization_config=SchemaRegistrySerializationConfig())


def test_resolve_by_name_and_instance():
    assert isinstance(resolve_serializer("str"), StringSerializer)
    assert isinstance(resolve_serializer("integer"), IntegerSerializer)
    assert isinstance(resolve_deserializer("double"), DoubleDeserializer)
    inst = JSONSerializer()
    assert resolve_serializer(inst) is inst
    with pytest.raises(SerializerIsNotProvidedError, match='Unknown serializer option "avro"; valid options are'):
        resolve_serializer("avro")
    with pytest.raises(DeserializerIsNotProvidedError, match='Unknown deserializer option "nope"; valid options are'):
        resolve_deserializer("nope")
    with pytest.raises(ValueError):  # both are ValueErrors, as the reference's unknown-name error
        resolve_serializer("avro")
    with pytest.raises(ValueError):
        resolve_deserializer("nope")


@pytest.mark.parametrize("given", [5, JSONSerializer, JSONDeserializer])
def test_neither_a_name_nor_an_instance_is_refused_with_the_reference_message(given):
    with pytest.raises(
        SerializerIsNotProvidedError, match=r'^Serializer must be either one of \[.*\] or a subclass of Serializer; got "'
    ):
        resolve_serializer(given)
    with pytest.raises(
        DeserializerIsNotProvidedError, match=r'^Deserializer must be either one of \[.*\] or a subclass of Deserializer; got "'
    ):
        resolve_deserializer(given)


def test_exceptions_live_at_the_references_module_path():
    from streamspark.models.serializers import exceptions

    for name in (
        "SerializationError",
        "KeySerializationError",
        "KeyDeserializationError",
        "ValueSerializationError",
        "ValueDeserializationError",
        "SerializerIsNotProvidedError",
        "DeserializerIsNotProvidedError",
        "IgnoreMessage",
    ):
        assert issubclass(getattr(exceptions, name), Exception)
    assert issubclass(exceptions.SerializerIsNotProvidedError, ValueError)


def test_custom_serializers_subclass_the_bases():
    class Upper(Serializer):
        def __call__(self, value, ctx):
            return value.upper().encode()

    class Lower(Deserializer):
        def __call__(self, value, ctx):
            return value.decode().lower()

    assert Upper().extra_headers == {}
    assert Lower().split_values is False
    assert Lower()(Upper()("Ab", CTX), CTX) == "ab"


def test_codec_errors_are_also_the_unicode_errors_the_codec_raised():
    # code written against the reference catches the codec's own error type
    with pytest.raises(UnicodeDecodeError, match="'utf-8' codec can't decode byte 0xff in position 0"):
        StringDeserializer()(b"\xff", None)
    with pytest.raises(UnicodeEncodeError, match="'ascii' codec can't encode character"):
        StringSerializer("ascii")("é", None)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: StringSerializer()(5, None), "'int' object has no attribute 'encode'"),
        (lambda: IntegerDeserializer()(b"\x00\x05", None), "unpack requires a buffer of 4 bytes"),
        (lambda: DoubleDeserializer()(b"?\xf8", None), "unpack requires a buffer of 8 bytes"),
    ],
)
def test_failures_start_with_the_reference_message(call, message):
    with pytest.raises(SerializationError) as caught:
        call()
    assert str(caught.value).startswith(message)


def test_the_schema_registry_settings_import_from_the_references_paths():
    from streamspark.models import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig
    from streamspark.models.serializers import SchemaRegistryClientConfig as from_serializers
    from streamspark.models.serializers.schema_registry import SchemaRegistryClientConfig as defined

    assert SchemaRegistryClientConfig is from_serializers is defined
    assert SchemaRegistrySerializationConfig().auto_register_schemas is True
    with pytest.raises(AttributeError, match="streamspark.models' has no attribute 'Nope'"):
        import streamspark.models as models

        models.Nope  # noqa: B018


def test_the_context_is_confluent_kafkas_and_its_field_an_enum():
    from confluent_kafka import serialization as confluent

    from streamspark.models.serializers import MessageField, SerializationContext

    ctx = SerializationContext("t", MessageField.KEY, [("h", b"1")])
    assert isinstance(ctx, confluent.SerializationContext)
    assert MessageField is confluent.MessageField and MessageField("key") is MessageField.KEY
    assert ctx.field == "key" and f"{ctx.field}" == "key" and ctx.headers == [("h", b"1")]
    ctx.extra = 1  # a plain object, as the reference's
    assert SerializationContext("t").field == "value"
