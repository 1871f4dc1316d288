"""RocksDB's JNI library unpacked once into the cache (engine/rocksdb_library.py) and put on a
local session's library path."""

from __future__ import annotations

import logging
import os
import platform
import zipfile
from pathlib import Path

import pytest

from streamspark.engine import rocksdb_library
from streamspark.engine.session import LIBRARY_PATH, _with_local_defaults

SUPPORTED = rocksdb_library.jni_library_name(platform.system(), platform.machine(), platform.libc_ver()[0]) is not None
needs_platform = pytest.mark.skipif(not SUPPORTED, reason="RocksDB's library is unpacked on Linux/glibc x86-64 and ARM64 only")


@pytest.fixture(autouse=True)
def _switched_on(monkeypatch):
    monkeypatch.delenv("STREAMSPARK_ROCKSDB_LIBRARY", raising=False)


def test_names_follow_rocksdb_per_platform():
    assert rocksdb_library.jni_library_name("Linux", "x86_64", "glibc") == "librocksdbjni-linux64.so"
    assert rocksdb_library.jni_library_name("Linux", "aarch64", "glibc") == "librocksdbjni-linux-aarch64.so"
    # musl builds, other systems and machines: RocksDB unpacks its library itself
    assert rocksdb_library.jni_library_name("Linux", "x86_64", "") is None
    assert rocksdb_library.jni_library_name("Darwin", "arm64", "") is None
    assert rocksdb_library.jni_library_name("Linux", "s390x", "glibc") is None


@needs_platform
def test_unpacks_the_jars_library_once(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    directory = rocksdb_library.library_dir()
    assert directory is not None and directory.parent == tmp_path
    name = rocksdb_library.jni_library_name(platform.system(), platform.machine(), platform.libc_ver()[0])
    unpacked = directory / str(name)
    jar = rocksdb_library._rocksdb_jar()
    assert jar is not None
    with zipfile.ZipFile(jar) as archive:
        assert unpacked.read_bytes() == archive.read(str(name))  # the jar's own library, whole
    assert [p.name for p in directory.iterdir()] == [unpacked.name]  # no partial file left
    stamp = unpacked.stat().st_mtime_ns
    assert rocksdb_library.library_dir() == directory
    assert unpacked.stat().st_mtime_ns == stamp  # not unpacked again


@needs_platform
def test_a_bad_jar_is_logged_and_left_to_rocksdb(monkeypatch, tmp_path: Path, caplog):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path / "cache"))
    broken = tmp_path / "rocksdbjni-0.0.jar"
    broken.write_bytes(b"not a zip")
    monkeypatch.setattr(rocksdb_library, "_rocksdb_jar", lambda: broken)
    with caplog.at_level(logging.WARNING, logger=rocksdb_library.__name__):
        assert rocksdb_library.library_dir() is None
    assert "Could not unpack RocksDB's native library" in caplog.text
    assert not any((tmp_path / "cache").rglob("*.so*"))


@needs_platform
def test_local_sessions_get_it_unless_turned_off_or_set(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    assert _with_local_defaults({})[LIBRARY_PATH] == str(rocksdb_library.library_dir())
    assert _with_local_defaults({LIBRARY_PATH: "/opt/mine"})[LIBRARY_PATH] == "/opt/mine"
    # a library path in spark-defaults.conf (which our --conf would override) is kept
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.extraLibraryPath /opt/hadoop/lib/native\n")
    assert LIBRARY_PATH not in _with_local_defaults({})
    (tmp_path / "spark-defaults.conf").unlink()
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")  # spark-submit started the JVM already
    assert LIBRARY_PATH not in _with_local_defaults({})
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT")
    monkeypatch.setenv("STREAMSPARK_ROCKSDB_LIBRARY", "0")
    assert rocksdb_library.library_dir() is None
    assert LIBRARY_PATH not in _with_local_defaults({})


@needs_platform
@pytest.mark.skipif(os.environ.get("STREAMSPARK_ROCKSDB_LIBRARY", "1") == "0", reason="turned off for this run")
def test_shared_session_loads_rocksdb_from_the_cache(spark):
    """The JVM maps the unpacked copy (not a temporary file unpacked from the jar)."""
    directory = rocksdb_library.library_dir()
    assert directory is not None
    jvm = spark._jvm
    assert str(directory) in str(jvm.java.lang.System.getProperty("java.library.path")).split(":")
    jvm.org.rocksdb.RocksDB.loadLibrary()  # what the state store does first (a no-op once loaded)
    pid = jvm.java.lang.ProcessHandle.current().pid()
    mapped = {line.split()[-1] for line in Path(f"/proc/{pid}/maps").read_text().splitlines() if "rocksdbjni" in line}
    assert mapped and all(path.startswith(str(directory)) for path in mapped), mapped
