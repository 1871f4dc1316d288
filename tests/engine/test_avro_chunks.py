"""Topics of plain schemaless Avro values: a task decodes a chunk of values into dicts at once
(the ``avro-chunks`` path, ``ArrowAvroDecoder.decode_records``) and runs the pipeline on them
as on the values ``AvroDeserializer`` gives record by record (the plain path).

The first tests drive the task code (``TaskProcessor``) in this process, without Spark; the
last runs both paths through Spark and the test broker.
"""

from __future__ import annotations

import io
import json
import random
from typing import Any

import fastavro
import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.models.serializers.avro import AvroDeserializer, AvroSerializer

from .lake_tasks import task_processor

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "sensor", "type": "string"},
        {"name": "temp", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "level", "type": "int"},
        {"name": "ok", "type": ["null", "boolean"], "default": None},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "raw", "type": "bytes"},
    ],
}
PARSED = fastavro.parse_schema(SCHEMA)
T0 = 1_704_067_200_000


def _encode(record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, PARSED, record)
    return buffer.getvalue()


def _readings(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [
        {
            "id": i,
            "sensor": rnd.choice(["s-1", "süd", "東京", ""]),
            "temp": rnd.uniform(-40, 60),
            "ratio": rnd.uniform(0, 1),
            "level": rnd.randint(-(2**31), 2**31 - 1),
            "ok": rnd.choice([None, True, False]),
            "note": rnd.choice([None, "", "x" * rnd.randint(1, 300)]),
            "raw": bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 5))),
        }
        for i in range(n)
    ]


def _records(values: list[Any], topic: str = "in", start: int = 0) -> list[tuple[Any, ...]]:
    """Source records as the Kafka reader gives them (topic, partition, offset, timestamp,
    timestamp type, key, value, headers)."""
    return [
        (topic, 0, start + i, T0 + i, 1, f"k{i % 3}".encode(), v if isinstance(v, (bytes, type(None))) else _encode(v), None)
        for i, v in enumerate(values)
    ]


def _pipeline(app: Any, topics: tuple[str, ...] = ("in",), failing: bool = False) -> None:
    """W1's steps on each topic, results collected; ``failing``: a step raises for every
    seventh id."""
    for name in topics:
        sdf = app.dataframe(app.topic(name, value_deserializer=AvroDeserializer(SCHEMA)))
        if failing:
            sdf = sdf.apply(lambda v: {**v, "inverse": 1 / (v["id"] % 7)})
        sdf = sdf[sdf["temp"] > 0]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf = sdf.apply(lambda v: {**v, "raw": v["raw"].hex(), "tag": "hot", "types": [type(x).__name__ for x in v.values()]})
        sdf.to_topic(app.topic(f"{name}-out"))


def _run_both(
    app_factory: Any,
    monkeypatch: Any,
    chunks: list[list[tuple[Any, ...]]],
    topics: tuple[str, ...] = ("in",),
    failing: bool = False,
    **app_kwargs: Any,
) -> list[tuple[Any, Any, int]]:
    """Run ``chunks`` through the fast and the plain path: per path, the processor, its
    summary and how many values ``AvroDeserializer`` decoded one by one."""
    real = AvroDeserializer.__call__
    runs = []
    for plain in ((), ("avro-chunks",)):
        calls = [0]

        def counted(self: AvroDeserializer, value: bytes, ctx: Any, calls: list[int] = calls) -> Any:
            calls[0] += 1
            return real(self, value, ctx)

        monkeypatch.setattr(AvroDeserializer, "__call__", counted)
        app = app_factory(**app_kwargs)
        _pipeline(app, topics, failing)
        processor = task_processor(app, collect=True, plain=plain)
        assert bool(processor.avro_chunks) is not plain
        for chunk in chunks:
            processor.process(chunk)
        runs.append((processor, processor.finish(), calls[0]))
    monkeypatch.setattr(AvroDeserializer, "__call__", real)
    return runs


def test_chunks_give_the_outputs_of_the_per_record_path(app_factory, monkeypatch):
    values = _readings(500)
    (fast, fast_summary, fast_calls), (plain, plain_summary, plain_calls) = _run_both(
        app_factory, monkeypatch, [_records(values[:200]), _records(values[200:], start=200)]
    )
    assert (fast_calls, plain_calls) == (0, 500)  # the fast path decoded both chunks whole
    assert fast_summary.error is None and plain_summary.error is None
    assert fast.collected == plain.collected
    assert len(fast.collected) == sum(v["temp"] > 0 for v in values) > 100
    assert (fast_summary.input_count, fast_summary.output_count) == (plain_summary.input_count, plain_summary.output_count)


