"""A real Azure Blob endpoint for tests: Azurite (npm ``azurite``), blob service only.

>>> with Azurite() as az:                                    # doctest: +SKIP
...     sink = TSDataLakeSink(s3_prefix="az://lake/ts", table_name="t", storage_options=az.storage_options)

The server listens on 127.0.0.1 (a free port below 32768) with the well-known development
account; its data lives in a temporary directory removed on stop. The binary is looked up on
``PATH``, then in ``<repo>/.tools/node_modules/.bin`` (where ``scripts/test.sh`` installs it).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any, Optional

__all__ = ("Azurite",)

ACCOUNT = "devstoreaccount1"
# Azurite's published development key (not a secret)
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def _binary() -> str:
    found = shutil.which("azurite-blob")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    candidate = os.path.join(here, "..", "..", ".tools", "node_modules", ".bin", "azurite-blob")
    if os.path.exists(candidate):
        return os.path.abspath(candidate)
    raise RuntimeError("Azurite is not installed: npm install --prefix .tools azurite")


class Azurite:
    """Start ``azurite-blob`` on a free local port; stop it on exit."""

    def __init__(self) -> None:
        self.port = 0
        self._dir: Optional[str] = None
        self._proc: Optional[subprocess.Popen[bytes]] = None

    def start(self, timeout: float = 60.0) -> "Azurite":
        self._dir = tempfile.mkdtemp(prefix="streamspark-azurite-")
        for _ in range(100):
            port = random.randrange(12000, 32000)
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            self.port = port
            break
        log = open(os.path.join(self._dir, "azurite.log"), "wb")
        self._proc = subprocess.Popen(
            [_binary(), "--silent", "--skipApiVersionCheck", "--loose", "--blobHost", "127.0.0.1",
             "--blobPort", str(self.port), "--location", os.path.join(self._dir, "data")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError("azurite exited early")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("Azurite did not start in time")

    @property
    def connection_string(self) -> str:
        return (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                f"BlobEndpoint=http://127.0.0.1:{self.port}/{ACCOUNT};")

    @property
    def storage_options(self) -> dict[str, Any]:
        return {"connection_string": self.connection_string}

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, 15)
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, 9)
        self._proc = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> "Azurite":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
