"""Spark's Python processes start without the zipped PySpark (engine/_worker_python.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from streamspark.engine._worker_python import shadowing_zips, worker_python


def test_launcher_drops_only_the_shadowing_zips_and_runs_the_same_interpreter(tmp_path: Path):
    zips = shadowing_zips()
    assert any(z.endswith("pyspark.zip") for z in zips)  # pip-installed PySpark ships one
    launcher = worker_python(sys.executable)
    assert launcher != sys.executable and os.access(launcher, os.X_OK)
    kept = [str(tmp_path / "a dir"), str(tmp_path / "b*")]  # a space and a glob character survive
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([zips[0], kept[0], *zips[1:], kept[1]])}
    out = subprocess.run(
        [launcher, "-c", "import os, sys; print(os.environ['PYTHONPATH']); print(sys.prefix)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == [os.pathsep.join(kept), sys.prefix]


def test_no_launcher_when_spark_home_is_another_distribution(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert shadowing_zips() == []
    assert worker_python(sys.executable) == sys.executable


def test_spark_python_workers_import_the_installed_pyspark(spark):
    def where(_rows):
        import pyspark

        yield pyspark.__file__

    files = spark.sparkContext.parallelize([1, 2], 2).mapPartitions(where).collect()
    assert files and all(".zip" not in f and f.endswith(os.path.join("pyspark", "__init__.py")) for f in files)
