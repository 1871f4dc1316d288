"""A topic whose JSON values go straight into the lake sink: tasks hand the sink whole chunks of
raw values (``BaseSink.add_raw_json``), and the files are those of the per-record path.

These tests drive the task code (``TaskProcessor``) in this process, without Spark: the sink
then writes and registers on each flush as it does outside a query. The path through Spark is
covered in ``tests/sinks/datalake/test_lake_e2e.py``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from streamspark.models.serializers import JSONDeserializer
from streamspark.sinks.base.exceptions import SinkBackpressureError
from streamspark.sinks.core.list import ListSink
from streamspark.sinks.datalake import TSDataLakeSink

from .lake_tasks import lake_sink, partition_files, task_processor

HOUR_MS = 3_600_000
T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z


def _records(values: list[Any], topic: str = "in", start: int = 0) -> list[tuple[Any, ...]]:
    """Source records as the Kafka reader gives them: (topic, partition, offset, timestamp,
    timestamp type, key, value, headers)."""
    return [
        (
            topic,
            0,
            start + i,
            T0 + i,
            1,
            f"k{i % 3}".encode(),
            v if isinstance(v, bytes) or v is None else json.dumps(v).encode(),
            None,
        )
        for i, v in enumerate(values)
    ]


def _readings(n: int) -> list[dict[str, Any]]:
    return [
        {
            "ts": T0 + (i % 5) * HOUR_MS // 2 + i,
            "temp": 20 + i if i % 4 else 20.5 + i,
            "site": f"s{i % 2}",
            **({"flag": i % 3 == 0} if i % 2 else {}),
        }
        for i in range(n)
    ]


def test_raw_chunks_give_the_files_of_the_per_record_path(app_factory, tmp_path):
    values = _readings(40)
    fast_app, plain_app = app_factory(), app_factory()
    fast_sink, plain_sink = lake_sink(tmp_path / "fast"), lake_sink(tmp_path / "plain")
    fast_app.dataframe(fast_app.topic("in")).sink(fast_sink)
    plain_app.dataframe(plain_app.topic("in")).filter(lambda v: True).sink(plain_sink)  # a step: per record

    fast, plain = task_processor(fast_app), task_processor(plain_app)
    assert set(fast.raw_sinks) == {"in"} and not plain.raw_sinks
    for processor in (fast, plain):
        processor.process(_records(values[:25]))
        processor.process(_records(values[25:], start=25))
    sink = fast.sinks[fast.raw_sinks["in"][0]]
    assert len(sink._chunks) == 2 and not sink._rows  # the sink took both chunks whole
    fast_summary, plain_summary = fast.finish(), plain.finish()
    assert fast_summary.error is None and plain_summary.error is None
    assert (fast_summary.input_count, fast_summary.output_count) == (40, 40)
    assert (plain_summary.input_count, plain_summary.output_count) == (40, 40)

    fast_files, plain_files = partition_files(tmp_path / "fast"), partition_files(tmp_path / "plain")
    assert len(fast_files) == 3  # three hours
    assert fast_files == plain_files
    rows = fast_sink.catalog.load_table().scan().to_arrow().to_pylist()
    assert sorted(r["ts"] for r in rows) == sorted(v["ts"] for v in values)


@pytest.mark.parametrize("skip", [False, True])
def test_a_malformed_message_is_reported_as_on_the_per_record_path(app_factory, tmp_path, skip):
    """The chunk holding it is refused: its records go one by one, so the error names the
    message (or ``on_consumer_error`` skips it) exactly as without the chunk path."""
    seen: list[tuple[Any, ...]] = []

    def on_consumer_error(exc: Exception, message: Any, logger: Any) -> bool:
        seen.append((type(exc).__name__, message.offset()))
        return skip

    app = app_factory(on_consumer_error=on_consumer_error)
    sink = lake_sink(tmp_path / "lake")
    app.dataframe(app.topic("in")).sink(sink)
    processor = task_processor(app)
    values: list[Any] = [{"ts": T0 + i, "i": i} for i in range(6)]
    processor.process(_records(values[:3]))  # a good chunk: taken whole
    values[4] = b'{"ts": 1, "i": '  # cut short
    processor.process(_records(values[3:], start=3))
    summary = processor.finish()
    assert seen == [("SerializationError", 4)]  # as the reference: every decode failure
    if skip:
        assert summary.error is None and summary.skipped == 1
        rows = sink.catalog.load_table().scan().to_arrow().to_pylist()
        assert sorted(r["i"] for r in rows) == [0, 1, 2, 3, 5]
    else:
        error = summary.error
        assert error is not None and (error.stage, error.offset) == ("consumer", 4)
        assert sink.catalog.load_table() is None  # nothing written from the failed task


def test_a_non_object_value_fails_in_the_sink_as_before(app_factory, tmp_path):
    app = app_factory()
    app.dataframe(app.topic("in")).sink(lake_sink(tmp_path / "lake"))
    processor = task_processor(app)
    processor.process(_records([{"ts": T0}, 42, {"ts": T0}]))
    error = processor.finish().error
    assert error is not None and (error.stage, error.offset) == ("processing", 1)
    assert "dict values only" in error.message


def _no_extractor(value: Any, headers: Any, timestamp: int, timestamp_type: Any) -> int:
    return timestamp


@pytest.mark.parametrize("case", ["step", "collect", "loads", "key", "extractor", "sink"])
def test_anything_between_the_values_and_the_sink_keeps_the_per_record_path(app_factory, tmp_path, case):
    app = app_factory()
    topic_args: dict[str, Any] = {
        "loads": {"value_deserializer": JSONDeserializer(loads=json.loads)},
        "key": {"key_deserializer": "str"},
        "extractor": {"timestamp_extractor": _no_extractor},
    }.get(case, {})
    sdf = app.dataframe(app.topic("in", **topic_args))
    if case == "step":
        sdf = sdf.apply(lambda v: v)
    sdf.sink(ListSink() if case == "sink" else lake_sink(tmp_path / "lake"))
    processor = task_processor(app, collect=case == "collect")
    assert processor.raw_sinks == {}
    processor.process(_records([{"ts": T0, "i": 1}]))
    summary = processor.finish()
    assert summary.error is None and summary.output_count == 1


def test_on_message_processed_sees_every_offset_of_a_raw_chunk(app_factory, tmp_path):
    offsets: list[int] = []
    app = app_factory(on_message_processed=lambda topic, partition, offset: offsets.append(offset))
    app.dataframe(app.topic("in")).sink(lake_sink(tmp_path / "lake"))
    processor = task_processor(app)
    assert processor.raw_sinks
    processor.process(_records([{"ts": T0 + i} for i in range(5)], start=10))
    assert offsets == [10, 11, 12, 13, 14]


class _PushBackOnce(TSDataLakeSink):
    """Asks for backpressure on its first flush."""

    pushed: Optional[int] = None

    def flush(self) -> None:
        if self.pushed is None:
            self.pushed = len(self._chunks)
            raise SinkBackpressureError(retry_after=0)
        super().flush()


def test_backpressure_feeds_the_raw_chunks_again(app_factory, tmp_path):
    app = app_factory()
    sink = _PushBackOnce(s3_prefix=str(tmp_path / "lake"), table_name="t", hive_columns=["year"], timestamp_column="ts")
    app.dataframe(app.topic("in")).sink(sink)
    processor = task_processor(app)
    processor.process(_records([{"ts": T0 + i, "i": i} for i in range(3)]))
    processor.process(_records([{"ts": T0 + i, "i": i} for i in range(3, 6)], start=3))
    summary = processor.finish()
    assert summary.error is None
    started = processor.sinks[processor.raw_sinks["in"][0]]
    assert started.pushed == 2  # both chunks were pending when it pushed back
    rows = started.catalog.load_table().scan().to_arrow().to_pylist()
    assert sorted(r["i"] for r in rows) == [0, 1, 2, 3, 4, 5]  # each once
