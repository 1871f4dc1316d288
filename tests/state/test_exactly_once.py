"""processing_guarantee="exactly-once": transactions per unit, markers, kill -9 harness."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from streamspark.engine._eos import CHECKPOINT_ID_FILE

from .test_stateful_e2e import count

APP = Path(__file__).with_name("eos_app.py")


def test_exactly_once_outputs_are_transactional(make_app, kafka):
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(
        src, [{"value": json.dumps({"i": i}).encode(), "key": f"k{i % 3}".encode(), "partition": i % 2} for i in range(30)]
    )
    app = make_app(processing_guarantee="exactly-once")
    app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
    rows = app.run(count=30, timeout=60)
    assert len(rows) == 30
    committed = [json.loads(m.value()) for m in kafka.consume(out, expected=30, isolation="read_committed")]
    assert sorted(v["i"] for v in committed) == list(range(30))


def test_a_new_checkpoint_under_the_same_consumer_group_produces_its_outputs(make_app, kafka, tmp_path):
    """Batch ids start again at 0 in a new checkpoint (``clear_state()``, another ``state_dir``):
    the markers of the old checkpoint's batches must not make it skip its outputs."""
    src, out = kafka.new_topic(), kafka.new_topic()
    group = f"eos-new-checkpoint-{uuid.uuid4().hex[:8]}"

    def run(first: int) -> None:
        kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "key": b"k"} for i in range(first, first + 10)])
        app = make_app(consumer_group=group, state_dir=str(tmp_path / "state"), processing_guarantee="exactly-once")
        app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
        app.run(count=10, timeout=60)
        app.clear_state()  # the next run starts a new checkpoint, from the group's committed offsets

    run(0)
    run(10)
    committed = [json.loads(m.value()) for m in kafka.consume(out, expected=20, isolation="read_committed")]
    assert sorted(v["i"] for v in committed) == list(range(20))
    # the second checkpoint's state started afresh: its count starts at 1 again
    assert sorted(v["n"] for v in committed if v["i"] >= 10) == list(range(1, 11))


def test_a_checkpoint_started_at_least_once_keeps_apart_from_earlier_markers(make_app, kafka, tmp_path):
    """A checkpoint gets its identity on its first run under either guarantee: switching it to
    exactly-once later does not read the markers an earlier checkpoint of the group left."""
    src, out = kafka.new_topic(), kafka.new_topic()
    group = f"eos-switch-{uuid.uuid4().hex[:8]}"

    def run(first: int, guarantee: str) -> Any:
        kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "key": b"k"} for i in range(first, first + 5)])
        app = make_app(consumer_group=group, state_dir=str(tmp_path / "state"), processing_guarantee=guarantee)
        app.dataframe(app.topic(src)).apply(count, stateful=True).to_topic(app.topic(out))
        app.run(count=5, timeout=60)
        return app

    # a checkpoint started by an earlier version: its markers are in the group without identity
    checkpoint = make_app(consumer_group=group, state_dir=str(tmp_path / "state")).checkpoint_dir
    checkpoint.mkdir(parents=True)
    (checkpoint / CHECKPOINT_ID_FILE).write_text("\n")
    for first in (0, 5):  # it leaves markers of its first batches
        run(first, "exactly-once")
    run(10, "exactly-once").clear_state()
    run(15, "at-least-once")  # a new checkpoint, batch 0
    run(20, "exactly-once")  # the same checkpoint, batch 1: its outputs must be produced
    committed = [json.loads(m.value()) for m in kafka.consume(out, expected=25, isolation="read_committed")]
    assert sorted(v["i"] for v in committed) == list(range(25))


