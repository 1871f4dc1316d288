"""The ``avro-output-chunks`` path: a pipeline whose one output is a topic of plain schemaless
Avro keeps a chunk's outputs and encodes their values at once (``ArrowAvroEncoder``) before
producing them in order, against the plain path that serializes and produces each output as it
comes (fastavro).

The first tests drive the task code (``TaskProcessor``) in this process and read what it
produced from the test broker; the last runs both paths through Spark, exactly-once.
"""

from __future__ import annotations

import io
import random
from typing import Any, Callable

import fastavro
import pytest

from streamspark.engine import runner as runner_module
from streamspark.engine.strategies import Strategies
from streamspark.models.serializers._avro_arrow import ArrowAvroEncoder
from streamspark.models.serializers.avro import AvroSerializer

from .lake_tasks import task_processor

OUT: dict[str, Any] = {
    "type": "record",
    "name": "Out",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "temp", "type": "double"},
        {"name": "name", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "ok", "type": "boolean"},
    ],
}
T0 = 1_704_067_200_000


def _inputs(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    return [
        {
            "id": rnd.choice([i, -i, 2**62 + i]),
            "temp": rnd.choice([rnd.uniform(-40, 60), 3, -0.0]),
            "name": rnd.choice(["a", "süd", "東京", ""]),
            "note": rnd.choice([None, "x" * rnd.randint(0, 200)]),
            "ok": rnd.random() < 0.5,
        }
        for i in range(n)
    ]


def _records(values: list[Any], start: int = 0) -> list[tuple[Any, ...]]:
    """JSON source records (topic, partition, offset, timestamp, timestamp type, key, value, headers)."""
    import json

    return [
        ("in", 0, start + i, T0 + i, 1, f"k{i % 3}".encode(), json.dumps(v).encode(), [("h", b"1")] if i % 4 == 0 else None)
        for i, v in enumerate(values)
    ]


def _run_both(
    app_factory: Any,
    kafka: Any,
    build: Callable[[Any], Any],
    chunks: list[list[tuple[Any, ...]]],
    expected: int,
    **app_kwargs: Any,
) -> list[tuple[Any, list[tuple[Any, ...]]]]:
    """Per path (fast, then plain): the task's summary and the messages it produced
    (key, value bytes, timestamp, headers), in order; ``expected``: how many the test expects
    (the reading waits for them, and a little longer for any more)."""
    runs = []
    for plain in ((), ("avro-output-chunks",)):
        out = kafka.new_topic()
        app = app_factory(**app_kwargs)
        sdf = build(app.dataframe(app.topic("in")))
        sdf.to_topic(app.topic(out, value_serializer=AvroSerializer(OUT)))
        processor = task_processor(app, plain=plain)
        assert ("avro-output-chunks" in processor.plan.strategies) is not bool(plain)
        for chunk in chunks:
            processor.process(chunk)
        summary = processor.finish()
        messages = kafka.consume(out, expected=expected)
        runs.append((summary, [(m.key(), m.value(), m.timestamp()[1], m.headers()) for m in messages]))
    return runs


def _fastavro(value: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(OUT), value)
    return buffer.getvalue()


def test_outputs_are_the_plain_paths_bytes_in_order(app_factory, kafka):
    values = _inputs(5000)
    kept = [v for v in values if v["ok"] or v["temp"] > 0]
    (fast, fast_out), (plain, plain_out) = _run_both(
        app_factory,
        kafka,
        lambda sdf: sdf[sdf["ok"] | (sdf["temp"] > 0)],
        [_records(values[:4500]), _records(values[4500:], 4500)],
        expected=len(kept),
    )
    assert fast.error is None and plain.error is None
    assert fast_out == plain_out
    assert [value for _, value, _, _ in fast_out] == [_fastavro(v) for v in kept]
    assert len(fast_out) == len(kept) > 2000  # more than one encoding round (4096 outputs)


@pytest.mark.parametrize("skip", [True, False])
def test_a_value_the_schema_refuses_is_reported_on_its_record(app_factory, kafka, skip):
    """The chunk is then serialized record by record: ``on_producer_error`` sees the bad
    record with its own offset, and what was produced before it is produced alike."""
    seen: list[tuple[str, int]] = []

    def on_producer_error(exc: Exception, row: Any, logger: Any) -> bool:
        seen.append((type(exc).__name__, row.offset))
        return skip

    values = _inputs(40, seed=2)
    values[17]["id"] = "seventeen"  # a str for a long
    runs = _run_both(
        app_factory, kafka, lambda sdf: sdf, [_records(values)], expected=39 if skip else 17, on_producer_error=on_producer_error
    )
    (fast, fast_out), (plain, plain_out) = runs
    assert seen == [("SerializationError", 17)] * 2
    if skip:
        assert fast.error is None and plain.error is None
        assert fast_out == plain_out and [value for _, value, _, _ in fast_out] == [
            _fastavro(v) for v in values if v is not values[17]
        ]
    else:
        assert (fast.error.stage, fast.error.offset) == (plain.error.stage, plain.error.offset) == ("producer", 17)
        # what came before the bad record was produced on both paths, nothing after it
        assert fast_out == plain_out and [value for _, value, _, _ in fast_out] == [_fastavro(v) for v in values[:17]]


def test_keys_the_bytes_serializer_converts_are_serialized_per_record(app_factory, kafka):
    """A key that is neither bytes nor str (here an int) takes the per-record path for its
    record, where the bytes serializer refuses it (skipped here by ``on_producer_error``); the
    other outputs of the chunk are encoded at once."""
    values = _inputs(30, seed=3)
    str_keyed = [v for v in values if v["id"] % 5]
    assert 0 < len(str_keyed) < len(values)

    def build(sdf: Any) -> Any:
        return sdf.apply(lambda v: v)

    runs = []
    for plain in ((), ("avro-output-chunks",)):
        out = kafka.new_topic()
        app = app_factory(on_producer_error=lambda exc, row, logger: True)
        sdf = build(app.dataframe(app.topic("in")))
        sdf.to_topic(
            app.topic(out, value_serializer=AvroSerializer(OUT)), key=lambda v: v["id"] if v["id"] % 5 == 0 else v["name"]
        )
        processor = task_processor(app, plain=plain)
        processor.process(_records(values))
        summary = processor.finish()
        assert summary.error is None
        runs.append([(m.key(), m.value()) for m in kafka.consume(out, expected=len(str_keyed))])
    assert runs[0] == runs[1]
    assert runs[0] == [(v["name"].encode(), _fastavro(v)) for v in str_keyed]


def test_values_changed_after_they_were_sent_go_out_as_they_were_sent(app_factory, kafka):
    """A step after ``to_topic`` that changes the value in place, and an ``apply`` that hands
    out one dict it updates for every record: each output is the value as it was sent."""
    values = _inputs(50, seed=4)
    shared: dict[str, Any] = {}

    def same_dict(value: dict[str, Any]) -> dict[str, Any]:
        shared.update(value)
        return shared

    def build(sdf: Any) -> Any:
        return sdf.apply(same_dict)

    runs = []
    for plain in ((), ("avro-output-chunks",)):
        out = kafka.new_topic()
        app = app_factory()
        sdf = build(app.dataframe(app.topic("in")))
        sdf = sdf.to_topic(app.topic(out, value_serializer=AvroSerializer(OUT)))
        sdf["temp"] = sdf["temp"] * 2  # after the output
        processor = task_processor(app, plain=plain)
        assert ("avro-output-chunks" in processor.plan.strategies) is not bool(plain)
        processor.process(_records(values))
        assert processor.finish().error is None
        runs.append([m.value() for m in kafka.consume(out, expected=len(values))])
    assert runs[0] == runs[1] == [_fastavro(v) for v in values]


@pytest.mark.parametrize("skip", [True, False])
def test_a_producer_error_of_a_kept_output_is_its_own_records(app_factory, kafka, skip):
    """A message too large for the producer, kept with 5,000 others (so that the kept outputs
    are sent while a later record runs): ``on_producer_error`` then ``on_processing_error`` get
    it with its own offset, as on the plain path, and the outputs after it are still produced
    when it is skipped."""
    seen: list[tuple[str, str, int]] = []

    def on_producer_error(exc: Exception, row: Any, logger: Any) -> bool:
        seen.append(("producer", type(exc).__name__, row.offset))
        return False

    def on_processing_error(exc: Exception, row: Any, logger: Any) -> bool:
        seen.append(("processing", type(exc).__name__, row.offset))
        return skip

    values = _inputs(5000, seed=5)
    values[100]["name"] = "x" * 2_000_000  # past the producer's message.max.bytes
    runs = _run_both(
        app_factory,
        kafka,
        lambda sdf: sdf,
        [_records(values)],
        expected=4999 if skip else 100,
        on_processing_error=on_processing_error,
        on_producer_error=on_producer_error,
    )
    (fast, fast_out), (plain, plain_out) = runs
    assert seen == [("producer", "KafkaException", 100), ("processing", "KafkaException", 100)] * 2
    assert fast_out == plain_out
    if skip:
        assert fast.error is None and fast.skipped == plain.skipped == 1
        assert len(fast_out) == 4999
    else:
        assert (fast.error.stage, fast.error.offset) == (plain.error.stage, plain.error.offset) == ("producer", 100)
        assert len(fast_out) == 100


def test_an_encoder_that_fails_leaves_the_chunk_to_the_per_record_path(app_factory, kafka, monkeypatch):
    def broken(self: ArrowAvroEncoder, values: Any) -> Any:
        raise RuntimeError("unexpected")

    monkeypatch.setattr(ArrowAvroEncoder, "encode", broken)
    values = _inputs(30, seed=6)
    (fast, fast_out), (plain, plain_out) = _run_both(app_factory, kafka, lambda sdf: sdf, [_records(values)], expected=30)
    assert fast.error is None and plain.error is None
    assert fast_out == plain_out and [value for _, value, _, _ in fast_out] == [_fastavro(v) for v in values]


def test_the_encoder_gives_fastavros_bytes_for_random_records():
    schema = fastavro.parse_schema(OUT)
    encoder = ArrowAvroEncoder.for_schema(schema)
    assert encoder is not None
    for seed in range(30):
        values = _inputs(random.Random(seed).randint(1, 300), seed=seed)
        assert encoder.encode(values) == [_fastavro(v) for v in values]


def test_both_paths_on_spark_give_the_same_topic_exactly_once(make_app, kafka, spark, monkeypatch):
    import json

    values = _inputs(600, seed=11)
    src = kafka.new_topic(partitions=2)
    kafka.produce(
        src, [{"value": json.dumps(v).encode(), "key": str(i).encode(), "partition": i % 2} for i, v in enumerate(values)]
    )
    produced = {}
    for plain in ((), ("avro-output-chunks",)):
        monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=plain))
        out = kafka.new_topic()
        app = make_app(processing_guarantee="exactly-once")
        sdf = app.dataframe(app.topic(src))
        sdf = sdf[sdf["temp"] > 0]
        sdf.to_topic(app.topic(out, value_serializer=AvroSerializer(OUT)))
        expected = sum(v["temp"] > 0 for v in values)
        app.run(count=expected, timeout=60)
        messages = kafka.consume(out, expected=expected, isolation="read_committed")
        produced[plain] = sorted((m.key(), m.value()) for m in messages)
        assert len(produced[plain]) == expected
    assert produced[()] == produced[("avro-output-chunks",)]
    assert sorted(value for _, value in produced[()]) == sorted(_fastavro(v) for v in values if v["temp"] > 0)
