from __future__ import annotations

import pytest

from streamspark.models import TimestampType, Topic, TopicConfig
from streamspark.models.serializers import Deserializer, IgnoreMessage, JSONSerializer


def test_deserialize_defaults_json_values_bytes_keys():
    assert Topic("t").deserialize(b'{"a":1}', b"k", None, 10, 1) == [({"a": 1}, b"k", 10)]
    assert Topic("t").deserialize(None, None, None, 10, 1) == [(None, None, 10)]


def test_timestamp_extractor_gets_value_headers_ts_type():
    seen = []

    def extract(value, headers, ts, ts_type):
        seen.append((headers, ts, ts_type))
        return value["ts"]

    t = Topic("t", timestamp_extractor=extract)
    assert t.deserialize(b'{"ts": 99}', None, [("h", b"1")], 5, 2) == [({"ts": 99}, None, 99)]
    assert seen == [([("h", b"1")], 5, TimestampType.TIMESTAMP_LOG_APPEND_TIME)]


def test_split_values_and_ignore_message():
    class Split(Deserializer):
        split_values = True  # type: ignore[assignment]

        def __call__(self, value, ctx):
            if value == b"skip":
                raise IgnoreMessage()
            return value.split(b",")

    t = Topic("t", value_deserializer=Split())
    assert t.deserialize(b"a,b", None, None, 0, 1) == [(b"a", None, 0), (b"b", None, 0)]
    assert t.deserialize(b"skip", None, None, 0, 1) == []


def test_serialize_with_extra_headers_and_keys():
    class Tagged(JSONSerializer):
        @property
        def extra_headers(self):
            return {"format": b"json"}

    t = Topic("t", key_serializer="str", value_serializer=Tagged())
    msg = t.serialize(key="k", value={"a": 1}, headers=[("x", b"1")], timestamp_ms=5)
    assert (msg.key, msg.value, msg.timestamp) == (b"k", b'{"a":1}', 5)
    assert msg.headers == [("x", b"1"), ("format", b"json")]


def test_topic_config_frozen_and_empty_name_rejected():
    cfg = TopicConfig(num_partitions=2, replication_factor=1)
    with pytest.raises(Exception):
        cfg.num_partitions = 3  # type: ignore[misc]
    with pytest.raises(ValueError):
        Topic("")


def test_specialised_paths_keep_each_serializers_behaviour():
    """Topic skips contexts and wrapper calls only for built-ins that ignore them; a subclass
    that overrides ``__call__`` still gets the real context, a JSON schema still validates."""
    import pickle

    from streamspark.models.serializers import JSONDeserializer, SerializationError, StringSerializer

    seen = []

    class Tagging(JSONDeserializer):
        def __call__(self, value, ctx):
            seen.append((ctx.topic, ctx.field, ctx.headers))
            return {**super().__call__(value, ctx), "tag": ctx.topic}

    t = Topic("tagged", value_deserializer=Tagging(), key_deserializer="str")
    assert t.deserialize(b'{"a": 1}', b"k", [("h", b"1")], 7, 0) == [({"a": 1, "tag": "tagged"}, "k", 7)]
    assert seen == [("tagged", "value", [("h", b"1")])]

    strict = Topic("strict", value_deserializer=JSONDeserializer(schema={"type": "object", "required": ["a"]}))
    assert strict.deserialize(b'{"a": 1}', None, None, 1, 0) == [({"a": 1}, None, 1)]
    with pytest.raises(SerializationError, match="'a' is a required property"):
        strict.deserialize(b'{"b": 1}', None, None, 1, 0)

    out = Topic("o")  # bytes keys pass through; other keys still fail the bytes serializer
    key = b"k1"
    assert out.serialize(key=key, value={"x": 1}).key is key
    with pytest.raises(SerializationError, match="BytesSerializer expects bytes"):
        out.serialize(key="k1", value={"x": 1})
    assert Topic("s", key_serializer=StringSerializer()).serialize(key="é", value=None).key == "é".encode()

    # a pickled topic (as shipped to Spark workers) rebuilds its functions and behaves the same
    copy = pickle.loads(pickle.dumps(strict))
    with pytest.raises(SerializationError):
        copy.deserialize(b'{"b": 1}', None, None, 1, 0)


def test_plain_json_serializer_path_gives_the_serializers_bytes_and_errors():
    """Topic calls orjson directly for a plain JSONSerializer; a custom ``dumps``, a subclass
    and a schema still go through the serializer, and errors are the same either way."""
    from streamspark.models.serializers import JSONSerializer, SerializationError

    value = {"a": 1, 2: "b", "t": [1.5, None]}
    plain = Topic("plain", value_serializer="json")
    assert plain.serialize(key=b"k", value=value).value == JSONSerializer()(value, None)
    with pytest.raises(SerializationError, match="not JSON-serializable") as fast:
        plain.serialize(key=b"k", value={"x": object()})
    with pytest.raises(SerializationError) as slow:
        JSONSerializer()({"x": object()}, None)
    assert str(fast.value) == str(slow.value)

    custom = Topic("custom", value_serializer=JSONSerializer(dumps=lambda v: b"custom:" + repr(v).encode()))
    assert custom.serialize(value=1).value == b"custom:1"

    class Upper(JSONSerializer):
        def __call__(self, value, ctx):
            return super().__call__(value, ctx).upper()

    assert Topic("upper", value_serializer=Upper()).serialize(value={"a": "x"}).value == b'{"A":"X"}'
    strict = Topic("strict", value_serializer=JSONSerializer(schema={"type": "object", "required": ["a"]}))
    with pytest.raises(SerializationError, match="'a' is a required property"):
        strict.serialize(value={"b": 1})
