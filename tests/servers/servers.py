"""Real database servers for the sink tests, each started in its own temporary directory on a
free local port (below 32768) and removed on stop.

- :class:`PostgreSQL` (Debian ``postgresql``: ``initdb`` + ``postgres``, trust auth),
- :class:`Redis` (Debian ``redis-server``, no persistence),
- :class:`InfluxDB1` (Debian ``influxdb``, the 1.x HTTP API),
- :class:`MotoServer` (``moto[server]``: an AWS emulator, used for Kinesis),
- :class:`MongoEmulator` (``nx-27017``: a MongoDB wire-protocol server on SQLite),
- :class:`OpenSearchEmulator` (``osmem-server``: an in-memory OpenSearch-compatible server),
- :class:`BigQueryEmulator` (``bqemulator``, run from its own virtual environment).

>>> with PostgreSQL() as pg:                                   # doctest: +SKIP
...     sink = PostgreSQLSink(host="127.0.0.1", port=pg.port, dbname="postgres",
...                           user=pg.user, password="", table_name="events")
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import urllib.parse
import sys
import urllib.request
from typing import Optional

from ._process import ServerProcess
from streamspark.testing.broker import free_port

__all__ = ("PostgreSQL", "Redis", "InfluxDB1", "MotoServer", "MongoEmulator", "OpenSearchEmulator", "BigQueryEmulator")

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status < 500
    except Exception:
        return False


def _which(name: str, *extra_globs: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    bindir = os.path.dirname(sys.executable)
    if os.path.exists(os.path.join(bindir, name)):
        return os.path.join(bindir, name)
    for pattern in extra_globs:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    raise RuntimeError(f"{name} is not installed (scripts/test.sh installs the test servers)")


class _LocalServer(ServerProcess):
    """A server on ``127.0.0.1:<port>``: a free port below 32768, picked on first use by
    ``_port()``; servers that take their port from it start again on the same one (PostgreSQL
    also on the same data when stopped with ``keep_data=True``)."""

    def __init__(self) -> None:
        super().__init__()
        self.port = 0

    def _port(self) -> int:
        if not self.port:
            self.port = free_port()
        return self.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class PostgreSQL(_LocalServer):
    """PostgreSQL with trust authentication for ``user`` (the OS user running it)."""

    name = "postgres"

    def __init__(self) -> None:
        super().__init__()
        self.user = "streamspark"

    def start(self, timeout: float = 60.0) -> "PostgreSQL":
        initdb = _which("initdb", "/usr/lib/postgresql/*/bin/initdb")
        postgres = os.path.join(os.path.dirname(os.path.realpath(initdb)), "postgres")
        if not os.path.exists(postgres):
            postgres = _which("postgres", "/usr/lib/postgresql/*/bin/postgres")
        data = os.path.join(self.workdir, "data")
        run_as: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: use the nobody account
            os.chmod(self.workdir, 0o777)
            run_as = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        if not os.path.exists(os.path.join(data, "PG_VERSION")):  # not a restart with kept data
            subprocess.run(
                run_as + [initdb, "-D", data, "-U", self.user, "-A", "trust", "--no-sync", "-E", "UTF8"],
                check=True,
                capture_output=True,
            )
        self._launch(
            run_as
            + [
                postgres,
                "-D",
                data,
                "-p",
                str(self._port()),
                "-h",
                "127.0.0.1",
                "-k",
                self.workdir,
                "-c",
                "fsync=off",
                "-c",
                "max_connections=50",
            ],
            lambda: _listening(self.port),
            timeout,
        )
        return self


class Redis(_LocalServer):
    """``redis-server`` without persistence."""

    name = "redis"

    def start(self, timeout: float = 30.0) -> "Redis":
        self._launch(
            [
                _which("redis-server"),
                "--port",
                str(self._port()),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.workdir,
            ],
            lambda: _listening(self.port),
            timeout,
        )
        return self


class InfluxDB1(_LocalServer):
    """InfluxDB 1.x (``influxd``) with HTTP on a free port; ``url`` is its base address."""

    name = "influxdb"

    def start(self, timeout: float = 60.0) -> "InfluxDB1":
        self.port, rpc = free_port(), free_port()
        d = self.workdir
        config = os.path.join(d, "influxdb.conf")
        with open(config, "w") as f:
            f.write(
                f'reporting-disabled = true\nbind-address = "127.0.0.1:{rpc}"\n'
                f'[meta]\n  dir = "{d}/meta"\n'
                f'[data]\n  dir = "{d}/data"\n  wal-dir = "{d}/wal"\n  query-log-enabled = false\n'
                f'[http]\n  bind-address = "127.0.0.1:{self.port}"\n  log-enabled = false\n'
                f"[monitor]\n  store-enabled = false\n"
            )
        self._launch([_which("influxd"), "-config", config], lambda: _http_ok(f"{self.url}/ping"), timeout)
        return self

    def query(self, q: str, db: Optional[str] = None) -> dict:
        """Run an InfluxQL query over HTTP; returns the parsed JSON answer."""
        params = {"q": q, **({"db": db} if db else {})}
        data = urllib.parse.urlencode(params).encode()
        with urllib.request.urlopen(urllib.request.Request(f"{self.url}/query", data=data), timeout=10) as r:
            return json.loads(r.read())


class MotoServer(_LocalServer):
    """``moto_server``: AWS APIs (Kinesis here) on a free port. An emulator, not AWS."""

    name = "moto"

    def start(self, timeout: float = 60.0) -> "MotoServer":
        self._port()
        self._launch(
            [_which("moto_server"), "-H", "127.0.0.1", "-p", str(self.port)], lambda: _http_ok(f"{self.url}/moto-api/"), timeout
        )
        return self


class MongoEmulator(_LocalServer):
    """``nx-27017``: the MongoDB wire protocol over SQLite. An emulator, not MongoDB."""

    name = "nx27017"

    def start(self, timeout: float = 60.0) -> "MongoEmulator":
        self._port()
        d = self.workdir
        self._launch(
            [
                _which("nx-27017"),
                "--host",
                "127.0.0.1",
                "-p",
                str(self.port),
                "--data-dir",
                os.path.join(d, "db"),
                "--log-file",
                os.path.join(d, "server.log"),
                "--pid-file",
                os.path.join(d, "server.pid"),
            ],
            lambda: _listening(self.port),
            timeout,
        )
        return self


class OpenSearchEmulator(_LocalServer):
    """``osmem-server``: an in-memory OpenSearch-compatible HTTP server. An emulator."""

    name = "osmem"

    def start(self, timeout: float = 60.0) -> "OpenSearchEmulator":
        from osmem_server import resolve_binary

        self._port()
        self._launch(
            [resolve_binary(), "--no-stdin-watch", "--no-ja", "--addr", f"127.0.0.1:{self.port}"],
            lambda: _http_ok(self.url),
            timeout,
        )
        return self


class BigQueryEmulator(_LocalServer):
    """``bqemulator`` (REST on ``url``), from ``.tools/bqemu`` where ``scripts/test.sh`` installs it
    with the DuckDB spatial extension it needs (its own venv: it pins an older DuckDB). An emulator."""

    name = "bqemulator"

    def __init__(self, project: str = "streamspark-test") -> None:
        super().__init__()
        self.project = project

    def start(self, timeout: float = 90.0) -> "BigQueryEmulator":
        tools = os.path.join(_REPO, ".tools", "bqemu")
        python = os.path.join(tools, "bin", "python")
        if not os.path.exists(python):
            raise RuntimeError("bqemulator is not installed in .tools/bqemu (scripts/test.sh installs it)")
        shim = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bqemu_shim.py")
        for attempt in range(3):
            # another process (the tests run in parallel) may take a free port before the
            # emulator binds it: then it exits at once, and a fresh pair of ports is tried
            self.port, grpc = free_port(), free_port()
            try:
                # HOME: where DuckDB finds the spatial extension test.sh placed
                self._launch(
                    [
                        "env",
                        f"HOME={os.path.join(tools, 'home')}",
                        python,
                        shim,
                        "start",
                        "--rest-port",
                        str(self.port),
                        "--grpc-port",
                        str(grpc),
                        "--project",
                        self.project,
                        "--log-level",
                        "warning",
                    ],
                    lambda: _http_ok(f"{self.url}/bigquery/v2/projects/{self.project}/datasets"),
                    timeout,
                )
            except RuntimeError as exc:
                if attempt < 2 and ("Failed to bind" in str(exc) or "address already in use" in str(exc).lower()):
                    continue
                raise
            break
        return self
