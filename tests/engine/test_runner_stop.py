"""Stopping a run whose Spark JVM is already gone (Ctrl+C reaches the JVM too): the stop is
quiet, with no traceback and no warning, and nothing is committed."""

from __future__ import annotations

import logging

from streamspark.engine.runner import QueryRunner

from .plans import query_runner


class _DeadJvmQuery:
    """What a PySpark ``StreamingQuery`` does once its JVM died: every call fails to connect."""

    def __getattr__(self, name):
        raise ConnectionRefusedError(111, "Connection refused")


def _runner() -> QueryRunner:
    return query_runner()


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_stopping_after_the_jvm_died_logs_no_warning():
    runner = _runner()
    runner._last_done_batch = 3  # a batch was processed before the JVM went away
    logger = logging.getLogger("streamspark")  # our logger does not propagate to the root
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        runner._shutdown(_DeadJvmQuery(), drain_timeout=1.0)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    loud = [r for r in handler.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]
    assert any("No last progress to commit on stop" in r.getMessage() for r in handler.records)