def _run_harness(broker, kafka, tmp_path, guarantee, total, kills, seed, master="local[2]", mode="stateful"):
    src, out = kafka.new_topic(partitions=4), kafka.new_topic(partitions=2)
    keys = 200
    kafka.produce(
        src,
        [
            {
                "value": json.dumps({"k": f"k{i % keys}", "i": i}).encode(),
                "key": f"k{i % keys}".encode(),
                "partition": (i % keys) % 4,
            }
            for i in range(total)
        ],
    )
    # a group of its own: exactly-once recognises an earlier attempt's committed outputs by the
    # consumer group, so harnesses sharing the test broker must not share one
    state, group = str(tmp_path / "state"), f"harness-{guarantee}-{mode}-{uuid.uuid4().hex[:8]}"
    log = open(tmp_path / "app.log", "ab")
    rnd = random.Random(seed)

    def start(max_records=500):
        return subprocess.Popen(
            [sys.executable, str(APP), broker.address, src, out, state, group, guarantee, str(max_records), master, mode],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def outputs():
        msgs = kafka.consume(out, expected=10**9, timeout=2, isolation="read_committed")
        return [json.loads(m.value()) for m in msgs]

    def produced() -> int:
        return sum(kafka.high_watermarks(out).values())

    def input_done() -> bool:
        """Every input has its output (read_committed): a run started now has nothing left to
        produce. (Fast batches can finish the input before the schedule's last kill.)"""
        return produced() >= total and len({v["i"] for v in outputs()}) >= total

    mid_run = 0
    for kill in range(kills):
        proc = start()
        before = produced()
        if kill % 2 == 0:
            # kill while it processes: once this run has produced something, after a random delay
            # (so kills land before, during and after transaction and checkpoint commits)
            # (generous: on 2 cores a standalone cluster's executors start beside another harness)
            deadline = time.monotonic() + 240
            checked = time.monotonic()
            while produced() == before and time.monotonic() < deadline and proc.poll() is None:
                if time.monotonic() - checked > 10:
                    if input_done():
                        break
                    checked = time.monotonic()
                time.sleep(0.5)
            time.sleep(rnd.uniform(0, 3))
        else:
            # kill at a random moment of the start-up or the first micro-batch (offset log written,
            # state store opening, transactions begun), whatever has or has not happened yet
            time.sleep(rnd.uniform(2, 20))
        mid_run += produced() > before
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    # at least every other kill landed after its run had produced (mid-processing)
    assert mid_run >= kills // 2, (mid_run, (tmp_path / "app.log").read_text()[-3000:])
    proc = start(max_records=5000)
    deadline = time.monotonic() + 300
    got: list[dict] = []
    while time.monotonic() < deadline:
        got = outputs()
        if len({v["i"] for v in got}) >= total:
            break
        assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
        time.sleep(3)
    time.sleep(3)
    got = outputs()
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(120)
    log.close()
    text = (tmp_path / "app.log").read_text()
    print(f"{guarantee}: {text.count('already committed')} unit(s) skipped on replay after {kills} kills")
    return got, keys


def _assert_each_input_once_and_counted(got: list[dict], total: int, keys: int) -> None:
    """Every input's output once under read_committed, and each of ``keys`` keys counted 1..N."""
    ids = [v["i"] for v in got]
    assert len(set(ids)) == total, f"lost {total - len(set(ids))} inputs"
    assert len(ids) == total, f"{len(ids) - total} duplicate outputs under read_committed"
    per_key = defaultdict(list)
    for v in got:
        per_key[v["k"]].append(v["n"])
    assert len(per_key) == keys
    assert all(sorted(ns) == list(range(1, total // keys + 1)) for ns in per_key.values())


@pytest.mark.harness(seconds=320)
def test_kill_9_ten_times_exactly_once_no_loss_no_duplicates(broker, kafka, tmp_path):
    total = 100_000
    got, keys = _run_harness(broker, kafka, tmp_path, "exactly-once", total=total, kills=10, seed=7)
    _assert_each_input_once_and_counted(got, total, keys)


@pytest.mark.harness(seconds=150)
def test_kill_9_after_a_group_by_exactly_once_no_loss_no_duplicates(broker, kafka, tmp_path):
    """The fused group_by path: the source task's transaction (the steps before the group_by)
    and the state buckets' (the count per new key) survive kill -9 like any stateful step."""
    total = 20_000
    got, _ = _run_harness(broker, kafka, tmp_path, "exactly-once", total=total, kills=4, seed=5, mode="group_by")
    _assert_each_input_once_and_counted(got, total, keys=20)


@pytest.mark.harness(seconds=145)
def test_kill_9_at_least_once_loses_nothing_and_counts_duplicates(broker, kafka, tmp_path):
    total = 10_000
    got, keys = _run_harness(broker, kafka, tmp_path, "at-least-once", total=total, kills=3, seed=11)
    ids = [v["i"] for v in got]
    assert len(set(ids)) == total
    duplicates = len(ids) - total
    print(f"at-least-once with 3 kills: {duplicates} duplicate outputs of {total}")
    # state itself is exactly-once (Spark's checkpoint): a replayed output repeats the same count
    by_input = {}
    for v in got:
        assert by_input.setdefault(v["i"], v["n"]) == v["n"]
