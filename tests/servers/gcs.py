"""A Google Cloud Storage API endpoint for tests: ``gcp-storage-emulator`` (PyPI), in memory.

>>> with GcsEmulator() as gcs:                               # doctest: +SKIP
...     sink = TSDataLakeSink(s3_prefix="gs://lake/ts", table_name="t", storage_options=gcs.storage_options)

An emulator (not Google's service): it stands in because no real GCS server installs here.
gcsfs >= 2025 probes bucket types over gRPC, which the emulator does not serve: set
``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false`` before gcsfs is imported (the test suite does).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

from ._process import ServerProcess
from streamspark.testing.broker import free_port

__all__ = ("GcsEmulator",)


class GcsEmulator(ServerProcess):
    """Start ``gcp-storage-emulator`` on a free local port with one bucket; stop it on exit."""

    name = "gcs-emulator"

    def __init__(self, bucket: str = "lake") -> None:
        super().__init__()
        self.bucket = bucket
        self.port = 0

    def start(self, timeout: float = 60.0) -> "GcsEmulator":
        self.port = free_port()
        binary = os.path.join(os.path.dirname(sys.executable), "gcp-storage-emulator")

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0

        self._launch(
            [binary, "start", "--host", "127.0.0.1", "--port", str(self.port), "--in-memory", "--default-bucket", self.bucket],
            listening,
            timeout,
        )
        return self

    @property
    def storage_options(self) -> dict[str, Any]:
        return {"endpoint_url": f"http://127.0.0.1:{self.port}", "token": "anon", "project": "streamspark-test"}