@pytest.mark.parametrize("skip", [False, True])
def test_a_malformed_message_is_reported_as_on_the_per_record_path(app_factory, monkeypatch, skip):
    """The chunk holding it is decoded record by record, so the error names the message (or
    ``on_consumer_error`` skips it) exactly as without the chunk path."""
    seen: list[tuple[Any, ...]] = []

    def on_consumer_error(exc: Exception, message: Any, logger: Any) -> bool:
        seen.append((type(exc).__name__, message.offset()))
        return skip

    values: list[Any] = _readings(8)
    values[5] = _encode(values[5])[:4]  # cut short
    chunks = [_records(values[:4]), _records(values[4:], start=4)]
    runs = _run_both(app_factory, monkeypatch, chunks, on_consumer_error=on_consumer_error)
    assert seen == [("SerializationError", 5)] * 2
    (fast, fast_summary, fast_calls), (plain, plain_summary, plain_calls) = runs
    # the good chunk decoded whole, the other one record by record (up to the bad message
    # when it stops the task)
    assert (fast_calls, plain_calls) == ((4, 8) if skip else (2, 6))
    assert fast.collected == plain.collected
    if skip:
        assert fast_summary.error is None and fast_summary.skipped == plain_summary.skipped == 1
    else:
        assert (fast_summary.error.stage, fast_summary.error.offset) == ("consumer", 5)
        assert (plain_summary.error.stage, plain_summary.error.offset) == ("consumer", 5)


def test_tombstones_and_trailing_bytes_are_read_as_fastavro_reads_them(app_factory, monkeypatch):
    """A chunk with a None value or bytes after a record is refused whole and read one by one."""
    values: list[Any] = _readings(6)
    values[1] = None
    values[3] = _encode(values[3]) + b"\x00"
    skip = lambda exc, row, logger: row.value is None  # noqa: E731 (W1's steps need a dict)
    (fast, fast_summary, fast_calls), (plain, plain_summary, _) = _run_both(
        app_factory, monkeypatch, [_records(values)], on_processing_error=skip
    )
    assert fast_calls == 5  # refused whole, read one by one (the tombstone is not decoded)
    assert fast_summary.error is None and plain_summary.error is None
    assert fast.collected == plain.collected
    assert fast_summary.skipped == plain_summary.skipped == 1


def test_a_chunk_of_two_topics_keeps_their_order(app_factory, monkeypatch):
    a, b = _records(_readings(10, seed=2), topic="a"), _records(_readings(10, seed=3), topic="b")
    mixed = [record for pair in zip(a, b) for record in pair]
    (fast, _, fast_calls), (plain, _, _) = _run_both(app_factory, monkeypatch, [mixed, a, b], topics=("a", "b"))
    assert fast.collected == plain.collected
    assert fast_calls == 20  # the mixed chunk one by one, the others whole


def test_a_step_failing_in_a_decoded_chunk_is_skipped_as_on_the_per_record_path(app_factory, monkeypatch):
    """Every value of the chunk is taken once, in order, also past the records that fail."""
    values = _readings(60, seed=5)
    (fast, fast_summary, fast_calls), (plain, plain_summary, _) = _run_both(
        app_factory, monkeypatch, [_records(values)], failing=True, on_processing_error=lambda exc, row, logger: True
    )
    assert fast_calls == 0
    assert fast_summary.skipped == plain_summary.skipped == 9  # ids 0, 7, ..., 56
    assert fast.collected == plain.collected and len(fast.collected) > 20


def test_values_decode_to_fastavros_bit_for_bit(app_factory):
    values = _readings(300, seed=7)
    app = app_factory()
    decoder = app.topic("in", value_deserializer=AvroDeserializer(SCHEMA)).raw_avro_decoder()
    encoded = [_encode(v) for v in values]
    decoded = list(decoder.decode_records(encoded, block=7))
    expected = [fastavro.schemaless_reader(io.BytesIO(raw), PARSED, None) for raw in encoded]
    assert decoded == expected
    assert [list(map(type, d.values())) for d in decoded] == [list(map(type, e.values())) for e in expected]
    assert [list(d) for d in decoded] == [list(e) for e in expected]  # field order


def test_both_paths_on_spark_give_the_same_topic(make_app, kafka, spark, monkeypatch):
    values = _readings(300, seed=11)
    src = kafka.new_topic(partitions=2)
    kafka.produce(src, [{"value": _encode(v), "key": str(v["id"]).encode(), "partition": v["id"] % 2} for v in values])
    hot = {**SCHEMA, "name": "Hot", "fields": [f for f in SCHEMA["fields"] if f["name"] != "raw"]}
    hot["fields"] = hot["fields"] + [{"name": "temp_f", "type": "double"}]
    produced = {}
    # all fast paths; the chunks decoded whole but the filter and assignment run per record;
    # everything per record
    for plain in ((), ("columnar-prefix",), ("avro-chunks",)):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=plain))
        out = kafka.new_topic()
        app = make_app()
        sdf = app.dataframe(app.topic(src, value_deserializer=AvroDeserializer(SCHEMA)))
        sdf = sdf[sdf["temp"] > 0]
        sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32
        sdf = sdf.apply(lambda v: {k: x for k, x in v.items() if k != "raw"})
        sdf.to_topic(app.topic(out, value_serializer=AvroSerializer(hot)))
        expected = sum(v["temp"] > 0 for v in values)
        app.run(count=expected, timeout=60)
        produced[plain] = sorted(
            json.dumps(fastavro.schemaless_reader(io.BytesIO(m.value()), fastavro.parse_schema(hot), None), sort_keys=True)
            for m in kafka.consume(out, expected=expected)
        )
        assert len(produced[plain]) == expected
    assert produced[()] == produced[("columnar-prefix",)] == produced[("avro-chunks",)]
