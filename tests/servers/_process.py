"""A local server started as a subprocess in its own temporary directory (test helpers' base)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Any, Callable, Optional

__all__ = ("ServerProcess",)


class ServerProcess:
    """Runs one server process in its own session and temp dir; ``stop()`` kills its process group.

    Subclasses call :meth:`_launch` from ``start()`` and describe themselves with ``name``.
    """

    name = "server"

    def __init__(self) -> None:
        self._dir: Optional[str] = None
        self._proc: Optional[subprocess.Popen[bytes]] = None

    @property
    def workdir(self) -> str:
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix=f"streamspark-{self.name}-")
        return self._dir

    def _launch(self, args: list[str], ready: Callable[[], bool], timeout: float) -> None:
        """Start ``args`` (output to ``<workdir>/<name>.log``) and wait until ``ready()``."""
        with open(os.path.join(self.workdir, f"{self.name}.log"), "wb") as log:
            self._proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                output = self.log()[-2000:]
                self.stop()
                raise RuntimeError(f"{self.name} exited early: {output}")
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not become ready within {timeout:.0f}s")

    def log(self) -> str:
        """What the server printed so far."""
        if self._dir is None:
            return ""
        try:
            with open(os.path.join(self._dir, f"{self.name}.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, keep_data: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and remove its directory.

        :param keep_data: keep the directory, so that ``start()`` brings the same server back
            (a server that goes down and comes back, for failure tests).
        """
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, 15)
            try:
                proc.wait(3)  # test servers keep nothing worth a long shutdown
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait(5)
        if self._dir is not None and not keep_data:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def start(self) -> Any:
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
