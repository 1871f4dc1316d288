"""Run a program's callbacks in the program's own process while Spark's Python workers run its pipeline.

On a local master the pipeline's steps run in Spark's Python worker processes, not in the
process that called ``app.run()``. A callback such as ``on_processing_error`` that appends to a
list of the program, counts in a global or prints would then act on a copy in a worker, and
the program would see nothing. :class:`CallbackServer` fixes that for the callbacks a program
hands to streamspark (the error callbacks and windows' ``on_late``): the driver listens on
``127.0.0.1`` with a random key, each callback is replaced by a picklable :class:`DriverCall`,
and a worker calling it sends the arguments to the driver, which runs the callback once, in the
program's process, and answers with its return value (or its exception, raised again in the
worker). The decision the callback returns (skip the record or stop) takes effect in the worker
as before.

When the arguments cannot be pickled, or the driver cannot be reached (an executor on another
machine of a cluster), the callback runs in the worker as it did before, and the first such
call logs a warning.

>>> server = CallbackServer()
>>> seen = []
>>> call = server.wrap(lambda exc, row, logger: seen.append(str(exc)) or True, "on_processing_error")
>>> call(ValueError("bad"), None, None)  # in the driver process: a direct call
True
>>> seen
['bad']
>>> server.close()
"""

from __future__ import annotations

import logging
import os
import pickle
import io
import secrets
import sys
import threading
import time
from multiprocessing.connection import Client, Connection, Listener
from typing import Any, Callable, Optional

__all__ = ("CallbackServer", "DriverCall", "ForwardedStdout", "forward_stdout", "flush_stdout", "route_to_driver", "unwrap")

logger = logging.getLogger(__name__)

#: per worker process and thread: the open connection to each driver address
_connections = threading.local()
_warned: set[str] = set()


