"""Start and stop an embedded Kafka-protocol broker (``noida-db``, installed with ``streamspark[broker]``)."""

from __future__ import annotations

import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from ..exceptions import StreamsparkException

__all__ = ("EmbeddedBroker", "BrokerStartError", "free_port")

logger = logging.getLogger(__name__)


class BrokerStartError(StreamsparkException):
    """The embedded broker could not be started."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1 below 32768."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 32768:
            return port
    # the ephemeral range may start above 32768: probe 20000-32000 from a random point, so
    # two calls before either port is bound (a server needing two ports) rarely collide
    start = random.randrange(0, 12000)
    for i in range(0, 12000, 7):
        port = 20000 + (start + i) % 12000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise BrokerStartError("No free port below 32768")


def _binary() -> str:
    candidate = Path(sys.executable).parent / "noida-db"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("noida-db")
    if found is None:
        raise BrokerStartError('noida-db is not installed: pip install "streamspark[broker]"')
    return found


class EmbeddedBroker:
    """A local Kafka-protocol broker for tests and demos, bound to 127.0.0.1.

    :param port: the Kafka port (a free one below 32768 by default).
    :param data_dir: where the broker keeps data (a temporary directory by default, removed on stop).
    :param nice: the broker's CPU scheduling priority (``nice`` increment, 0-19). noida-db
        rewrites its whole store after every change, which takes about a core while data keeps
        changing (with 1M messages stored: ~5 s per rewrite); a higher value leaves the CPU
        to the programs it serves first (the benchmarks use 10).
    """

    def __init__(self, port: Optional[int] = None, data_dir: Optional[str] = None, nice: int = 0) -> None:
        if not 0 <= nice <= 19:
            raise ValueError(f"nice must be between 0 and 19, not {nice}")
        self.nice = nice
        self.port = port or free_port()
        self._own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="streamspark-broker-")
        self._running = False

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def server_pids(self) -> list[int]:
        """The processes serving this broker (``noida-db up`` forks the server, so it is not a
        child of ours), found by the port on their command line; Linux ``/proc`` only."""
        marker = b"--kafka-port\0" + str(self.port).encode() + b"\0"  # cmdline is NUL-separated
        pids = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker in f.read():
                        pids.append(int(name))
            except OSError:
                continue
        return pids

    def start(self, timeout: float = 30.0) -> "EmbeddedBroker":
        cmd = [
            _binary(),
            "up",
            "--only",
            "kafka",
            "--host",
            "127.0.0.1",
            "--kafka-port",
            str(self.port),
            "--data-dir",
            self.data_dir,
        ]
        if self.nice:
            cmd = ["nice", "-n", str(self.nice), *cmd]  # `up` forks the server: it inherits the priority
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise BrokerStartError(f"noida-db failed to start (exit {proc.returncode}): {proc.stderr[-2000:]}")
        self._running = True
        self._wait_ready(timeout)
        logger.info("Embedded broker listening on %s (data: %s)", self.address, self.data_dir)
        return self

    def _wait_ready(self, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient

        deadline = time.monotonic() + timeout
        admin = AdminClient({"bootstrap.servers": self.address})
        last: Any = None
        while time.monotonic() < deadline:
            try:
                admin.list_topics(timeout=2)
                return
            except Exception as exc:
                last = exc
                time.sleep(0.2)
        self.stop()
        raise BrokerStartError(f"Broker on {self.address} not ready within {timeout}s: {last}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker: ``noida-db down``, then, for a server still running after
        ``timeout`` seconds (busy rewriting a large store, or ``down`` failed), SIGTERM and,
        5 s later, SIGKILL; so no server outlives its ``with`` block."""
        if self._running:
            self._down(timeout)
            self._end_servers(timeout)
            self._running = False
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def _down(self, timeout: float) -> None:
        try:
            done = subprocess.run(
                [_binary(), "down", "--data-dir", self.data_dir], capture_output=True, text=True, timeout=timeout
            )
        except (OSError, subprocess.SubprocessError, BrokerStartError) as exc:
            logger.warning("noida-db down failed for %s: %s", self.address, exc)
            return
        if done.returncode != 0:
            logger.warning("noida-db down failed for %s (exit %d): %s", self.address, done.returncode, done.stderr[-500:])

    def _end_servers(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.server_pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            pids = self.server_pids()
            if not pids:
                return
            logger.warning("The broker on %s did not stop: sending %s to %s", self.address, sig.name, pids)
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
            end = time.monotonic() + wait
            while self.server_pids() and time.monotonic() < end:
                time.sleep(0.1)

    def __enter__(self) -> "EmbeddedBroker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
