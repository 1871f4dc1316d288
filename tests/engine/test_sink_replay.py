"""After a sink's backpressure the task feeds it again what it took: a record the sink refused
in ``add`` (a processing error that ``on_processing_error`` skipped) is not fed to it again.
Task code in this process, without Spark."""

from __future__ import annotations

import json
from typing import Any

from streamspark.sinks import BatchingSink, SinkBackpressureError

from .lake_tasks import task_processor


class _DictOnlyOnceBusy(BatchingSink):
    """Refuses non-dict values in ``add`` and asks for backpressure at its first write."""

    def __init__(self) -> None:
        super().__init__()
        self.busy = True
        self.written: list[Any] = []

    def add(self, value: Any, key: Any, timestamp: int, headers: Any, topic: str, partition: int, offset: int) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"dicts only, got {type(value).__name__}")
        super().add(value, key, timestamp, headers, topic, partition, offset)

    def write(self, batch: Any) -> None:
        if self.busy:
            self.busy = False
            raise SinkBackpressureError(retry_after=0)
        self.written.extend(item.value for item in batch)


def test_a_refused_record_is_not_fed_again_after_backpressure(app_factory):
    skipped: list[Any] = []

    def on_processing_error(exc: Exception, row: Any, logger: Any) -> bool:
        skipped.append(type(exc).__name__)
        return True

    app = app_factory(on_processing_error=on_processing_error)
    sink = _DictOnlyOnceBusy()
    app.dataframe(app.topic("in")).sink(sink)
    processor = task_processor(app)
    values = [{"i": 0}, 5, {"i": 2}]
    processor.process([("in", 0, i, 1_000 + i, 1, b"k", json.dumps(v).encode(), None) for i, v in enumerate(values)])
    summary = processor.finish()
    assert summary.error is None, summary.error
    assert skipped == ["TypeError"]
    started = processor.sinks[next(iter(processor.sinks))]  # the task's own copy of the sink
    assert started.written == [{"i": 0}, {"i": 2}]


class _BusyWithoutADelay(BatchingSink):
    def write(self, batch: Any) -> None:
        raise SinkBackpressureError(retry_after=None)  # type: ignore[arg-type]


def test_backpressure_without_a_number_of_seconds_fails_the_task_clearly(app_factory):
    app = app_factory()
    app.dataframe(app.topic("in")).sink(_BusyWithoutADelay())
    processor = task_processor(app)
    processor.process([("in", 0, 0, 1_000, 1, b"k", b'{"i": 0}', None)])
    summary = processor.finish()
    assert summary.error is not None
    assert "retry_after=None; it must be a number of seconds" in str(summary.error)
