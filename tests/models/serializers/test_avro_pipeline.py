"""A real pipeline on the embedded broker and Spark: Avro values in, JSON values out; a message
that is not valid Avro goes to ``on_consumer_error`` with its offset, and the rest flows on."""

from __future__ import annotations

import json

from streamspark.models.serializers.avro import AvroDeserializer, AvroSerializer

SCHEMA = {
    "type": "record",
    "name": "Reading",
    "fields": [{"name": "sensor", "type": "string"}, {"name": "value", "type": "double"}],
}


def skip_bad_avro(exc, message, logger):
    # runs in a Spark worker: only the broken message at offset 2 may be skipped
    return message.offset() == 2 and message.value() == b"\x0c"


def test_avro_in_json_out(make_app, kafka):
    src, out = kafka.new_topic(), kafka.new_topic()
    encode = AvroSerializer(SCHEMA)
    readings = [{"sensor": f"s{i}", "value": i / 2} for i in range(4)]
    kafka.produce(src, [{"value": encode(r, None)} for r in readings[:2]])
    kafka.produce(src, [{"value": b"\x0c"}])  # offset 2: a 6-character string announced, nothing follows
    kafka.produce(src, [{"value": encode(r, None)} for r in readings[2:]])

    app = make_app(on_consumer_error=skip_bad_avro)
    sdf = app.dataframe(app.topic(src, value_deserializer=AvroDeserializer(SCHEMA)))
    sdf["double"] = sdf["value"] * 2
    sdf.to_topic(app.topic(out, value_serializer="json"))
    rows = app.run(count=4, timeout=60)

    expected = [{**r, "double": r["value"] * 2} for r in readings]
    assert rows == expected
    assert [json.loads(m.value()) for m in kafka.consume(out, expected=4)] == expected
