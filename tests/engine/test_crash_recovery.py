"""Kill -9 the whole application (driver, JVM, workers) mid-stream; a restart loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


APP = Path(__file__).with_name("crash_app.py")


def _start(broker, src, out, state, group, log):
    return subprocess.Popen(
        [sys.executable, str(APP), broker.address, src, out, state, group],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=str(Path(__file__).parents[2]),
    )


def _ids(kafka, topic, expected, timeout):
    return [json.loads(m.value())["i"] for m in kafka.consume(topic, expected=expected, timeout=timeout)]


@pytest.mark.harness(seconds=105)
def test_kill_9_mid_stream_then_restart_loses_nothing_and_sigterm_exits_cleanly(broker, kafka, tmp_path):
    src, out = kafka.new_topic(partitions=2), kafka.new_topic(partitions=2)
    state, group = str(tmp_path / "state"), "crash-group"
    total = 1500

    def feed():
        for start in range(0, total, 100):
            kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "partition": i % 2} for i in range(start, start + 100)])
            time.sleep(0.4)

    feeder = threading.Thread(target=feed)
    feeder.start()
    log = open(tmp_path / "app.log", "ab")
    proc = _start(broker, src, out, state, group, log)
    # wait until some output exists, then crash everything in the process group
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(_ids(kafka, out, expected=200, timeout=2)) >= 200:
            break
        assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    produced_before = len(_ids(kafka, out, expected=total, timeout=2))
    assert 0 < produced_before < total * 2
    feeder.join()

    proc = _start(broker, src, out, state, group, log)
    deadline = time.monotonic() + 150
    ids: list[int] = []
    while time.monotonic() < deadline and len(set(ids)) < total:
        ids = _ids(kafka, out, expected=total + produced_before, timeout=3)
    missing = set(range(total)) - set(ids)
    assert not missing, f"lost {len(missing)} records, e.g. {sorted(missing)[:10]}"
    duplicates = len(ids) - len(set(ids))
    print(f"at-least-once after kill -9: {duplicates} duplicate output(s) of {total}")

    # graceful stop: SIGTERM finishes the batch in flight, commits and exits 0
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0
    log.close()
    assert "CLEAN-EXIT" in (tmp_path / "app.log").read_text()
    committed = kafka.committed(group, src)
    assert sum(committed.values()) == total
