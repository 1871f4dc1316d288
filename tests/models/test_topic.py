from __future__ import annotations

import inspect
import pickle

import pytest

from streamspark.models import TimestampType, Topic, TopicConfig, TopicType
from streamspark.models.rows import RawMessage, Row
from streamspark.models.serializers import (
    Deserializer,
    DeserializerIsNotProvidedError,
    IgnoreMessage,
    JSONDeserializer,
    JSONSerializer,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    SerializerIsNotProvidedError,
    StringSerializer,
)
from streamspark.models.topics import TopicConfigurationError


def message(value, key=None, headers=None, timestamp=10, timestamp_type=1, topic="t", partition=2, offset=7):
    return RawMessage(topic, partition, offset, key, value, headers, timestamp, timestamp_type)


class Split(Deserializer):
    @property
    def split_values(self):
        return True

    def __call__(self, value, ctx):
        if value == b"skip":
            raise IgnoreMessage()
        return [part for part in value.split(b",") if part]


# --- consuming ---------------------------------------------------------------------------------


def test_row_deserialize_gives_a_row_with_its_context():
    row = Topic("t").row_deserialize(message(b'{"a":1}', key=b"k", headers=[("h", b"1")]))
    assert isinstance(row, Row)
    assert (row.value, row.key, row.timestamp, row.headers) == ({"a": 1}, b"k", 10, [("h", b"1")])
    assert (row.topic, row.partition, row.offset, row.size) == ("t", 2, 7, 7)
    assert row.context.key == b"k" and row.context.timestamp == 10 and row.leader_epoch is None


def test_row_deserialize_keeps_null_key_and_value():
    row = Topic("t", key_deserializer="str").row_deserialize(message(None))
    assert (row.value, row.key, row.size) == (None, None, 0)


def test_row_deserialize_splits_values_into_a_list_and_ignores_messages():
    t = Topic("t", value_deserializer=Split())
    rows = t.row_deserialize(message(b"a,b"))
    assert isinstance(rows, list) and [r.value for r in rows] == [b"a", b"b"]
    assert t.row_deserialize(message(b",")) == []  # split into nothing: an empty list
    assert t.row_deserialize(message(b"skip")) is None  # IgnoreMessage
    assert isinstance(t.row_deserialize(message(None)), Row)  # a null value is not split


def test_timestamp_extractor_gets_value_headers_ts_and_type():
    seen = []

    def extract(value, headers, ts, ts_type):
        seen.append((headers, ts, ts_type))
        return value["ts"]

    t = Topic("t", timestamp_extractor=extract)
    row = t.row_deserialize(message(b'{"ts": 99}', headers=[("h", b"1")], timestamp=5, timestamp_type=2))
    assert (row.timestamp, row.context.timestamp) == (99, 99)
    row = t.row_deserialize(message(b'{"ts": 1}', timestamp=-1, timestamp_type=0))
    assert row.timestamp == 1
    assert seen == [
        ([("h", b"1")], 5, TimestampType.TIMESTAMP_LOG_APPEND_TIME),
        (None, -1, TimestampType.TIMESTAMP_NOT_AVAILABLE),
    ]


def test_deserialize_takes_a_message_and_gives_a_kafka_message():
    assert list(inspect.signature(Topic.deserialize).parameters) == ["self", "message"]
    msg = Topic("t", key_deserializer="str").deserialize(message(b'{"a":1}', key=b"k", headers=[("h", b"1")]))
    assert (msg.key, msg.value, msg.headers, msg.timestamp) == ("k", {"a": 1}, [("h", b"1")], 10)
    # no splitting, no IgnoreMessage handling: the deserializer's result as it is
    assert Topic("t", value_deserializer=Split()).deserialize(message(b"a,b")).value == [b"a", b"b"]
    with pytest.raises(IgnoreMessage):
        Topic("t", value_deserializer=Split()).deserialize(message(b"skip"))


def test_invalid_json_is_a_serialization_error():
    with pytest.raises(SerializationError, match="not valid JSON"):
        Topic("t").row_deserialize(message(b'{"a": '))
    with pytest.raises(SerializationError, match="not valid JSON"):
        Topic("t").deserialize(message(b"\xff"))


