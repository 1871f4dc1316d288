"""Spark's Python processes start without the zipped PySpark (engine/_worker_python.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from streamspark.engine._worker_python import restores_sigterm, shadowing_zips, worker_python


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


def test_the_launcher_gives_sigterm_its_default_back_and_is_recognised_from_its_content(tmp_path: Path):
    """Spark's Python processes start through the launcher with SIGTERM's default action even
    when their parent (a JVM leaving SIGTERM to the program) ignores it; a program started with
    a launcher another streamspark process wrote (inherited ``PYSPARK_PYTHON``) knows it too."""
    import shutil
    import signal

    launcher = worker_python(sys.executable)
    assert restores_sigterm(launcher)
    copy = tmp_path / "python"
    shutil.copy(launcher, copy)  # not written by this process
    assert restores_sigterm(str(copy))
    foreign = tmp_path / "other"
    foreign.write_text('#!/bin/sh\nexec python3 "$@"\n')
    assert not restores_sigterm(str(foreign)) and not restores_sigterm(sys.executable)
    probe = "import signal; print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)"
    out = subprocess.run(
        [launcher, "-c", probe],
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN),  # as under the JVM
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "True"


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
