"""QuixDeserializer / QuixTimeseriesSerializer / QuixEventsSerializer: the Quix message shapes,
the legacy envelope and headers, and ``split_values`` (one message, several rows)."""

from __future__ import annotations

import gzip
import json
import pickle

import pytest

from streamspark.models import Topic
from streamspark.models.rows import RawMessage
from streamspark.models.serializers import (
    IgnoreMessage,
    QuixDeserializer,
    QuixEventsSerializer,
    QuixTimeseriesSerializer,
    SerializationContext,
    SerializationError,
    resolve_deserializer,
    resolve_serializer,
)

TIMESERIES = [("__Q_ModelKey", b"TimeseriesData"), ("__Q_CodecId", b"JT")]


def ctx(headers):
    return SerializationContext("t", headers=headers)


def test_timeseries_shape():
    ser = QuixTimeseriesSerializer(as_legacy=False)
    value = {"a": 1, "b": 1.5, "c": "s", "d": b"bytes", "e": None, "Tags": {"tag1": "t"}, "Timestamp": 123}
    assert json.loads(ser(value, None)) == {
        "Timestamps": [123],
        "NumericValues": {"a": [1], "b": [1.5]},
        "StringValues": {"c": ["s"]},
        "BinaryValues": {"d": ["Ynl0ZXM="]},
        "TagValues": {"tag1": ["t"]},
    }
    assert ser.extra_headers == {"__Q_ModelKey": "TimeseriesData", "__Q_CodecId": "JT"}


@pytest.mark.parametrize(
    "serializer, value, message",
    [
        (QuixTimeseriesSerializer(), {"a": [1], "Timestamp": 1}, """Item with key "a" has unsupported type "<class 'list'>\""""),
        (QuixTimeseriesSerializer(), [1], "Expected Mapping, got <class 'list'>"),
        (QuixTimeseriesSerializer(), {"Tags": 1, "Timestamp": 1}, """"Tags" must be a Mapping, got type "<class 'int'>\""""),
        (QuixEventsSerializer(), {"Id": "x", "Value": 1}, """Field "Value" is expected to be of type "str", got <class 'int'>"""),
    ],
)
def test_serializer_errors_carry_the_references_wording(serializer, value, message):
    with pytest.raises(SerializationError) as info:
        serializer(value, None)
    assert message in str(info.value)


def test_a_message_without_data_is_ignored_with_the_references_wording():
    legacy = json.dumps({"C": "JT", "K": "StreamProperties", "V": {}, "S": 0, "E": 0}).encode()
    with pytest.raises(IgnoreMessage, match='Ignore Quix message with "__Q_ModelKey": "StreamProperties"'):
        list(QuixDeserializer()(legacy, ctx([])))


def test_timeseries_bad_values():
    ser = QuixTimeseriesSerializer()
    with pytest.raises(SerializationError, match="unsupported type"):
        ser({"a": [1], "Timestamp": 1}, None)
    with pytest.raises(SerializationError, match="unsupported type"):
        ser({"a": True, "Timestamp": 1}, None)
    with pytest.raises(SerializationError, match="Timestamp"):
        ser({"a": 1}, None)
    with pytest.raises(SerializationError, match="Tags"):
        ser({"Tags": "x", "Timestamp": 1}, None)
    with pytest.raises(SerializationError, match="Expected Mapping"):
        ser([1], None)


def test_legacy_envelope_indexes_point_at_the_value():
    ser = QuixTimeseriesSerializer()  # as_legacy=True by default: no headers
    data = ser({"a": "é", "Timestamp": 7}, None)
    envelope = json.loads(data)
    assert (envelope["C"], envelope["K"], ser.extra_headers) == ("JT", "ParameterData", {})
    assert json.loads(data[envelope["S"] : envelope["E"]]) == envelope["V"]
    assert list(QuixDeserializer()(data, ctx(None))) == [{"a": "é", "Tags": {}, "Timestamp": 7}]


def test_one_timeseries_message_splits_into_rows():
    value = json.dumps(
        {
            "Timestamps": [1, 2],
            "NumericValues": {"a": [1, None]},
            "StringValues": {"s": ["x", "y"]},
            "BinaryValues": {"b": ["Ynl0ZXM=", None]},
            "TagValues": {"room": ["r1", "r2"]},
        }
    ).encode()
    de = pickle.loads(pickle.dumps(QuixDeserializer()))
    assert de.split_values is True
    assert list(de(value, ctx(TIMESERIES))) == [
        {"a": 1, "s": "x", "b": b"bytes", "Tags": {"room": "r1"}, "Timestamp": 1},
        {"a": None, "s": "y", "b": None, "Tags": {"room": "r2"}, "Timestamp": 2},
    ]
    rows = Topic("t", value_deserializer="quix").row_deserialize(RawMessage("t", 0, 3, None, value, TIMESERIES, 9, 1))
    assert [row.value["Timestamp"] for row in rows] == [1, 2]


