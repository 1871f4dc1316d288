"""The fork server for Spark's Python processes (engine/fork_server.py, on by default), against real
processes: a served process runs as ``python -m`` would, with the launcher's streams,
environment, arguments and exit; what it cannot serve is started as before."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from streamspark.engine._worker_python import worker_python
from streamspark.engine.fork_server import SOCKET_ENV, ForkServer, served_children

PROBE = "tests.engine.fork_probe"


@pytest.fixture(scope="module")
def launcher():
    python = worker_python(sys.executable)
    if python == sys.executable:
        pytest.skip("no launcher here (no POSIX shell or no PySpark zips to drop)")
    return python


@pytest.fixture(scope="module")
def server(launcher):
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    started = ForkServer.start(python=launcher, env=env, modules=(PROBE,))
    deadline = time.monotonic() + 60
    while not started.ready() and time.monotonic() < deadline:
        assert started.process.poll() is None, "the fork server ended"
        time.sleep(0.05)
    assert started.ready()
    yield started
    started.stop()


def launch(launcher, server, *args, cwd=None, **env):
    environ = {**os.environ, "PYTHONPATH": os.getcwd(), SOCKET_ENV: server.socket_path, "PROBE": "yes", **env}
    return subprocess.Popen(
        [launcher, "-m", PROBE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ,
        cwd=cwd or os.getcwd(),
    )


def refused(server) -> list:
    path = os.path.join(server.folder, "refused")
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def test_a_served_process_runs_the_module_with_the_launchers_streams_and_exit(launcher, server):
    before = len(refused(server))
    process = launch(launcher, server, "3", "extra")
    out, err = process.communicate(b"hello", timeout=60)
    seen = json.loads(out)
    assert process.returncode == 3
    assert seen["argv"] == ["3", "extra"] and seen["name"] == "__main__"
    assert seen["probe"] == "yes" and seen["stdin"] == "hello" and seen["cwd"] == os.getcwd()
    assert b"to stderr" in err
    assert seen["pid"] != process.pid  # forked by the server, not the launcher itself
    assert len(refused(server)) == before


def test_the_launcher_passes_sigterm_on_and_exits_as_the_process_did(launcher, server):
    process = launch(launcher, server, "wait")
    seen = json.loads(process.stdout.readline())
    assert served_children(server.folder)[seen["pid"]] == [PROBE, "wait"]
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == -signal.SIGTERM
    deadline = time.monotonic() + 10
    while seen["pid"] in served_children(server.folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen["pid"] not in served_children(server.folder)  # reaped by the server


@pytest.mark.parametrize("mode", ["wait", "group"])
def test_the_launcher_leaves_its_group_when_the_process_does(launcher, server, mode):
    """Spark's daemon moves to a process group of its own, out of reach of a signal to the
    program's group (a supervisor stopping it, Ctrl-C): the launcher follows it there, so such
    a signal is not passed on; a process that stays in the group keeps its launcher there."""
    environ = {**os.environ, "PYTHONPATH": os.getcwd(), SOCKET_ENV: server.socket_path}
    ours = os.getpgrp()  # the launcher starts in this process's group
    process = subprocess.Popen([launcher, "-m", PROBE, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environ)
    try:
        seen = json.loads(process.stdout.readline())
        assert seen["pid"] != process.pid  # served
        if mode == "group":
            assert seen["pgid"] == seen["pid"]
            deadline = time.monotonic() + 10
            while os.getpgid(process.pid) == ours and time.monotonic() < deadline:
                time.sleep(0.02)
            assert os.getpgid(process.pid) == process.pid  # a group of its own, like the process
        else:
            time.sleep(0.5)
            assert os.getpgid(process.pid) == ours
        process.send_signal(signal.SIGTERM)  # a signal to the launcher itself is passed on
        assert process.wait(30) == -signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("ignore_sigint", [False, True], ids=["sigint", "sigint-ignored"])
def test_a_served_process_has_the_signal_dispositions_of_a_started_one(launcher, server, tmp_path, ignore_sigint):
    """A served process handles signals as the interpreter the launcher would have started:
    what the launcher started with ignored stays ignored (the JVM starts Spark's Python
    processes with SIGINT ignored, so Ctrl-C at the program does not reach them), the rest as
    Python sets them at start-up. An ignored SIGINT is not passed on by the launcher either."""

    def start(socket_path: str) -> tuple[subprocess.Popen, dict]:
        environ = {**os.environ, "PYTHONPATH": os.getcwd(), SOCKET_ENV: socket_path}
        process = subprocess.Popen(
            [launcher, "-m", PROBE, "wait"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=environ,
            preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None,
        )
        return process, json.loads(process.stdout.readline())

    served, seen = start(server.socket_path)
    plain, alone = start(str(tmp_path / "no-server"))
    try:
        assert seen["pid"] != served.pid and alone["pid"] == plain.pid
        assert seen["signals"] == alone["signals"]
        assert seen["signals"]["SIGINT"] == ("ignored" if ignore_sigint else "default_int_handler")
        assert seen["signals"]["SIGPIPE"] == "ignored" and seen["signals"]["SIGTERM"] == "default"
        if ignore_sigint:
            served.send_signal(signal.SIGINT)
            time.sleep(0.5)
            assert served.poll() is None and seen["pid"] in served_children(server.folder)
        for process in (served, plain):
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == -signal.SIGTERM
    finally:
        for process in (served, plain):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_what_the_server_cannot_serve_exactly_starts_as_before(launcher, server, tmp_path):
    # another working directory: the module path (sys.path[0]) would differ
    process = launch(launcher, server, "0", cwd=str(tmp_path), PYTHONPATH=os.getcwd())
    out, _ = process.communicate(b"", timeout=60)
    seen = json.loads(out)
    assert process.returncode == 0 and seen["pid"] == process.pid  # the launcher became Python
    assert refused(server)[-1] == [PROBE, "another working directory"]
    # another hash seed
    process = launch(launcher, server, "0", PYTHONHASHSEED="123")
    out, _ = process.communicate(b"", timeout=60)
    assert json.loads(out)["pid"] == process.pid
    assert refused(server)[-1] == [PROBE, "another PYTHONHASHSEED"]


def test_a_launcher_that_stops_half_way_does_not_hold_the_server(launcher, server):
    import socket

    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.connect(server.socket_path)  # connects, then sends nothing
    try:
        process = launch(launcher, server, "0")
        out, _ = process.communicate(b"", timeout=60)
        assert process.returncode == 0 and json.loads(out)["pid"] != process.pid  # served after all
    finally:
        stuck.close()


def test_without_a_server_the_launcher_starts_python(launcher, tmp_path):
    gone = ForkServer(subprocess.Popen(["true"]), str(tmp_path))  # nothing listens there
    process = launch(launcher, gone, "5")
    out, _ = process.communicate(b"x", timeout=60)
    assert process.returncode == 5 and json.loads(out)["pid"] == process.pid


def test_the_server_ends_when_its_program_goes_away(launcher):
    started = ForkServer.start(python=launcher, env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        started.process.stdin.close()  # as when the program that started it ends
        assert started.process.wait(60) == 0
    finally:
        started.stop()


APP = """
import json, os, sys
from streamspark import Application
from streamspark.engine.session import fork_server
from streamspark.engine.fork_server import served_children

