"""Micro-batch log lines: INFO at most every interval with the totals since the previous INFO
line, every micro-batch at DEBUG (the consumer lag's lines: tests/engine/test_lag.py)."""

from __future__ import annotations

import logging
import re

import pytest

from streamspark.engine.progress_log import BatchLog, Throttle


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_batches_are_reported_at_info_at_most_every_interval_with_the_totals_since(caplog):
    clock = _Clock()
    log = BatchLog(logging.getLogger("streamspark.test.batches"), interval=10.0, clock=clock)
    with caplog.at_level(logging.DEBUG, logger="streamspark.test.batches"):
        for batch_id, when in enumerate([0.0, 1.0, 2.0, 10.5, 11.0]):
            clock.now = when
            log.batch(batch_id, 100 + batch_id, 50, batch_id % 2, 0.25)
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("INFO", "Batch 0: 100 in, 50 out, 0 skipped in 0.25s"),
        ("DEBUG", "Batch 1: 101 in, 50 out, 1 skipped in 0.25s"),
        ("DEBUG", "Batch 2: 102 in, 50 out, 0 skipped in 0.25s"),
        (
            "INFO",
            "Batch 3: 103 in, 50 out, 1 skipped in 0.25s (3 micro-batches since the last report: 306 in, 150 out, 2 skipped)",
        ),
        ("DEBUG", "Batch 4: 104 in, 50 out, 0 skipped in 0.25s"),
    ]


def test_a_throttle_is_due_first_then_once_per_interval():
    clock = _Clock()
    throttle = Throttle(5.0, clock)
    due = []
    for when in [0.0, 4.9, 5.0, 6.0, 20.0]:
        clock.now = when
        due.append(throttle.due())
    assert due == [True, False, True, False, True]


def test_a_run_ends_with_the_time_its_micro_batches_with_records_took(make_app, kafka, caplog):
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, [{"value": b'{"v": %d}' % i, "partition": i % 2} for i in range(40)])
    app = make_app(loglevel=None)  # the test's own log capture
    app.dataframe(app.topic(src)).apply(lambda v: {"w": v["v"]}).to_topic(app.topic(out))
    with caplog.at_level(logging.DEBUG, logger="streamspark"):
        app.run(count=40, timeout=60)
    messages = [r.getMessage() for r in caplog.records]
    batches = [m for m in (re.match(r"Batch \d+: \d+ in, (\d+) out, \d+ skipped in ([0-9.]+)s", text) for text in messages) if m]
    stops = [
        m
        for m in (
            re.fullmatch(r"Stopped after \d+ batch\(es\): 40 in, (\d+) out, ([0-9.]+)s in micro-batches with data", text)
            for text in messages
        )
        if m
    ]
    assert len(stops) == 1, messages
    assert int(stops[0].group(1)) == 40 == sum(int(m.group(1)) for m in batches)
    seconds = float(stops[0].group(2))
    assert seconds > 0
    assert seconds == pytest.approx(sum(float(m.group(2)) for m in batches), abs=0.01 * len(batches))
