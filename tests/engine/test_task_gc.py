"""Spark tasks run with the worker GC thresholds (tasks hold many live objects until they end;
CPython's default thresholds make every full collection walk them all again)."""

from __future__ import annotations

import gc
import json

from streamspark.engine.task_entry import WORKER_GC_THRESHOLDS


def _thresholds(value):
    return {**value, "gc": list(gc.get_threshold())}


def _thresholds_stateful(value, state):
    state.set("seen", True)
    return _thresholds(value)


def test_stateless_and_stateful_tasks_use_the_worker_gc_thresholds(make_app, kafka):
    assert WORKER_GC_THRESHOLDS != (700, 10, 10)  # not CPython's defaults
    src = kafka.new_topic(partitions=2)
    kafka.produce(src, [{"value": json.dumps({"v": i}).encode(), "key": f"k{i}".encode(), "partition": i % 2} for i in range(6)])
    for step in (_thresholds, _thresholds_stateful):
        app = make_app()
        app.dataframe(app.topic(src)).apply(step, stateful=step is _thresholds_stateful)
        rows = app.run(count=6, timeout=60)
        assert len(rows) == 6
        assert {tuple(r["gc"]) for r in rows} == {WORKER_GC_THRESHOLDS}
