"""On a Spark standalone cluster: a master and two 1-core workers started from the PySpark
install (no download), the application's driver killed with -9 mid-stream and restarted;
every output exactly once under ``read_committed``, for a stateful and a stateless pipeline."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Iterator

import pytest

from streamspark.testing.broker import free_port

from ..state.test_exactly_once import _run_harness


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """A standalone master and ``workers`` workers of ``cores`` each on 127.0.0.1."""

    def __init__(self, tmp: Path, workers: int = 2, cores: int = 1) -> None:
        self.tmp = tmp
        self.port, self.ui_port = free_port(), free_port()
        self.workers, self.cores = workers, cores
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> None:
        env = {
            **os.environ,
            "SPARK_HOME": str(_spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_WORKER_DIR": str(self.tmp / "work"),
            "SPARK_LOG_DIR": str(self.tmp / "logs"),
        }
        log = open(self.tmp / f"{name}.log", "ab")
        self.procs.append(
            subprocess.Popen(
                [str(_spark_home() / "bin" / "spark-class"), *args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )

    def start(self) -> "StandaloneCluster":
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--webui-port",
            str(self.ui_port),
        )
        for i in range(self.workers):
            self._start(
                f"worker{i}",
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--cores",
                str(self.cores),
                "--memory",
                "1g",
                "--webui-port",
                str(free_port()),
                "--work-dir",
                str(self.tmp / f"work{i}"),
            )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as resp:
                    state = json.loads(resp.read())
                if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") >= self.workers:
                    return self
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the standalone cluster did not come up: {(self.tmp / 'master.log').read_text()[-2000:]}")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for proc in self.procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    c = StandaloneCluster(tmp_path_factory.mktemp("cluster")).start()
    yield c
    c.stop()


@pytest.mark.harness(seconds=240)
@pytest.mark.xdist_group("standalone-cluster")  # both runs on one pytest worker and one cluster
@pytest.mark.parametrize("mode", ["stateful", "stateless"])
def test_kill_9_of_the_driver_on_a_standalone_cluster_exactly_once(broker, kafka, tmp_path, cluster, mode, monkeypatch):
    # the cluster's workers run on this machine: the state dir under tmp_path is storage the driver
    # and every executor share, declared so for the application (started with this environment)
    monkeypatch.setenv("Streamspark__State__Shared", "true")
    total = 4_000
    got, keys = _run_harness(
        broker, kafka, tmp_path, "exactly-once", total=total, kills=2, seed=3, master=cluster.master_url, mode=mode
    )
    ids = [v["i"] for v in got]
    assert len(set(ids)) == total, f"lost {total - len(set(ids))} inputs"
    assert len(ids) == total, f"{len(ids) - total} duplicate outputs under read_committed"
    if mode == "stateful":
        per_key = defaultdict(list)
        for v in got:
            per_key[v["k"]].append(v["n"])
        assert len(per_key) == keys
        assert all(sorted(ns) == list(range(1, total // keys + 1)) for ns in per_key.values())
    # the application's executors ran on the cluster's workers, not in a local master
    assert "master=spark://127.0.0.1" in (tmp_path / "app.log").read_text()
