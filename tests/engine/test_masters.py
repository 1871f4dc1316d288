"""Which master and settings a run gets (spark-submit's among them), and the state dir a cluster
master asks for (engine/masters.py)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streamspark.engine.masters import check_state_dir, default_master, is_local_master, submitted_conf
from streamspark.exceptions import StreamsparkException

from ..conftest import json_messages

APP = Path(__file__).with_name("submit_app.py")


@pytest.mark.parametrize("master", ["spark://spark-master:7077", "yarn", "k8s://https://k8s:6443", "mesos://m:5050"])
def test_a_cluster_master_refuses_a_state_dir_not_declared_shared(master):
    with pytest.raises(StreamsparkException) as info:
        check_state_dir(master, Path("/var/lib/app/state/g/checkpoint"), shared=False)
    message = str(info.value)
    assert "/var/lib/app/state/g/checkpoint" in message and repr(master) in message
    assert "state_dir_shared=True" in message and "Streamspark__State__Shared=true" in message
    with pytest.raises(StreamsparkException, match="relative: resolved against the driver's working directory"):
        check_state_dir(master, Path("state/g/checkpoint"), shared=False)
    check_state_dir(master, Path("/mnt/shared/state/g/checkpoint"), shared=True)


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local-cluster[2,1,1024]"])
def test_local_masters_take_any_state_dir(master):
    assert is_local_master(master)
    check_state_dir(master, Path("state/g/checkpoint"), shared=False)


def test_outside_spark_submit_the_default_master_is_local(monkeypatch):
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert submitted_conf() == {}
    assert default_master() == "local[*]"


def test_a_running_session_is_used_and_a_master_of_another_kind_is_logged(spark):
    from streamspark.engine.session import get_spark

    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append  # type: ignore[method-assign]
    logging.getLogger("streamspark").addHandler(handler)
    try:
        assert get_spark("local[*]") is spark and not records  # another local master: nothing to say
        assert get_spark("spark://spark-master:7077") is spark
    finally:
        logging.getLogger("streamspark").removeHandler(handler)
    assert [r.getMessage() for r in records] == [
        f"Spark already runs in this process with master {spark.sparkContext.master}: "
        "spark_master=spark://spark-master:7077 has no effect"
    ]


def test_spark_submit_master_and_conf_win_over_the_defaults(kafka, tmp_path):
    """A real spark-submit of the PySpark install: its --master is the run's master, its --conf
    wins over streamspark's defaults, and a setting made in code (spark_conf) wins over it.
    Spark's Python processes start through streamspark's launcher, but the JVM, already running,
    could not be told of a fork server: none is started."""
    import pyspark

    from streamspark.engine._worker_python import worker_python

    spark_home = Path(pyspark.__file__).parent
    src, out = kafka.new_topic(), kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(5)]))
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "PYSPARK_PYTHON": worker_python(sys.executable),
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    proc = subprocess.run(
        [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            "local[1]",
            "--name",
            "submitted-app",
            "--conf",
            "spark.sql.shuffle.partitions=7",  # streamspark's default: 4
            "--conf",
            "spark.sql.streaming.pollingDelay=70ms",  # the application's spark_conf: 60ms
            str(APP),
            kafka.address,
            src,
            out,
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["config_master"] == got["master"] == "local[1]"
    assert got["outputs"] == 5
    assert got["fork_server"] is False
    assert got["conf"] == {
        "spark.sql.shuffle.partitions": "7",
        "spark.sql.streaming.pollingDelay": "60ms",
        "spark.ui.enabled": "false",
        "spark.app.name": "submitted-app",
    }
