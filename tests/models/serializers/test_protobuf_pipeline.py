"""A real pipeline on the embedded broker and Spark: JSON values in, Protobuf values out, read
back from the broker and decoded with the protobuf library; a value that does not fit the
message type stops the run (or goes to ``on_producer_error``) with a ``SerializationError``
naming the output topic, and nothing past it is committed."""

from __future__ import annotations

import json

import pytest

from streamspark.exceptions import ProcessingError
from streamspark.models.serializers import SerializationError
from streamspark.models.serializers.protobuf import ProtobufSerializer

from .protos import Reading


def as_reading(value):
    return {"sensorId": value["sensor"], "value": value["temp"], "kind": "KIND_TEMPERATURE"}


def fahrenheit(value):
    return {**value, "temp": value["temp"] * 9 / 5 + 32}


def json_values(values):
    return [{"value": json.dumps(v).encode()} for v in values]


def test_json_in_protobuf_out(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_values([{"sensor": f"s{i}", "temp": 10.0 * i} for i in range(4)]))

    app = make_app()
    sdf = app.dataframe(app.topic(src))
    sdf = sdf[sdf["temp"] > 0].apply(fahrenheit).apply(as_reading)
    sdf.to_topic(app.topic(out, value_serializer=ProtobufSerializer(Reading)))
    app.run(count=3, timeout=60)

    decoded = [Reading.FromString(m.value()) for m in kafka.consume(out, expected=3)]
    assert [(r.sensor_id, r.value, r.kind) for r in decoded] == [("s1", 50.0, 1), ("s2", 68.0, 1), ("s3", 86.0, 1)]


def test_value_not_fitting_the_message_names_the_output_topic(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    # offset 1: a temperature that is no number, so its Reading cannot be built on produce
    kafka.produce(
        src, json_values([{"sensor": "s0", "temp": 1.5}, {"sensor": "s1", "temp": "n/a"}, {"sensor": "s2", "temp": 2.5}])
    )

    app = make_app(consumer_group="proto-bad")
    app.dataframe(app.topic(src)).apply(as_reading).to_topic(app.topic(out, value_serializer=ProtobufSerializer(Reading)))
    with pytest.raises(ProcessingError, match="offset=1") as info:
        app.run(count=3, timeout=60)
    assert info.value.stage == "producer"
    cause = info.value.__cause__
    assert isinstance(cause, SerializationError)
    assert f'Value does not fit Reading (topic "{out}", value)' in str(cause)
    # nothing was committed past the refused message
    assert kafka.committed("proto-bad", src)[0] <= 1

    out2 = kafka.new_topic()

    def on_error(exc, row, log):
        # runs in a Spark worker: accept only the refused Reading of offset 1, named by its topic
        return (
            isinstance(exc, SerializationError)
            and f'topic "{out2}"' in str(exc)
            and row.offset == 1
            and row.value["value"] == "n/a"
        )

    app2 = make_app(consumer_group="proto-bad-2", on_producer_error=on_error)
    app2.dataframe(app2.topic(src)).apply(as_reading).to_topic(app2.topic(out2, value_serializer=ProtobufSerializer(Reading)))
    assert len(app2.run(count=3, timeout=60)) == 3
    decoded = [Reading.FromString(m.value()) for m in kafka.consume(out2, expected=2)]
    assert [(r.sensor_id, r.value) for r in decoded] == [("s0", 1.5), ("s2", 2.5)]
    assert kafka.committed("proto-bad-2", src)[0] == 3
