"""StatefulSource: its state survives a kill -9 of its process (or of the whole application);
exactly-once produces each record once, on its topic and in a pipeline's output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Optional

import pytest

from streamspark.models.topics import Topic
from streamspark.sources import SourceException, StatefulSource
from streamspark.sources.base.store import SourceStorePartition, changelog_topic_name
from streamspark.state import StateError

TOTAL = 200
EVERY = 10


class Sequence(StatefulSource):
    """Produces 0..total-1, keeping the next number in its state and flushing every ``every``.

    With ``crash_at``, the process kills itself with SIGKILL once it produced that number
    (after delivering, not committing, what it produced since its last flush)."""

    def __init__(
        self, name: str, total: int = TOTAL, every: int = EVERY, crash_at: Optional[int] = None, pause: float = 0.0
    ) -> None:
        super().__init__(name)
        self.total, self.every, self.crash_at, self.pause = total, every, crash_at, pause

    def run(self) -> None:
        while self.running:
            n = self.state.get("next", 0)
            if n >= self.total:
                return
            self.produce(key=str(n), value=json.dumps({"n": n}).encode())
            self.state.set("next", n + 1)
            if n == self.crash_at:
                self.producer.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            if (n + 1) % self.every == 0:
                self.flush()
            if self.pause:
                time.sleep(self.pause)


def numbers(msgs) -> list[int]:
    return [json.loads(m.value())["n"] for m in msgs]


def crash_then_restart(sources, topic: str, guarantee: str, crash_at: int) -> None:
    first = sources.start(Sequence("seq", crash_at=crash_at), Topic(topic), processing_guarantee=guarantee)
    with pytest.raises(SourceException, match="killed by SIGKILL"):
        sources.wait(first)
    sources.wait(sources.start(Sequence("seq"), Topic(topic), processing_guarantee=guarantee))


def test_exactly_once_a_killed_stateful_source_resumes_and_produces_each_record_once(sources, kafka):
    topic = kafka.new_topic()
    crash_at = 124  # 5 records after the flush at 120
    crash_then_restart(sources, topic, "exactly-once", crash_at)
    committed = numbers(kafka.consume(topic, expected=TOTAL, isolation="read_committed"))
    assert sorted(committed) == list(range(TOTAL))
    # the records after the last flush were delivered before the kill, in the aborted transaction
    raw = Counter(numbers(kafka.consume(topic, expected=TOTAL + 5)))
    assert {n for n, c in raw.items() if c > 1} == set(range(120, crash_at + 1))


def test_at_least_once_a_killed_stateful_source_resumes_from_its_last_flush(sources, kafka):
    topic = kafka.new_topic()
    crash_at = 124
    crash_then_restart(sources, topic, "at-least-once", crash_at)
    counts = Counter(numbers(kafka.consume(topic, expected=TOTAL + 5)))
    assert set(counts) == set(range(TOTAL))
    # only what followed the last flush is produced again, not everything from 0
    assert {n for n, c in counts.items() if c > 1} == set(range(120, crash_at + 1))


def test_exactly_once_after_a_kill_from_outside_at_any_moment(sources, kafka):
    topic, total = kafka.new_topic(), 1000
    first = sources.start(Sequence("seq", total=total, pause=0.01), Topic(topic), processing_guarantee="exactly-once")
    assert len(kafka.consume(topic, expected=60, timeout=30)) >= 60
    os.kill(first.processes[0].pid, signal.SIGKILL)
    with pytest.raises(SourceException, match="killed by SIGKILL"):
        sources.wait(first)
    sources.wait(sources.start(Sequence("seq", total=total), Topic(topic), processing_guarantee="exactly-once"))
    assert sorted(numbers(kafka.consume(topic, expected=total, isolation="read_committed"))) == list(range(total))


def test_the_state_lives_in_a_changelog_topic_of_the_consumer_group(sources, kafka):
    topic = kafka.new_topic()
    sources.wait(sources.start(Sequence("seq", total=25), Topic(topic)))
    changelog = changelog_topic_name(sources.group, "source-seq")
    assert changelog in kafka.admin.list_topics(timeout=10).topics
    # a finished source starts again from its state: nothing more is produced
    sources.wait(sources.start(Sequence("seq", total=25), Topic(topic)))
    assert sorted(numbers(kafka.consume(topic, expected=26, timeout=5))) == list(range(25))


# --- no broker needed ---------------------------------------------------------------------------------


def test_a_state_is_invalidated_by_the_flush_that_committed_it():
    partition = SourceStorePartition("changelog", producer=None, name="seq")
    tx = partition.begin()
    state = tx.as_state()
    assert state.get("next", 0) == 0
    tx.flush()  # nothing changed: nothing to produce
    with pytest.raises(StateError, match="invalidated by flush"):
        state.get("next")
    tx = partition.begin()
    tx.as_state().set("next", 3)
    tx.as_state().delete("gone")
    assert tx.changes() == {"next": (0, b"3", None)}


def test_state_before_the_source_runs_is_an_error():
    with pytest.raises(RuntimeError, match='Source "seq" is not configured'):
        Sequence("seq").state


# --- kill -9 of the whole application (driver, Spark and the source's process), restarted ---------

APP = Path(__file__).parents[1] / "crash_app.py"


def _start_app(broker, out, state, group, name, log, total, every, pause):
    return subprocess.Popen(
        [
            sys.executable,
            str(APP),
            "numbers",
            broker.address,
            out,
            state,
            group,
            name,
            "exactly-once",
            str(total),
            str(every),
            str(pause),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=str(Path(__file__).parents[3]),
    )


def _outputs(kafka, topic, expected, timeout, isolation="read_uncommitted") -> list[dict]:
    return [json.loads(m.value()) for m in kafka.consume(topic, expected=expected, timeout=timeout, isolation=isolation)]


@pytest.mark.skip(
    reason="the embedded broker (noida-db 0.2.3) hides a producer's committed records from a read_committed "
    "fetch that starts past its aborted transaction's marker, which a restarted pipeline reading a restarted "
    "transactional source soon does (tests/testing/test_broker_transactions.py); run it against a Kafka broker"
)
@pytest.mark.harness(seconds=240)
def test_kill_9_of_the_application_mid_run_then_restarts_give_each_record_once_downstream(broker, kafka, tmp_path):
    """A StatefulSource read by a pipeline on Spark under exactly-once: the application is killed
    (SIGKILL to its whole process group) while the source is producing, and restarted; the
    pipeline's output holds every record exactly once.

    Skipped on the embedded broker: after the restart, the source's transactional producer
    aborts the killed run's open transaction, and once the pipeline's next micro-batch starts
    past that abort marker, noida-db 0.2.3 hides every later record of the producer from
    read_committed readers (``tests/testing/test_broker_transactions.py`` shows it without
    streamspark). It lost 800-2,200 of 3,000 records that way, with one kill or two."""
    total, every, pause = 3000, 50, 0.02  # about 60 s of producing: the kills land mid-run
    out = kafka.new_topic()
    state, group, name = str(tmp_path / "state"), f"stateful-app-{uuid.uuid4().hex[:8]}", f"numbers-{uuid.uuid4().hex[:8]}"
    log = open(tmp_path / "app.log", "ab")
    seen = 0
    proc = None
    try:
        for _ in range(1):
            proc = _start_app(broker, out, state, group, name, log, total, every, pause)
            deadline = time.monotonic() + 150
            while len(_outputs(kafka, out, expected=seen + 50, timeout=2)) < seen + 50:  # progress of this run
                assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "no new output within 150s"
            time.sleep(1)
            produced = sum(kafka.high_watermarks(f"source__{name}").values())
            os.killpg(proc.pid, signal.SIGKILL)  # the driver, Spark and the source's process
            proc.wait(30)
            assert produced < total, "the source had produced everything before the kill"
            seen = len(_outputs(kafka, out, expected=total, timeout=3))
        proc = _start_app(broker, out, state, group, name, log, total, every, pause)
        deadline = time.monotonic() + 180
        got: list[dict] = []
        while time.monotonic() < deadline and len({v["n"] for v in got}) < total:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
            got = _outputs(kafka, out, expected=total, timeout=3, isolation="read_committed")
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        log.close()
    counts = Counter(v["n"] for v in got)
    missing = set(range(total)) - set(counts)
    if missing:
        uncommitted = {v["n"] for v in _outputs(kafka, out, expected=10 * total, timeout=5)} & missing
        pytest.fail(
            f"lost {len(missing)} records, e.g. {sorted(missing)[:10]}; {len(uncommitted)} of them are in "
            f"the output topic outside committed transactions; the application's log: {tmp_path / 'app.log'}"
        )
    assert [n for n, c in counts.items() if c > 1] == []
    assert all(v["square"] == v["n"] ** 2 for v in got)