if __name__ == "__main__":
    app = Application(broker_address=sys.argv[1], consumer_group="fork-server-e2e", auto_offset_reset="earliest")
    sdf = app.dataframe(app.topic(sys.argv[2]))
    sdf = sdf.apply(lambda v: {"i": v["i"], "double": v["i"] * 2})
    sdf.to_topic(app.topic(sys.argv[3]))
    rows = app.run(count=20, timeout=120)
    server = fork_server()
    print(json.dumps({
        "rows": rows,
        "served": sorted({argv[0] for argv in served_children(server.folder).values()}) if server else None,
        "socket": os.environ.get("STREAMSPARK_FORK_SERVER_SOCKET"),
    }), flush=True)
"""


@pytest.mark.parametrize("switch", [None, "0"], ids=["default", "turned-off"])
def test_a_program_runs_with_spark_processes_forked_by_the_server(kafka, tmp_path, server, switch):
    """End to end: by default a program's Spark processes (the task daemon, the planners) fork
    from the server; with ``STREAMSPARK_FORK_SERVER=0`` there is no server (the plain path), and
    the outputs of both are the same. A server's socket inherited from a parent program (the
    module's server) is not used, and the program does not hand its own to its children."""
    src, out = kafka.new_topic(partitions=2), kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode(), "partition": i % 2} for i in range(20)])
    script = tmp_path / "app.py"
    script.write_text(APP)
    env = {k: v for k, v in os.environ.items() if k != "STREAMSPARK_FORK_SERVER"}
    env[SOCKET_ENV] = server.socket_path
    if switch is not None:
        env["STREAMSPARK_FORK_SERVER"] = switch
    parents = (len(refused(server)), dict(served_children(server.folder)))
    done = subprocess.run(
        [sys.executable, str(script), kafka.address, src, out],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env={**env, "PYTHONPATH": os.getcwd()},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(r["i"] for r in result["rows"]) == list(range(20))
    assert all(r["double"] == 2 * r["i"] for r in result["rows"])
    assert sorted(json.loads(m.value())["i"] for m in kafka.consume(out, expected=20)) == list(range(20))
    assert (len(refused(server)), dict(served_children(server.folder))) == parents  # never asked
    assert result["socket"] is None
    if switch is None:
        assert "streamspark.engine._daemon" in result["served"]  # the task daemon came from the server
    else:
        assert result["served"] is None
