"""A join under exactly-once survives kill -9 and restarts: every left record is joined and
produced once, with the right-side state it had (restored from Spark's checkpoint)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

APP = Path(__file__).with_name("join_crash_app.py")
KEYS, READINGS, EVERY = 20, 6000, 100
BASE = 1_700_000_000_000


def _key(n):
    return f"d{n % KEYS}"


def _expected():
    """The version each reading must get: the latest config of its key at or before it."""
    configs = {}
    for j in range(READINGS // EVERY):
        configs.setdefault(_key(j), []).append((BASE + j * EVERY * 10 - 5, j))
    expected = {}
    for i in range(READINGS):
        ts = BASE + i * 10
        versions = [v for t, v in configs.get(_key(i), []) if t <= ts]
        expected[i] = versions[-1] if versions else None
    return expected


@pytest.mark.harness(seconds=150)
def test_join_asof_kill_9_three_times_then_restart_joins_every_reading_once(broker, kafka, tmp_path):
    left, right, out = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2), kafka.new_topic()
    # configs first (sparse: one per 100 readings, just before them in event time), then readings
    kafka.produce(
        right,
        [
            {
                "value": json.dumps({"version": j}).encode(),
                "key": _key(j).encode(),
                "partition": (j % KEYS) % 2,
                "timestamp": BASE + j * EVERY * 10 - 5,
            }
            for j in range(READINGS // EVERY)
        ],
    )
    kafka.produce(
        left,
        [
            {
                "value": json.dumps({"i": i}).encode(),
                "key": _key(i).encode(),
                "partition": (i % KEYS) % 2,
                "timestamp": BASE + i * 10,
            }
            for i in range(READINGS)
        ],
    )
    state, group = str(tmp_path / "state"), "join-harness"
    log = open(tmp_path / "app.log", "ab")
    rnd = random.Random(5)

    def start(max_records):
        return subprocess.Popen(
            [sys.executable, str(APP), broker.address, left, right, out, state, group, str(max_records)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def produced():
        return sum(kafka.high_watermarks(out).values())

    def app_log():
        return (tmp_path / "app.log").read_text()[-3000:]

    mid_run = 0
    for _ in range(3):
        proc = start(200)
        before, deadline = produced(), time.monotonic() + 240
        while produced() == before and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        time.sleep(rnd.uniform(0, 2))
        mid_run += produced() > before
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert mid_run >= 2, app_log()
    proc = start(5000)
    deadline, got = time.monotonic() + 240, []
    while time.monotonic() < deadline:
        got = [json.loads(m.value()) for m in kafka.consume(out, expected=READINGS, timeout=3, isolation="read_committed")]
        if len(got) >= READINGS:
            break
        assert proc.poll() is None, app_log()
        time.sleep(2)
    time.sleep(2)
    got = [json.loads(m.value()) for m in kafka.consume(out, expected=10**9, timeout=3, isolation="read_committed")]
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(120)
    log.close()
    ids = [v["i"] for v in got]
    assert len(set(ids)) == READINGS, f"lost {READINGS - len(set(ids))} readings"
    assert len(ids) == READINGS, f"{len(ids) - READINGS} duplicate outputs under read_committed"
    expected = _expected()
    wrong = [(v["i"], v.get("version"), expected[v["i"]]) for v in got if v.get("version") != expected[v["i"]]]
    assert not wrong, f"{len(wrong)} readings joined with the wrong config, e.g. {wrong[:5]}"