def test_specialised_paths_keep_each_deserializers_behaviour():
    """Built-ins are called without a context; a subclass that overrides ``__call__`` still gets
    the real one, a JSON schema still validates, also in a pickled copy (as shipped to Spark)."""
    seen = []

    class Tagging(JSONDeserializer):
        def __call__(self, value, ctx):
            seen.append((ctx.topic, ctx.field, ctx.headers))
            return {**super().__call__(value, ctx), "tag": ctx.topic}

    t = Topic("tagged", value_deserializer=Tagging(), key_deserializer="str")
    row = t.row_deserialize(message(b'{"a": 1}', key=b"k", headers=[("h", b"1")], topic="tagged"))
    assert (row.value, row.key) == ({"a": 1, "tag": "tagged"}, "k")
    assert seen == [("tagged", "value", [("h", b"1")])]

    strict = Topic("strict", value_deserializer=JSONDeserializer(schema={"type": "object", "required": ["a"]}))
    assert strict.row_deserialize(message(b'{"a": 1}')).value == {"a": 1}
    copy = pickle.loads(pickle.dumps(strict))
    for topic in (strict, copy):
        with pytest.raises(SerializationError, match="'a' is a required property"):
            topic.row_deserialize(message(b'{"b": 1}'))


def test_missing_deserializers_raise_not_provided():
    no_value = Topic("t", value_deserializer=None)
    with pytest.raises(DeserializerIsNotProvidedError, match='Value deserializer is not provided for topic "t"'):
        no_value.row_deserialize(message(b"x"))
    assert no_value.deserialize(message(None, key=b"k")).key == b"k"  # nothing to deserialize
    with pytest.raises(DeserializerIsNotProvidedError, match="Value deserializer"):
        no_value.deserialize(message(b"x"))
    with pytest.raises(DeserializerIsNotProvidedError, match="Key deserializer"):
        Topic("t", key_deserializer=None).row_deserialize(message(b"{}"))


# --- producing ---------------------------------------------------------------------------------


def row(value, headers=None, timestamp=5):
    return Row(value=value, key=None, timestamp=timestamp, context=Topic("in").context(), headers=headers)


def test_default_bytes_key_serializer_passes_str_and_bytes_keys():
    """A ``group_by`` column gives str keys: the default "bytes" key serializer passes them on
    (the producer writes a str as UTF-8), as the reference does."""
    out = Topic("out")
    assert out.row_serialize(row({"x": 1}), key="zone-1").key == "zone-1"
    assert out.row_serialize(row({"x": 1}), key=b"k").key == b"k"
    assert out.row_serialize(row({"x": 1}), key=bytearray(b"k")).key == b"k"
    assert out.serialize(key="zone-1", value={"x": 1}).key == "zone-1"


def test_keys_the_producer_cannot_take_are_also_type_errors_as_the_reference_raises():
    with pytest.raises(TypeError, match="key serializer BytesSerializer returned int"):
        Topic("out").serialize(key=5, value={"x": 1})
    with pytest.raises(TypeError, match="value serializer BytesSerializer returned dict"):
        Topic("out", value_serializer="bytes").serialize(key=b"k", value={"x": 1})


def test_keys_the_producer_cannot_take_are_serialization_errors():
    with pytest.raises(SerializationError, match="key serializer BytesSerializer returned int"):
        Topic("out").row_serialize(row({"x": 1}), key=5)
    with pytest.raises(SerializationError, match="key serializer BytesSerializer returned int"):
        Topic("out").serialize(key=5, value={"x": 1})

    class Weird(Serializer):
        def __call__(self, value, ctx):
            return 1.5

    with pytest.raises(SerializationError, match="value serializer Weird returned float"):
        Topic("out", value_serializer=Weird()).row_serialize(row("v"), key=None)


def test_row_serialize_follows_the_reference():
    """None key stays None; the value always goes through the serializer (JSON: null); the
    serializer's extra headers are merged in; no headers give []; no timestamp is set."""

    class Tagged(JSONSerializer):
        @property
        def extra_headers(self):
            return {"format": b"json"}

    msg = Topic("t", key_serializer="json", value_serializer=Tagged()).row_serialize(
        row({"a": 1}, headers=[("x", b"1"), ("format", b"old")]), key=None
    )
    assert (msg.key, msg.value, msg.timestamp) == (None, b'{"a":1}', None)
    assert msg.headers == [("x", b"1"), ("format", b"json")]
    msg = Topic("t").row_serialize(row(None), key=b"k")
    assert (msg.key, msg.value, msg.headers) == (b"k", b"null", [])
    assert Topic("t", value_serializer="str").row_serialize(row(None), key=None).value is None
    assert Topic("t", key_serializer="int").row_serialize(row(1), key=7).key == b"\x00\x00\x00\x07"


