"""A SIGTERM to the program's whole process group (``kill -- -PGID``, systemd's default
``KillMode``) stops it as a SIGTERM to the program alone does: the program finishes its
micro-batch (its outputs are committed) and stops Spark itself; the JVM does not die under it
with a Java stack trace, Spark's Python processes still take SIGTERM, and no process of the
program's session outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from streamspark.testing import EmbeddedBroker

APP = Path(__file__).with_name("broker_fault_app.py")  # an exactly-once per-key count


def _produce(address: str, topic: str, first: int, last: int) -> None:
    producer = Producer({"bootstrap.servers": address})
    for i in range(first, last):
        producer.produce(topic, json.dumps({"k": f"k{i % 10}", "i": i}).encode(), key=f"k{i % 10}".encode())
    assert producer.flush(30) == 0


def _consumer(address: str, topic: str, isolation: str = "read_committed") -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": address,
            "group.id": f"check-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    return consumer


def _outputs(address: str, topic: str) -> list[int]:
    consumer = _consumer(address, topic)
    got: list[int] = []
    idle = time.monotonic()
    while time.monotonic() - idle < 3:
        msg = consumer.poll(0.5)
        if msg is None or msg.error():
            continue
        got.append(json.loads(msg.value())["i"])
        idle = time.monotonic()
    consumer.close()
    return got


def _in_flight(address: str, topic: str, first: int, timeout: float = 60) -> set[int]:
    """The outputs visible before their transaction commits, once one of ``first`` or later is."""
    consumer = _consumer(address, topic, "read_uncommitted")
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None or msg.error():
                continue
            seen.add(json.loads(msg.value())["i"])
            if max(seen) >= first:
                return seen
    finally:
        consumer.close()
    raise AssertionError(f"no output of {first} or later within {timeout} s")


def _fork_servers(parent: int) -> list[int]:
    """The fork servers ``parent`` started (each leads a session of its own)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) != parent:  # field 4 of stat: the parent
                continue
            if _FORK_SERVER in Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode():
                found.append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _session(sid: int) -> dict[int, tuple[str, int]]:
    """The processes of session ``sid``: pid -> (command line, the mask of ignored signals).
    Spark's Python daemon puts itself in a process group of its own, not in a session."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) != sid:  # field 6 of stat: the session id
                continue
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = Path(f"/proc/{name}/status").read_text()
            ignored = int(status.split("SigIgn:")[1].split()[0], 16)
        except (OSError, IndexError, ValueError):
            continue
        found[int(name)] = (cmdline, ignored)
    return found


_SIGTERM = 1 << (signal.SIGTERM - 1)
_FORK_SERVER = "streamspark.engine.fork_server"


@pytest.mark.harness(seconds=60)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_a_signal_to_the_process_group_stops_the_program_cleanly(tmp_path, signum):
    """SIGTERM to the program's process group (a supervisor), or SIGINT (Ctrl-C at a terminal):
    the micro-batch in flight is finished and committed, the program exits 0 without a
    traceback, and no process outlives it. PySpark's SparkContext sets a SIGINT handler of its
    own (cancel the jobs, raise KeyboardInterrupt) when ``app.run()`` starts the session: the
    run's handler is put back."""
    with EmbeddedBroker(data_dir=str(tmp_path / "broker")) as broker:
        src, out = f"gs-src-{uuid.uuid4().hex[:6]}", f"gs-out-{uuid.uuid4().hex[:6]}"
        admin = AdminClient({"bootstrap.servers": broker.address})
        for fut in admin.create_topics([NewTopic(name, 2, 1) for name in (src, out)]).values():
            fut.result(30)
        _produce(broker.address, src, 0, 200)
        log_path = tmp_path / "app.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [sys.executable, str(APP), broker.address, src, out, str(tmp_path / "state"), "30"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                # as `python app.py` from a shell (this test process may have set it for its own Spark)
                env={k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"},
            )
            try:
                deadline = time.monotonic() + 180
                while len(set(_outputs(broker.address, out))) < 200:
                    assert proc.poll() is None, log_path.read_text()[-3000:]
                    assert time.monotonic() < deadline, "no output within 180 s"
                    time.sleep(1)
                # the fork server runs in a session of its own, and Spark's Python processes it
                # forks there (they show its command line)
                server = _fork_servers(proc.pid)
                sessions = [proc.pid, *server]
                processes = [entry for sid in sessions for entry in _session(sid).values()]
                jvm = [ignored for cmdline, ignored in processes if "SparkSubmit" in cmdline]
                python = [
                    ignored
                    for cmdline, ignored in processes
                    if "SparkSubmit" not in cmdline and ("pyspark" in cmdline or "_daemon" in cmdline or _FORK_SERVER in cmdline)
                ]
                assert jvm and all(ignored & _SIGTERM for ignored in jvm), "the JVM still takes SIGTERM"
                # what the JVM starts gets SIGTERM's default back (Spark stops its workers with it)
                assert python and not any(ignored & _SIGTERM for ignored in python), processes
                _produce(broker.address, src, 200, 20_200)
                # signal while that micro-batch is in flight: its outputs are written, not committed
                in_flight = _in_flight(broker.address, out, 200)
                os.killpg(proc.pid, signum)
                returncode = proc.wait(120)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        text = log_path.read_text()
        assert returncode == 0, text[-3000:]
        assert f"Received {signal.Signals(signum).name}: finishing the current micro-batch and stopping" in text
        assert "Stopped after" in text
        assert "Exception in thread" not in text and "Traceback" not in text, text[-3000:]
        deadline = time.monotonic() + 30
        while any(_session(sid) for sid in sessions) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = {pid: entry for sid in sessions for pid, entry in _session(sid).items()}
        assert not left, f"processes of the program's sessions outlived it: {left}"
        ids = _outputs(broker.address, out)
        assert len(ids) == len(set(ids)), "an output was written twice"
        assert set(range(200)) <= set(ids)
        # the micro-batch in flight was finished and committed, not abandoned
        assert in_flight <= set(ids), f"{len(in_flight - set(ids))} outputs of the batch in flight were not committed"
