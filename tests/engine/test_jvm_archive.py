"""The JVM class archive of local sessions (engine/jvm_archive.py) and the session's JVM options."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from streamspark.engine import jvm_archive
from streamspark.engine.session import _with_local_jvm_options


def test_archive_path_is_per_runtime_in_the_cache_dir(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    path = jvm_archive.archive_path()
    assert path is not None and path.parent == tmp_path and path.suffix == ".jsa"
    assert jvm_archive.archive_path() == path  # stable across calls
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))  # falls back to java on PATH
    assert jvm_archive.archive_path() == path


def test_archive_path_changes_when_pyspark_is_installed_again(monkeypatch, tmp_path: Path):
    """Java ignores an archive whose jars changed (size or time): a reinstalled PySpark at the
    same path gets a path of its own, so that a fresh archive is built for it."""
    import os

    import pyspark

    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    fake = tmp_path / "pyspark"
    (fake / "jars").mkdir(parents=True)
    core = fake / "jars" / "spark-core_2.13-4.3.0.jar"
    core.write_bytes(b"jar")
    monkeypatch.setattr(pyspark, "__file__", str(fake / "__init__.py"))
    first = jvm_archive.archive_path()
    assert jvm_archive.archive_path() == first
    os.utime(core, ns=(core.stat().st_atime_ns, core.stat().st_mtime_ns + 1_000_000_000))
    assert jvm_archive.archive_path() != first


def test_session_options_use_the_archive_only_when_it_exists(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    assert _with_local_jvm_options(None) == jvm_archive.QUICK_JIT
    archive = jvm_archive.archive_path()
    assert archive is not None
    archive.write_bytes(b"x")
    options = _with_local_jvm_options("-Dmine=1")
    assert options.startswith(f"-XX:SharedArchiveFile={archive} ") and options.endswith(" -Dmine=1")
    assert jvm_archive.QUICK_JIT in options
    # a user who picks an archive or a compiler keeps exactly their options
    assert _with_local_jvm_options("-XX:TieredStopAtLevel=4") == "-XX:TieredStopAtLevel=4"
    monkeypatch.setenv("STREAMSPARK_JVM_ARCHIVE", "0")
    assert _with_local_jvm_options("-Dmine=1") == "-Dmine=1"


def test_shared_session_runs_with_the_local_jvm_options(spark):
    args = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert jvm_archive.QUICK_JIT in args
    archive = jvm_archive.archive_path()
    if archive is not None and archive.is_file():  # scripts/bootstrap.sh builds it
        assert f"-XX:SharedArchiveFile={archive}" in args


@pytest.mark.harness(seconds=70)
def test_built_archive_is_complete_and_mappable(spark, tmp_path: Path):
    """Builds a real archive (a child process runs a small pipeline on the embedded broker), then
    makes a JVM with Spark's class path map it with ``-Xshare:on``, which fails on a bad archive."""
    target = tmp_path / "spark.jsa"
    assert jvm_archive.build_archive(target) == target
    assert target.stat().st_size > 10_000_000  # Spark's classes, not just a header
    assert not list(tmp_path.glob("*.partial"))
    classpath = spark._jvm.java.lang.System.getProperty("java.class.path")
    java = jvm_archive.java_executable()
    ok = subprocess.run(
        [str(java), "-Xshare:on", f"-XX:SharedArchiveFile={target}", "-cp", classpath, "-version"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    # an existing archive is not rebuilt
    before = target.stat().st_mtime_ns
    assert jvm_archive.build_archive(target) == target and target.stat().st_mtime_ns == before
