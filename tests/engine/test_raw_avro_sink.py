"""A topic whose schemaless Avro values go straight into the lake sink: tasks hand the sink whole
chunks of raw values (``BaseSink.add_raw_avro``), decoded into Arrow at once, and the files are
those of the per-record path (``AvroDeserializer`` record by record).

These tests drive the task code (``TaskProcessor``) in this process, without Spark, as
``test_raw_json_sink.py`` does; the path through Spark is covered in
``tests/sinks/datalake/test_lake_e2e.py``.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pytest

from streamspark import Application
from streamspark.models.serializers.avro import AvroDeserializer
from streamspark.sinks.datalake import TSDataLakeSink

from .lake_tasks import lake_sink, partition_files, task_processor

HOUR_MS = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z

SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "ts", "type": "long"},
        {"name": "temp", "type": "double"},
        {"name": "site", "type": "string"},
        {"name": "flag", "type": ["null", "boolean"], "default": None},
        {"name": "level", "type": "int"},
    ],
}
PARSED = fastavro.parse_schema(SCHEMA)


def _encode(record: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, PARSED, record)
    return buffer.getvalue()


def _readings(n: int) -> list[dict[str, Any]]:
    return [
        {
            "ts": T0 + (i % 5) * HOUR_MS // 2 + i,
            "temp": 20.5 + i,
            "site": ["north", "süd", "東"][i % 3],
            "flag": None if i % 2 else i % 4 == 0,
            "level": i - 20,
        }
        for i in range(n)
    ]


def _records(values: list[Any], start: int = 0) -> list[tuple[Any, ...]]:
    """Source records as the Kafka reader gives them (topic, partition, offset, timestamp,
    timestamp type, key, value, headers)."""
    return [
        ("in", 0, start + i, T0 + i, 1, f"k{i % 3}".encode(), v if isinstance(v, bytes) else _encode(v), None)
        for i, v in enumerate(values)
    ]


def _topic(app: Application, **kwargs: Any) -> Any:
    return app.topic("in", value_deserializer=AvroDeserializer(SCHEMA, **kwargs))


def test_raw_avro_chunks_give_the_files_of_the_per_record_path(app_factory, tmp_path):
    values = _readings(40)
    fast_app, plain_app = app_factory(), app_factory()
    fast_sink, plain_sink = lake_sink(tmp_path / "fast"), lake_sink(tmp_path / "plain")
    fast_app.dataframe(_topic(fast_app)).sink(fast_sink)
    plain_app.dataframe(_topic(plain_app)).sink(plain_sink)

    fast, plain = task_processor(fast_app), task_processor(plain_app, plain=("raw-sink-chunks",))
    assert set(fast.raw_sinks) == {"in"} and fast.raw_sinks["in"].avro is not None and not plain.raw_sinks
    for processor in (fast, plain):
        processor.process(_records(values[:25]))
        processor.process(_records(values[25:], start=25))
    sink = fast.sinks[fast.raw_sinks["in"].node_id]
    assert len(sink._chunks) == 2 and not sink._rows  # the sink took both chunks whole
    fast_summary, plain_summary = fast.finish(), plain.finish()
    assert fast_summary.error is None and plain_summary.error is None
    assert (fast_summary.input_count, fast_summary.output_count) == (40, 40)
    assert (plain_summary.input_count, plain_summary.output_count) == (40, 40)

    fast_files, plain_files = partition_files(tmp_path / "fast"), partition_files(tmp_path / "plain")
    assert len(fast_files) == 3  # three hours
    assert fast_files == plain_files
    rows = fast_sink.catalog.load_table().scan().to_arrow().to_pylist()
    assert sorted((r["ts"], r["level"], r["site"]) for r in rows) == sorted((v["ts"], v["level"], v["site"]) for v in values)


@pytest.mark.parametrize("skip", [False, True])
def test_a_malformed_avro_message_is_reported_as_on_the_per_record_path(app_factory, tmp_path, skip):
    """The chunk holding it is refused: its records go one by one, so the error names the
    message (or ``on_consumer_error`` skips it) exactly as without the chunk path."""
    seen: list[tuple[Any, ...]] = []

    def on_consumer_error(exc: Exception, message: Any, logger: Any) -> bool:
        seen.append((type(exc).__name__, message.offset()))
        return skip

    app = app_factory(on_consumer_error=on_consumer_error)
    sink = lake_sink(tmp_path / "lake")
    app.dataframe(_topic(app)).sink(sink)
    processor = task_processor(app)
    values: list[Any] = _readings(6)
    processor.process(_records(values[:3]))  # a good chunk: taken whole
    values[4] = _encode(values[4])[:3]  # cut short
    processor.process(_records(values[3:], start=3))
    summary = processor.finish()
    assert seen == [("SerializationError", 4)]
    if skip:
        assert summary.error is None and summary.skipped == 1
        rows = sink.catalog.load_table().scan().to_arrow().to_pylist()
        assert sorted(r["level"] + 20 for r in rows) == [0, 1, 2, 3, 5]
    else:
        error = summary.error
        assert error is not None and (error.stage, error.offset) == ("consumer", 4)
        assert sink.catalog.load_table() is None  # nothing written from the failed task


def test_a_record_with_trailing_bytes_is_read_as_fastavro_reads_it(app_factory, tmp_path):
    """fastavro ignores bytes after a record; the chunk decoder refuses the chunk, and the
    per-record path then writes what it reads."""
    app = app_factory()
    sink = lake_sink(tmp_path / "lake")
    app.dataframe(_topic(app)).sink(sink)
    processor = task_processor(app)
    values: list[Any] = _readings(3)
    values[1] = _encode(values[1]) + b"\x00\x00"
    processor.process(_records(values))
    assert processor.finish().error is None
    rows = sink.catalog.load_table().scan().to_arrow().to_pylist()
    assert sorted(r["level"] for r in rows) == [-20, -19, -18]


@pytest.mark.parametrize("case", ["reader_schema", "record_name", "key", "step"])
def test_anything_but_a_plain_avro_read_keeps_the_per_record_path(app_factory, tmp_path, case):
    app = app_factory()
    kwargs: dict[str, Any] = {"reader_schema": SCHEMA} if case == "reader_schema" else {}
    if case == "record_name":
        kwargs["return_record_name"] = True
    topic = app.topic(
        "in", value_deserializer=AvroDeserializer(SCHEMA, **kwargs), key_deserializer="str" if case == "key" else "bytes"
    )
    sdf = app.dataframe(topic)
    if case == "step":
        sdf = sdf.apply(lambda v: v)
    sdf.sink(lake_sink(tmp_path / "lake"))
    processor = task_processor(app)
    assert processor.raw_sinks == {}
    processor.process(_records(_readings(2)))
    summary = processor.finish()
    assert summary.error is None and summary.output_count == 2


class _RefuseAfterBackpressure(TSDataLakeSink):
    """Takes raw chunks until its first flush, which asks for backpressure; refuses them after,
    so the records it is fed again go one by one. Keeps the headers ``add`` got."""

    pushed = False
    headers_seen: list[Any] = []

    def add_raw_avro(self, values, keys, timestamps, decoder):
        return not self.pushed and super().add_raw_avro(values, keys, timestamps, decoder)

    def add(self, value, key, timestamp, headers, topic, partition, offset):
        self.headers_seen.append(headers)
        super().add(value, key, timestamp, headers, topic, partition, offset)

    def flush(self) -> None:
        if not self.pushed:
            self.pushed = True
            from streamspark.sinks.base.exceptions import SinkBackpressureError

            raise SinkBackpressureError(retry_after=0)
        super().flush()


def test_a_chunk_fed_again_record_by_record_gets_its_headers_decoded(app_factory, tmp_path):
    """After backpressure a sink may refuse the chunk it took: its records then go one by one,
    with their headers as a list (they crossed the JVM pickled)."""
    import pickle

    app = app_factory()
    sink = _RefuseAfterBackpressure(
        s3_prefix=str(tmp_path / "lake"), table_name="t", hive_columns=["year"], timestamp_column="ts"
    )
    sink.headers_seen = []
    app.dataframe(_topic(app)).sink(sink)
    processor = task_processor(app)
    records = [(*r[:7], pickle.dumps([("h", b"1")])) for r in _records(_readings(4))]
    processor.process(records)
    summary = processor.finish()
    assert summary.error is None
    started = processor.sinks[processor.raw_sinks["in"].node_id]
    assert started.headers_seen == [[("h", b"1")]] * 4
    rows = started.catalog.load_table().scan().to_arrow().to_pylist()
    assert sorted(r["level"] for r in rows) == [-20, -19, -18, -17]
