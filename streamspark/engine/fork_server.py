"""A fork server for Spark's Python processes on a local master (``STREAMSPARK_FORK_SERVER=0`` turns it off).

Starting a query, Spark starts its Python processes one after another: a daemon to create the
data source, the streaming source's runner, a daemon to plan its reader, the task daemon. Each
first imports PySpark, pyarrow and its own modules (0.2-0.6 s each on 2 cores), so the first
task waits for about 3.4 s of imports in a row (docs/benchmarks.md). The fork server is one
process, started with the session, that has imported all of them once; the launcher Spark is
given (:mod:`._worker_python`) asks it for a process instead of starting an interpreter: the
server forks a child that takes over the launcher's standard input, output and error, its
environment, working directory and arguments, and runs the module as ``python -m`` would. The
launcher waits for the child, passes SIGTERM, SIGINT and SIGHUP on to it and exits as it did,
so Spark sees the process it started behave as before.

The server serves only what it can serve exactly: ``-m`` of a module it has imported
(:data:`SERVED_MODULES`), from its own working directory, with its ``PYTHONPATH`` and hash
seed. Anything else, or a server that is not there (yet), and the launcher starts the
interpreter as before. The server ends when the program that started it goes away (its
standard input closes). Served processes are listed in ``<folder>/children`` (a file per
process id holding its arguments), for tools and tests.

Measured with ``bench/user.py`` over a 500k-message backlog (docs/benchmarks.md): the first
output of W1-W3 0.1-2.6 s sooner, the last 0.2-3.3 s sooner; the sum of the processes' resident
sizes counts the pages they share with the server again (0.02-0.17 GB more), their proportional
set size stays the same.

Example (what :mod:`.session` does when it is enabled)::

    server = ForkServer.start()
    os.environ[SOCKET_ENV] = server.socket_path
"""

from __future__ import annotations

import functools
import json
import os
import runpy
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Mapping, Optional

from ._env import switched_on

__all__ = ("ENABLE_ENV", "SERVED_MODULES", "SOCKET_ENV", "ForkServer", "served_children", "enabled")

#: the environment variable that turns the fork server off (``0``)
ENABLE_ENV = "STREAMSPARK_FORK_SERVER"
#: the environment variable that tells the launcher where the server listens
SOCKET_ENV = "STREAMSPARK_FORK_SERVER_SOCKET"

#: the modules Spark runs with ``-m`` on a local session that the server imports and serves
SERVED_MODULES = (
    "pyspark.daemon",
    "pyspark.sql.streaming.python_streaming_source_runner",
    "streamspark.engine._daemon",
)
#: imported by the server besides :data:`SERVED_MODULES` and what the task daemon preloads
#: (:data:`._daemon.PRELOADED`): what the planners' forked processes import next
PRELOADED = (
    "pyspark.sql.worker.create_data_source",
    "pyspark.sql.worker.plan_data_source_read",
)
#: the environment variables that must match the server's for a request to be served
SAME_ENV = ("PYTHONPATH", "PYTHONHASHSEED", "PYTHONSAFEPATH", "PYTHONOPTIMIZE", "PYTHONNOUSERSITE")


