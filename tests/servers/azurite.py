"""A real Azure Blob endpoint for tests: Azurite (npm ``azurite``), blob service only.

>>> with Azurite() as az:                                    # doctest: +SKIP
...     sink = TSDataLakeSink(s3_prefix="az://lake/ts", table_name="t", storage_options=az.storage_options)

The server listens on 127.0.0.1 (a free port below 32768) with the well-known development
account; its data lives in a temporary directory removed on stop. The binary is looked up on
``PATH``, then in ``<repo>/.tools/node_modules/.bin`` (where ``scripts/test.sh`` installs it).
"""

from __future__ import annotations

import os
import shutil
import socket
from typing import Any

from ._process import ServerProcess
from streamspark.testing.broker import free_port

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


class Azurite(ServerProcess):
    """Start ``azurite-blob`` on a free local port; stop it on exit."""

    name = "azurite"

    def __init__(self) -> None:
        super().__init__()
        self.port = 0

    def start(self, timeout: float = 60.0) -> "Azurite":
        self.port = free_port()

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0

        self._launch(
            [
                _binary(),
                "--silent",
                "--skipApiVersionCheck",
                "--loose",
                "--blobHost",
                "127.0.0.1",
                "--blobPort",
                str(self.port),
                "--location",
                os.path.join(self.workdir, "data"),
            ],
            listening,
            timeout,
        )
        return self

    @property
    def connection_string(self) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
            f"BlobEndpoint=http://127.0.0.1:{self.port}/{ACCOUNT};"
        )

    @property
    def storage_options(self) -> dict[str, Any]:
        return {"connection_string": self.connection_string}