class DriverCall:
    """A callback that runs in the driver process when called from a Spark worker.

    Called in the driver's own process (``sdf.test()``, a planning step), it calls the callback
    directly. Pickled into a worker, it forwards the call to the driver's :class:`CallbackServer`.
    """

    __slots__ = ("fn", "name", "address", "authkey", "index", "driver_pid")

    def __init__(self, fn: Callable[..., Any], name: str, address: tuple[str, int], authkey: bytes, index: int) -> None:
        self.fn = fn
        self.name = name
        self.address = address
        self.authkey = authkey
        self.index = index
        self.driver_pid = os.getpid()

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.fn, self.name, self.address, self.authkey, self.index, self.driver_pid)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.fn, self.name, self.address, self.authkey, self.index, self.driver_pid = state

    def __repr__(self) -> str:
        return f"DriverCall({self.name}={self.fn!r})"

    def __call__(self, *args: Any) -> Any:
        if os.getpid() == self.driver_pid:
            return self.fn(*args)
        if self.name != "print":
            flush_stdout()  # what the task printed before this call comes out before it
        try:
            payload = pickle.dumps((self.index, args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            self._warn_once(f"its arguments cannot be pickled ({type(exc).__name__}: {exc})")
            return self.fn(*args)
        conn = self._connection()
        if conn is None:
            return self.fn(*args)
        try:
            conn.send_bytes(payload)
            kind, result = pickle.loads(conn.recv_bytes())
        except (OSError, EOFError) as exc:
            self._drop_connection()
            self._warn_once(f"the driver went away ({exc})")
            return self.fn(*args)
        if kind == "ok":
            return result
        if kind == "raise":
            raise result
        # "local": the driver could not take these arguments (e.g. an exception type that
        # cannot be rebuilt there): run here
        return self.fn(*args)

    def _connection(self) -> Optional[Connection]:
        conns: dict[tuple[str, int], Connection] = getattr(_connections, "by_address", None) or {}
        _connections.by_address = conns
        conn = conns.get(self.address)
        if conn is None:
            try:
                conn = Client(self.address, authkey=self.authkey)
            except (OSError, EOFError) as exc:
                self._warn_once(f"the driver at {self.address[0]}:{self.address[1]} cannot be reached ({exc})")
                return None
            conns[self.address] = conn
        return conn

    def _drop_connection(self) -> None:
        conns = getattr(_connections, "by_address", None) or {}
        conn = conns.pop(self.address, None)
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass

    def _warn_once(self, why: str) -> None:
        if self.name in _warned:
            return
        _warned.add(self.name)
        logger.warning("%s runs in the Spark worker process, not in the program's process: %s", self.name, why)


def unwrap(fn: Any) -> Any:
    """The program's own callback behind a :class:`DriverCall` (anything else as it is)."""
    return fn.fn if isinstance(fn, DriverCall) else fn


class CallbackServer:
    """Answers :class:`DriverCall` requests from Spark's Python workers on this machine.

    One server serves one ``app.run()``; callbacks run one at a time, under a lock, as they
    would in a single-process program.
    """

    def __init__(self) -> None:
        self._authkey = secrets.token_bytes(32)
        self._listener = Listener(("127.0.0.1", 0), authkey=self._authkey)
        self.address: tuple[str, int] = self._listener.address  # type: ignore[assignment]
        self._callbacks: list[Callable[..., Any]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._conns: list[Connection] = []
        self.calls = 0
        threading.Thread(target=self._accept, name="streamspark-callbacks", daemon=True).start()

    def wrap(self, fn: Callable[..., Any], name: str) -> DriverCall:
        """Return a picklable stand-in for ``fn`` that runs it in this process."""
        fn = unwrap(fn)
        self._callbacks.append(fn)
        return DriverCall(fn, name, self.address, self._authkey, len(self._callbacks) - 1)

    def close(self) -> None:
        """Stop listening; workers still holding a connection fall back to calling in place."""
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        for conn in list(self._conns):
            try:
                conn.close()
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn = self._listener.accept()
            except Exception:  # closed, or a client that failed the key check
                if self._closed:
                    return
                continue
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), name="streamspark-callback", daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        try:
            while not self._closed:
                try:
                    request = conn.recv_bytes()
                except (OSError, EOFError):
                    return
                conn.send_bytes(self._answer(request))
        except (OSError, EOFError):
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _answer(self, request: bytes) -> bytes:
        try:
            index, args = pickle.loads(request)
        except Exception:
            return pickle.dumps(("local", None))
        with self._lock:
            self.calls += 1
            try:
                result: tuple[str, Any] = ("ok", self._callbacks[index](*args))
            except Exception as exc:
                result = ("raise", exc)
        try:
            return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            if result[0] == "raise":
                error = RuntimeError(f"{type(result[1]).__name__}: {result[1]}")
                return pickle.dumps(("raise", error))
            return pickle.dumps(("raise", TypeError(f"the callback's return value cannot be pickled: {result[1]!r:.200}")))


def route_to_driver(plan: Any, server: CallbackServer) -> Callable[[], None]:
    """Replace the callbacks of ``plan`` (a :class:`~._plan.PipelinePlan`) by :class:`DriverCall`\\ s
    of ``server``: the three error callbacks and each window's ``on_late``; what the pipeline's
    steps print goes to the program's ``sys.stdout`` (``plan.stdout``). Returns a function
    that puts the program's own callbacks back (window processors belong to the program's
    dataframes, which may run again).
    """
    for name in ("on_consumer_error", "on_processing_error", "on_producer_error"):
        setattr(plan, name, server.wrap(getattr(plan, name), name))
    plan.stdout = server.wrap(write_stdout, "print")
    processors = [node.processor for node in plan.window_nodes()]
    originals = [(proc, proc.on_late) for proc in processors if getattr(proc, "on_late", None) is not None]
    for proc, on_late in originals:
        proc.on_late = server.wrap(on_late, "on_late")

    def restore() -> None:
        for proc, on_late in originals:
            proc.on_late = unwrap(on_late)

    return restore


def write_stdout(text: str) -> None:
    """Write text printed in a worker to the program's ``sys.stdout`` (looked up per call, so
    a redirection made by the program, or pytest's ``capsys``, sees it)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class ForwardedStdout(io.TextIOBase):
    """A worker's ``sys.stdout`` that sends what is printed to the driver's ``sys.stdout``.

    Whole lines are sent, at most every ``interval`` seconds or 32 KiB (one round trip per
    chunk, not per line), and whatever is left when a task ends (:func:`flush_stdout`).
    """

    def __init__(self, send: DriverCall, interval: float = 0.1) -> None:
        super().__init__()
        self.send = send
        self.interval = interval
        self._parts: list[str] = []
        self._size = 0
        self._last = time.monotonic()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._parts.append(text)
        self._size += len(text)
        if "\n" in text and (self._size >= 32768 or time.monotonic() - self._last >= self.interval):
            self.flush()
        return len(text)

    def flush(self) -> None:
        if not self._parts:
            return
        text = "".join(self._parts)
        self._parts.clear()
        self._size = 0
        self._last = time.monotonic()
        try:
            self.send(text)
        except Exception:  # the driver is gone: print here (Spark copies it to its log/stderr)
            sys.__stdout__.write(text) if sys.__stdout__ is not None else None


def forward_stdout(send: Optional[DriverCall]) -> None:
    """In a worker process: make ``print`` reach the driver through ``send`` (None: leave
    ``sys.stdout`` as it is). Called at the start of every task."""
    if send is None or os.getpid() == send.driver_pid:
        return
    current = sys.stdout
    if isinstance(current, ForwardedStdout):
        current.send = send
        return
    sys.stdout = ForwardedStdout(send)


def flush_stdout() -> None:
    """At the end of a task: send what the task printed and has not been sent yet."""
    if isinstance(sys.stdout, ForwardedStdout):
        sys.stdout.flush()