def test_events_round_trip_with_headers_and_gzip():
    ser = QuixEventsSerializer(as_legacy=False)
    data = ser({"Id": "e1", "Value": "v", "Tags": {"k": "t"}, "Timestamp": 5, "ignored": 1}, None)
    assert json.loads(data) == {"Id": "e1", "Value": "v", "Tags": {"k": "t"}, "Timestamp": 5}
    headers = [(name, value.encode()) for name, value in ser.extra_headers.items()]
    assert list(QuixDeserializer()(data, ctx(headers))) == [{"Timestamp": 5, "Id": "e1", "Value": "v", "Tags": {"k": "t"}}]
    zipped = [("__Q_ModelKey", b"EventData[]"), ("__Q_CodecId", b"[GZIP]JT")]
    events = gzip.compress(json.dumps([json.loads(data), {"Id": "e2", "Value": "", "Timestamp": 6}]).encode())
    assert [row["Id"] for row in QuixDeserializer()(events, ctx(zipped))] == ["e1", "e2"]


def test_events_bad_values():
    with pytest.raises(SerializationError, match='Field "Value" is expected to be of type "str"'):
        QuixEventsSerializer()({"Value": 1, "Timestamp": 1}, None)
    with pytest.raises(SerializationError, match="Timestamp"):
        QuixEventsSerializer()({"Id": "x"}, None)


@pytest.mark.parametrize(
    "headers, match",
    [
        ([("__Q_ModelKey", b"TimeseriesData")], "__Q_CodecId"),
        ([("__Q_CodecId", b"JT")], "__Q_ModelKey"),
        ([("__Q_ModelKey", b"TimeseriesData"), ("__Q_CodecId", b"PB")], "Unsupported"),
        ([("__Q_ModelKey", b"Other"), ("__Q_CodecId", b"JT")], "Unsupported"),
        (TIMESERIES + [("__Q_SplitMessageId", b"1")], "split"),
    ],
)
def test_bad_headers_are_serialization_errors(headers, match):
    with pytest.raises(SerializationError, match=match):
        list(QuixDeserializer()(b'{"Timestamps": []}', ctx(headers)))


def test_protocol_messages_are_ignored():
    with pytest.raises(IgnoreMessage):
        list(QuixDeserializer()(b"{}", ctx([("__Q_ModelKey", b"StreamEnd"), ("__Q_CodecId", b"JT")])))


def test_competing_timestamp_parameter_is_refused():
    value = json.dumps({"Timestamps": [1], "NumericValues": {"Timestamp": [1]}}).encode()
    with pytest.raises(SerializationError, match="Timestamp"):
        list(QuixDeserializer()(value, ctx(TIMESERIES)))


def test_selectable_by_name():
    assert isinstance(resolve_serializer("quix_timeseries"), QuixTimeseriesSerializer)
    assert isinstance(resolve_serializer("quix_events"), QuixEventsSerializer)
    assert isinstance(resolve_deserializer("quix"), QuixDeserializer)


def test_the_deserializer_is_lazy_as_the_reference():
    """Nothing is parsed or checked until the rows are iterated; ``next()`` gives the first."""
    rows = QuixDeserializer()(b"not json", ctx([]))  # no error yet
    with pytest.raises(SerializationError):
        next(iter(rows))
    ignored = QuixDeserializer()(b"{}", ctx([("__Q_ModelKey", b"StreamEnd"), ("__Q_CodecId", b"JT")]))
    with pytest.raises(IgnoreMessage):
        next(iter(ignored))
    value = QuixTimeseriesSerializer(as_legacy=False)({"a": 1, "Timestamp": 5}, None)
    assert next(iter(QuixDeserializer()(value, ctx(TIMESERIES)))) == {"a": 1, "Tags": {}, "Timestamp": 5}


def test_a_missing_value_is_a_serialization_error():
    with pytest.raises(SerializationError, match="bytes"):
        list(QuixDeserializer()(None, ctx(TIMESERIES)))  # type: ignore[arg-type]


def test_event_tags_given_as_null_stay_none():
    value = b'{"Timestamp": 1, "Id": "e", "Value": "v", "Tags": null}'
    rows = list(QuixDeserializer()(value, ctx([("__Q_ModelKey", b"EventData"), ("__Q_CodecId", b"JT")])))
    assert rows == [{"Timestamp": 1, "Id": "e", "Value": "v", "Tags": None}]


def test_a_dumps_returning_str_gives_str_outside_the_legacy_envelope():
    import json

    out = QuixEventsSerializer(as_legacy=False, dumps=json.dumps)({"Id": "e", "Timestamp": 1}, None)
    assert out == '{"Id": "e", "Value": "", "Tags": {}, "Timestamp": 1}'
    legacy = QuixEventsSerializer(dumps=json.dumps)({"Id": "e", "Timestamp": 1}, None)
    assert isinstance(legacy, bytes) and legacy.startswith(b'{"C":"JT","K":"EventData","V":{"Id": "e"')


def test_events_check_the_value_field_first():
    with pytest.raises(SerializationError, match='Field "Value"'):
        QuixEventsSerializer()({"Id": 1, "Value": 2, "Timestamp": 1}, None)


def test_a_topic_ignores_a_protocol_message_the_lazy_deserializer_reports():
    headers = [("__Q_ModelKey", b"StreamEnd"), ("__Q_CodecId", b"JT")]
    topic = Topic("t", value_deserializer="quix")
    assert topic.row_deserialize(RawMessage("t", 0, 3, None, b"{}", headers, 9, 1)) is None
    with pytest.raises(SerializationError):
        topic.row_deserialize(RawMessage("t", 0, 4, None, b"{", TIMESERIES, 9, 1))
