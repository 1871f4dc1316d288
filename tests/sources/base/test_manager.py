"""SourceManager: sources in their own processes on the real broker; failures, stop, kill, finish."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from streamspark.models.topics import Topic
from streamspark.sources import BaseSource, Source, SourceException, SourceManager
from streamspark.sources.base.manager import default_source_topic


class Counting(Source):
    """Produces ``n`` JSON values keyed by their number, then ends."""

    def __init__(self, name: str, n: int) -> None:
        super().__init__(name)
        self.n = n

    def run(self) -> None:
        for i in range(self.n):
            if not self.running:
                return
            msg = self.serialize(key=str(i), value={"i": i})
            self.produce(key=msg.key, value=msg.value)


def read_sensor() -> None:
    raise ValueError("sensor offline")


class Failing(Source):
    def run(self) -> None:
        self.produce(value=b"{}")
        read_sensor()


class Endless(Source):
    """Produces until stopped."""

    def run(self) -> None:
        i = 0
        while self.running:
            self.produce(value=json.dumps({"i": i}).encode())
            i += 1
            time.sleep(0.01)


class Stubborn(Source):
    """Ignores stop() (once it runs: it produces one message to show it does)."""

    def run(self) -> None:
        self.produce(key=b"s", value=b"running")
        self.flush()
        while True:
            time.sleep(0.05)


class Plain(BaseSource):
    """A BaseSource producing through the raw producer (the reference's low-level example)."""

    def __init__(self) -> None:
        super().__init__()
        self._running = False

    def start(self) -> None:
        self._running = True
        for n in range(5):
            if not self._running:
                return
            msg = self.producer_topic.serialize(value=n)
            self.producer.produce(topic=self.producer_topic.name, key=msg.key, value=msg.value)

    def stop(self) -> None:
        self._running = False

    def default_topic(self) -> Topic:
        return Topic("plain")


def wait_alive(manager: SourceManager, kafka, topic: str) -> None:
    """Wait until the source has produced something (it runs)."""
    assert kafka.consume(topic, expected=1, timeout=30), "the source produced nothing"
    assert manager.is_alive()


def test_a_source_produces_to_its_topic_and_finishes(sources, kafka):
    topic = kafka.new_topic()
    manager = sources.start(Counting("counting", 50), Topic(topic))
    sources.wait(manager)
    assert manager.all_finished() and manager.processes[0].exitcode == 0
    msgs = kafka.consume(topic, expected=50)
    assert sorted(json.loads(m.value())["i"] for m in msgs) == list(range(50))
    assert {m.key() for m in msgs} == {str(i).encode() for i in range(50)}


def test_a_base_source_has_its_queued_messages_delivered(sources, kafka):
    topic = kafka.new_topic()
    manager = sources.start(Plain(), Topic(topic))
    sources.wait(manager)
    assert sorted(json.loads(m.value()) for m in kafka.consume(topic, expected=5)) == [0, 1, 2, 3, 4]


def test_a_failing_source_raises_source_exception_with_its_traceback(sources, kafka):
    manager = sources.start(Failing("failing"), Topic(kafka.new_topic()))
    with pytest.raises(SourceException) as info:
        sources.wait(manager)
    err = info.value
    assert err.source_name == "failing" and err.exitcode == 1
    assert str(err).startswith('Source "failing" (PID ')
    assert "ValueError: sensor offline" in str(err)
    assert "in read_sensor" in err.child_traceback and "in read_sensor" in str(err)
    assert isinstance(err.__cause__, ValueError)
    assert not manager.all_finished()


def test_stop_ends_a_running_source_gracefully(sources, kafka):
    topic = kafka.new_topic()
    manager = sources.start(Endless("endless", shutdown_timeout=20), Topic(topic))
    wait_alive(manager, kafka, topic)
    manager.stop()
    assert not manager.is_alive()
    assert manager.processes[0].exitcode == 0  # it returned from run(): not killed
    manager.raise_for_error()
    assert manager.all_finished()


def test_a_source_ignoring_stop_is_killed_after_its_shutdown_timeout(sources, kafka):
    topic = kafka.new_topic()
    manager = sources.start(Stubborn("stubborn", shutdown_timeout=1), Topic(topic))
    wait_alive(manager, kafka, topic)  # stopped before it runs, a source process just ends on SIGTERM
    manager.stop()
    assert manager.processes[0].exitcode == -signal.SIGKILL
    with pytest.raises(SourceException, match=r'Source "stubborn" .*did not stop within its shutdown_timeout'):
        manager.raise_for_error()


def test_a_source_process_killed_from_outside_is_reported(sources, kafka):
    topic = kafka.new_topic()
    manager = sources.start(Endless("endless"), Topic(topic))
    wait_alive(manager, kafka, topic)
    os.kill(manager.processes[0].pid, signal.SIGKILL)
    with pytest.raises(SourceException, match=r'Source "endless" .*killed by SIGKILL'):
        sources.wait(manager)


def test_lambdas_and_local_classes_reach_the_source_process(sources, kafka):
    """Sources are pickled with cloudpickle: a class defined in a function, holding a lambda."""

    class Local(Source):
        def __init__(self, make) -> None:
            super().__init__("local")
            self.make = make

        def run(self) -> None:
            for i in range(3):
                self.produce(value=json.dumps(self.make(i)).encode())

    topic = kafka.new_topic()
    sources.wait(sources.start(Local(lambda i: {"double": i * 2}), Topic(topic)))
    assert sorted(json.loads(m.value())["double"] for m in kafka.consume(topic, expected=3)) == [0, 2, 4]


# --- no broker needed ---------------------------------------------------------------------------------


def test_registration_rejects_a_source_or_topic_twice():
    manager = SourceManager()
    source = Counting("a", 1)
    manager.register(source, default_source_topic(source), {"bootstrap.servers": "127.0.0.1:9"}, consumer_group="g")
    with pytest.raises(ValueError, match='Source "a" is already registered'):
        manager.register(source, Topic("other"), {"bootstrap.servers": "127.0.0.1:9"}, consumer_group="g")
    with pytest.raises(ValueError, match='Topic "source__a" is already used'):
        manager.register(Counting("b", 1), Topic("source__a"), {"bootstrap.servers": "127.0.0.1:9"}, consumer_group="g")
    assert [t.name for t in manager.topics] == ["source__a"] and not manager.is_alive()
    assert not manager.all_finished()  # registered, never run


def test_an_unpicklable_source_fails_at_start_naming_it():
    class HoldsALock(Counting):
        def __init__(self) -> None:
            super().__init__("locked", 1)
            self.lock = threading.Lock()

    manager = SourceManager()
    manager.register(HoldsALock(), Topic("t"), {"bootstrap.servers": "127.0.0.1:9"}, consumer_group="g")
    with pytest.raises(SourceException, match='Source "locked" failed: it cannot be sent to its process'):
        manager.start()
    assert not manager.is_alive()


def test_default_source_topic_prefixes_the_name_and_keeps_the_serializers():
    topic = default_source_topic(Counting("ticks", 1))
    assert topic.name == "source__ticks"
    assert topic.serialize(key=b"k", value={"a": 1}).value == b'{"a":1}'


APP = """
import sys, time
from streamspark.models.topics import Topic
from streamspark.sources import SourceManager
from tests.sources.base.test_manager import Endless

if __name__ == "__main__":
    manager = SourceManager()
    manager.register(Endless("orphan", shutdown_timeout=5), Topic(sys.argv[2]), {"bootstrap.servers": sys.argv[1]},
                     consumer_group="g", loglevel="WARNING")
    manager.start()
    print(manager.processes[0].pid, flush=True)
    time.sleep(600)
"""


def process_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # ended, not reaped yet
    except FileNotFoundError:
        return True


def test_a_source_stops_when_its_application_is_killed(broker, kafka, tmp_path):
    import subprocess
    import sys

    script = tmp_path / "app.py"
    script.write_text(APP)
    topic = kafka.new_topic()
    app = subprocess.Popen(
        [sys.executable, str(script), broker.address, topic],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        child = int(app.stdout.readline())
        assert kafka.consume(topic, expected=1, timeout=30)
        assert not process_gone(child)
        app.kill()
        app.wait()
        deadline = time.monotonic() + 30
        while not process_gone(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process_gone(child)
    finally:
        app.kill()


UNGUARDED = """
import sys, time
from streamspark.models.topics import Topic
from streamspark.sources import SourceException, SourceManager
from tests.sources.base.test_manager import Counting

# no `if __name__ == "__main__":`: the spawned source process runs this again while importing
# the main module, and Python refuses to start a process from there
manager = SourceManager()
manager.register(Counting("unguarded", 3), Topic(sys.argv[2]), {"bootstrap.servers": sys.argv[1]},
                 consumer_group="g", loglevel="WARNING")
manager.start()
process = manager.processes[0]
process.join(60)
try:
    process.raise_for_error()
except SourceException as exc:
    print("ERROR", exc, flush=True)
else:
    print("NO ERROR", process.exitcode, flush=True)
"""


def test_a_script_without_the_main_guard_is_told_to_add_it(broker, kafka, tmp_path):
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    done = subprocess.run(
        [sys.executable, str(script), broker.address, kafka.new_topic()],
        capture_output=True,
        text=True,
        cwd=os.getcwd(),
        env={**os.environ, "PYTHONPATH": os.getcwd()},
        timeout=120,
    )
    # the parent's own line (the child's attempt fails before it prints anything)
    line = next(line for line in done.stdout.splitlines() if line.startswith("ERROR"))
    assert "before the source could run" in line and 'if __name__ == "__main__":' in line
    assert "bootstrapping phase" in done.stderr  # Python's own error, from the source's process


class ExitsSilently(Source):
    """Ends its process with exit code 1 without raising (nothing to report)."""

    def run(self) -> None:
        os._exit(1)


def test_a_source_that_exits_once_running_is_not_blamed_on_the_main_guard(sources, kafka):
    manager = sources.start(ExitsSilently("exits-silently"), Topic(kafka.new_topic()))
    with pytest.raises(SourceException) as info:
        sources.wait(manager)
    assert info.value.exitcode == 1
    assert "ended without reporting an error" in str(info.value) and "__main__" not in str(info.value)