def enabled(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Whether a local session's Python processes fork from the fork server: on POSIX systems,
    unless ``STREAMSPARK_FORK_SERVER`` says off (``0``, ``false``, ``no``, ``off``).

    >>> import os
    >>> enabled({}) == (os.name == "posix"), enabled({"STREAMSPARK_FORK_SERVER": "0"})
    (True, False)
    """
    return switched_on(ENABLE_ENV, environ) and os.name == "posix" and hasattr(socket, "send_fds")


def served_children(folder: str) -> dict[int, list[str]]:
    """The processes the server in ``folder`` runs now: process id -> arguments after ``-m``."""
    found = {}
    for entry in Path(folder, "children").glob("*"):
        try:
            found[int(entry.name)] = json.loads(entry.read_text())
        except (OSError, ValueError):
            continue
    return found


class ForkServer:
    """The driver's handle on a running fork server."""

    def __init__(self, process: subprocess.Popen, folder: str) -> None:
        self.process = process
        self.folder = folder
        self.socket_path = os.path.join(folder, "socket")

    @classmethod
    def start(
        cls, python: str = sys.executable, env: Optional[dict[str, str]] = None, modules: tuple[str, ...] = ()
    ) -> "ForkServer":
        """Start a server with ``python`` (a launcher of :mod:`._worker_python` gives it Spark's
        worker ``PYTHONPATH``), serving :data:`SERVED_MODULES` and ``modules``. It listens once
        it has imported them; until then the launcher starts interpreters as before."""
        folder = tempfile.mkdtemp(prefix="streamspark-forks-")
        os.makedirs(os.path.join(folder, "children"))
        environ = dict(os.environ if env is None else env)
        # what Spark gives its Python processes unless the program sets it (pyspark's context)
        environ.setdefault("PYTHONHASHSEED", "0")
        process = subprocess.Popen(
            [python, "-m", "streamspark.engine.fork_server", folder, *modules],
            stdin=subprocess.PIPE,
            env=environ,
            start_new_session=True,
        )
        return cls(process, folder)

    def ready(self) -> bool:
        """Whether the server listens (it has imported its modules)."""
        return os.path.exists(self.socket_path)

    def stop(self) -> None:
        """Stop the server (its children run on) and remove its folder."""
        if self.process.poll() is None:
            try:
                self.process.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


# --- the server process ---------------------------------------------------------------------


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the launcher went away")
        data += chunk
    return data


@functools.lru_cache(maxsize=64)
def _holds_python(entry: str) -> bool:
    """Whether a ``PYTHONPATH`` entry can give Python modules (Spark adds its core jar, which
    holds none: an interpreter with or without it imports the same modules)."""
    if not entry.endswith(".jar"):
        return True
    try:
        with zipfile.ZipFile(entry) as archive:
            return any(name.endswith((".py", ".pyc", ".so")) for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False  # not an archive: nothing to import from it either


def _python_path(value: Optional[str]) -> list[str]:
    return [entry for entry in (value or "").split(os.pathsep) if entry and _holds_python(entry)]


def _refusal(request: dict[str, Any], served: tuple[str, ...] = SERVED_MODULES) -> Optional[str]:
    """Why the server cannot run ``request`` as a fresh interpreter would (None: it can)."""
    if request.get("module") not in served:
        return f"module {request.get('module')!r} is not served"
    if os.path.realpath(request.get("cwd", "")) != os.path.realpath(os.getcwd()):
        return "another working directory"
    env = request.get("env", {})
    for name in SAME_ENV:
        if name == "PYTHONHASHSEED" and name not in env:
            continue  # a random seed was asked for: the server's fixed one is one of them
        if name == "PYTHONPATH":
            if _python_path(env.get(name)) != _python_path(os.environ.get(name)):
                return f"another PYTHONPATH: {env.get(name)!r} (served: {os.environ.get(name)!r})"
            continue
        if env.get(name) != os.environ.get(name):
            return f"another {name}"
    return None


def _run_child(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become the process the launcher would have started."""
    code = 1
    try:
        # the signal dispositions of an interpreter the launcher had started: those the launcher
        # started with ignored stay ignored, Python's own at start-up for the others
        ignored = set(request.get("ignored", ()))
        for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_IGN if number in ignored else signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN if signal.SIGINT in ignored else signal.default_int_handler)
        for name in ("SIGPIPE", "SIGXFSZ"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_IGN)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        module = request["module"]
        sys.modules.pop(module, None)  # run as __main__, as ``python -m`` does
        sys.argv = [""] + list(request["args"])
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(code)


def serve(folder: str, extra: tuple[str, ...] = ()) -> None:
    """The server's loop: import, listen, fork a child per request, report its end."""
    served = SERVED_MODULES + extra
    from streamspark.engine._daemon import preload

    # what the task daemon imports before it forks (its list, pyarrow's pandas shim and
    # numpy's reseeding in forked processes), then the served modules and the planners'
    preload()
    preload(served + PRELOADED)
    children_dir = os.path.join(folder, "children")
    path = os.path.join(folder, "socket")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(64)
    os.rename(path + ".tmp", path)  # the launcher sees the socket only once it listens
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    stdin = sys.stdin.fileno()
    while True:
        try:
            ready, _, _ = select.select([listener, wake_read, stdin], [], [])
        except InterruptedError:
            continue
        if stdin in ready and not os.read(stdin, 4096):
            break  # the program that started the server is gone
        if wake_read in ready:
            try:
                os.read(wake_read, 4096)
            except BlockingIOError:
                pass
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                conn = waiting.pop(pid, None)
                Path(children_dir, str(pid)).unlink(missing_ok=True)
                if conn is not None:
                    try:
                        conn.sendall(json.dumps({"status": status}).encode() + b"\n")
                    except OSError:
                        pass
                    conn.close()
        if listener in ready:
            conn, _ = listener.accept()
            fds: list[int] = []
            try:
                conn.settimeout(10)  # a launcher that stops half-way does not hold the server
                size = int.from_bytes(_recv_exact(conn, 4), "big")
                message, fds, _, _ = socket.recv_fds(conn, size, 3)
                message += _recv_exact(conn, size - len(message))
                request = json.loads(message)
                conn.settimeout(None)
            except Exception:
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            reason = _refusal(request, served) if len(fds) == 3 else "no standard streams"
            if reason is not None:
                for fd in fds:
                    os.close(fd)
                with open(os.path.join(folder, "refused"), "a") as refused:  # for tools and tests
                    refused.write(json.dumps([request.get("module"), reason]) + "\n")
                conn.sendall(json.dumps({"fallback": reason}).encode() + b"\n")
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                conn.close()
                for other in waiting.values():
                    other.close()
                os.close(wake_read)
                os.close(wake_write)
                signal.set_wakeup_fd(-1)
                _run_child(request, fds)
            for fd in fds:
                os.close(fd)
            Path(children_dir, str(pid)).write_text(json.dumps([request["module"], *request["args"]]))
            waiting[pid] = conn
            # the child starts in the server's process group (its launcher follows it out of it)
            conn.sendall(json.dumps({"pid": pid, "group": os.getpgrp()}).encode() + b"\n")
    listener.close()


if __name__ == "__main__":
    serve(sys.argv[1], tuple(sys.argv[2:]))
