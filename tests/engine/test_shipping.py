"""Shipping streamspark to executors that do not have it: the wheel, as a ``.zip`` in
``spark-submit --py-files``, run by a Python that has the dependencies but not streamspark (the
recipe of docs/cluster.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import streamspark

from ..conftest import json_messages

APP = Path(__file__).with_name("ship_app.py")
CHECKOUT = Path(streamspark.__file__).resolve().parents[1]


def build_wheel(tmp: Path) -> Path:
    """``pip wheel --no-deps`` of a copy of the project (the build leaves nothing in the checkout)."""
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (CHECKOUT / name).exists():
            shutil.copyfile(CHECKOUT / name, source / name)
    shutil.copytree(CHECKOUT / "streamspark", source / "streamspark", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (tmp / "dist").glob("streamspark-*.whl")
    return wheel


def python_without_streamspark(tmp: Path) -> str:
    """A launcher of this interpreter with its installed packages but not streamspark (an
    editable install is a ``.pth`` hook, which ``-S`` skips)."""
    launcher = tmp / "bin" / "python"
    launcher.parent.mkdir()
    site = sysconfig.get_paths()["purelib"]
    launcher.write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {sys.executable} -S "$@"\n')
    launcher.chmod(0o755)
    return str(launcher)


def test_the_wheel_shipped_with_py_files_runs_where_streamspark_is_not_installed(kafka, tmp_path):
    import pyspark

    shipped = tmp_path / "streamspark.zip"  # a wheel is a zip; --py-files takes .zip, .egg and .py
    shutil.copyfile(build_wheel(tmp_path), shipped)
    python = python_without_streamspark(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    no_streamspark = subprocess.run([python, "-c", "import streamspark"], env=env, cwd=tmp_path, capture_output=True)
    assert no_streamspark.returncode != 0, "the launcher's Python must not have streamspark"
    src = kafka.new_topic()
    kafka.produce(src, json_messages([{"i": i} for i in range(3)]))
    spark_home = Path(pyspark.__file__).parent
    env.update(SPARK_HOME=str(spark_home), PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python, SPARK_LOCAL_IP="127.0.0.1")
    proc = subprocess.run(
        [
            str(spark_home / "bin" / "spark-submit"),
            "--master",
            "local[1]",
            "--py-files",
            str(shipped),
            str(APP),
            kafka.address,
            src,
            str(tmp_path),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["driver"] == str(shipped / "streamspark" / "__init__.py")
    assert [value["i"] for value in got["outputs"]] == [0, 1, 2]
    for value in got["outputs"]:  # the Spark workers imported the copy Spark shipped them
        assert value["imported_from"].endswith("streamspark.zip/streamspark/__init__.py")
        assert not value["imported_from"].startswith((str(CHECKOUT), str(shipped)))