def test_serialize_follows_the_reference():
    """Both go through the serializers (None included); headers are kept as given."""
    msg = Topic("t", key_serializer="str").serialize(key="k", value={"a": 1}, headers=[("x", b"1")], timestamp_ms=5)
    assert (msg.key, msg.value, msg.headers, msg.timestamp) == (b"k", b'{"a":1}', [("x", b"1")], 5)
    msg = Topic("t", key_serializer="json").serialize()
    assert (msg.key, msg.value, msg.headers) == (b"null", b"null", None)
    assert Topic("s", key_serializer=StringSerializer()).serialize(key="é").key == "é".encode()


def test_missing_serializers_raise_not_provided():
    no_key = Topic("t", key_serializer=None)
    assert no_key.serialize(value=1).key is None
    with pytest.raises(SerializerIsNotProvidedError, match='Key serializer is not provided for topic "t"'):
        no_key.serialize(key="k", value=1)
    with pytest.raises(SerializerIsNotProvidedError, match="Key serializer"):
        no_key.row_serialize(row(1), key=None)
    with pytest.raises(SerializerIsNotProvidedError, match="Value serializer"):
        Topic("t", value_serializer=None).row_serialize(row(1), key=b"k")


def test_plain_json_serializer_path_gives_the_serializers_bytes_and_errors():
    """A plain JSONSerializer's orjson is called directly; a custom ``dumps``, a subclass and a
    schema still go through the serializer, and errors are the same either way."""
    value = {"a": 1, "é": "b", "t": [1.5, None]}
    plain = Topic("plain", value_serializer="json")
    assert plain.row_serialize(row(value), key=b"k").value == JSONSerializer()(value, None)
    for bad in ({"x": object()}, {1: "non-str key"}):
        with pytest.raises(SerializationError, match="not JSON-serializable") as fast:
            plain.row_serialize(row(bad), key=b"k")
        with pytest.raises(SerializationError) as slow:
            JSONSerializer()(bad, SerializationContext("plain", MessageField.VALUE))
        assert str(fast.value) == str(slow.value)
        assert 'topic "plain", value' in str(fast.value)

    custom = Topic("custom", value_serializer=JSONSerializer(dumps=lambda v: b"custom:" + repr(v).encode()))
    assert custom.row_serialize(row(1), key=None).value == b"custom:1"

    class Upper(JSONSerializer):
        def __call__(self, value, ctx):
            return super().__call__(value, ctx).upper()

    assert Topic("upper", value_serializer=Upper()).row_serialize(row({"a": "x"}), key=None).value == b'{"A":"X"}'
    strict = Topic("strict", value_serializer=JSONSerializer(schema={"type": "object", "required": ["a"]}))
    with pytest.raises(SerializationError, match="'a' is a required property"):
        strict.row_serialize(row({"b": 1}), key=None)


# --- definition ----------------------------------------------------------------------------------


def test_signature_and_defaults_are_the_references():
    params = inspect.signature(Topic).parameters
    assert list(params) == [
        "name",
        "topic_type",
        "create_config",
        "value_deserializer",
        "key_deserializer",
        "value_serializer",
        "key_serializer",
        "timestamp_extractor",
        "quix_name",
    ]
    assert [params[n].default for n in list(params)[1:]] == [TopicType.REGULAR, None, "json", "bytes", "json", "bytes", None, ""]


def test_broker_config_is_an_error_until_known_and_configs_are_copied():
    cfg = TopicConfig(num_partitions=2, replication_factor=1, extra_config={"retention.ms": "1"})
    t = Topic("t", create_config=cfg)
    with pytest.raises(TopicConfigurationError, match='missing for the topic "t"'):
        t.broker_config
    t.broker_config = cfg
    cfg.extra_config["retention.ms"] = "2"
    assert t.broker_config.extra_config == t.create_config.extra_config == {"retention.ms": "1"}


def test_topic_types_clone_and_repr():
    t = Topic("t", topic_type=TopicType.CHANGELOG, key_serializer="str", quix_name="ws-t")
    assert (t.is_changelog, t.is_regular, t.is_repartition) == (True, False, False)
    clone = t.__clone__("t2")
    assert (clone.name, clone.quix_name, clone.is_changelog, clone.key_serializer) == ("t2", "ws-t", True, t.key_serializer)
    assert repr(clone) == '<Topic name="t2">'
    assert Topic("x").quix_name == "x"


def test_topic_config_frozen_and_empty_name_rejected():
    cfg = TopicConfig(num_partitions=2, replication_factor=1)
    with pytest.raises(Exception):
        cfg.num_partitions = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        Topic("")
