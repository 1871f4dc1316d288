"""Hadoop's local file system setting permissions in-process (engine/local_file_system.py and
engine/java/NioLocalFileSystem.java), compiled once and given to local sessions."""

from __future__ import annotations

import logging
import os
import stat
import zipfile
from pathlib import Path

import pytest

from streamspark.engine import jvm_archive, local_file_system
from streamspark.engine.local_file_system import FILE_SYSTEM_CLASS

has_jdk = pytest.mark.skipif(local_file_system._javac() is None, reason="needs the JDK's javac")
in_use = pytest.mark.skipif(
    local_file_system._javac() is None or os.environ.get(local_file_system.SWITCH, "1") == "0",
    reason="the shared session runs without it (no javac, or turned off)",
)


@pytest.fixture(autouse=True)
def _switched_on(monkeypatch):
    monkeypatch.delenv(local_file_system.SWITCH, raising=False)


@has_jdk
def test_compiles_once_into_the_cache(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    assert local_file_system.jar_path(build=False) is None  # not built yet
    jar = local_file_system.jar_path()
    assert jar is not None and jar.parent == tmp_path and jar.suffix == ".jar"
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
    assert {"io/streamspark/hadoop/NioLocalFileSystem.class", "io/streamspark/hadoop/NioLocalFileSystem$Raw.class"} <= names
    assert [p.name for p in tmp_path.iterdir()] == [jar.name]  # no partial file left
    stamp = jar.stat().st_mtime_ns
    assert local_file_system.jar_path() == jar == local_file_system.jar_path(build=False)
    assert jar.stat().st_mtime_ns == stamp  # not compiled again
    monkeypatch.setenv(local_file_system.SWITCH, "0")
    assert local_file_system.jar_path() is None


@has_jdk
def test_a_source_that_does_not_compile_is_logged_and_left_out(monkeypatch, tmp_path: Path, caplog):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path / "cache"))
    broken = tmp_path / "NioLocalFileSystem.java"
    broken.write_text("class NioLocalFileSystem { not java }")
    monkeypatch.setattr(local_file_system, "_SOURCE", broken)
    with caplog.at_level(logging.WARNING, logger=local_file_system.__name__):
        assert local_file_system.jar_path() is None
    assert "Could not compile NioLocalFileSystem.java" in caplog.text
    assert not list((tmp_path / "cache").glob("*.jar"))
    # not tried again by the next session: javac is not even looked for
    monkeypatch.setattr(local_file_system, "_javac", lambda: pytest.fail("compiled again"))
    assert local_file_system.jar_path() is None


@has_jdk
def test_a_jar_without_the_class_is_not_used(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path))
    jar = local_file_system.jar_path()
    assert jar is not None
    with zipfile.ZipFile(jar, "w") as archive:  # e.g. truncated or replaced by something else
        archive.writestr("other/Thing.class", b"")
    assert local_file_system.jar_path() is None


@has_jdk
def test_left_to_settings_made_elsewhere(monkeypatch, tmp_path: Path):
    """A ``file://`` file system chosen in ``spark-defaults.conf`` or Hadoop's ``core-site.xml``
    (which a ``--conf`` of ours would override) keeps it; so does a JVM spark-submit started."""
    from streamspark.engine import session
    from streamspark.engine.session import _local_file_system_jar

    # as for a process whose JVM is yet to start (the shared session may run in this one)
    monkeypatch.setattr(session, "_jvm_can_load", lambda jar: True)
    monkeypatch.setenv("STREAMSPARK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    assert _local_file_system_jar({}, {}) == local_file_system.jar_path()
    assert _local_file_system_jar({local_file_system.FILE_SYSTEM_SETTING: "x"}, {}) is None
    (conf_dir / "spark-defaults.conf").write_text("spark.hadoop.fs.file.impl  org.example.MyFs\n")
    assert _local_file_system_jar({}, {}) is None
    (conf_dir / "spark-defaults.conf").unlink()
    (conf_dir / "core-site.xml").write_text("<configuration><property><name>fs.file.impl</name></property></configuration>")
    assert _local_file_system_jar({}, {}) is None
    (conf_dir / "core-site.xml").unlink()
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "1")
    assert _local_file_system_jar({}, {}) is None


def test_the_jar_is_appended_to_the_class_path():
    jar = Path("/cache/streamspark-hadoop-x.jar")
    assert local_file_system.class_path_with(jar, "") == str(jar)
    assert (
        local_file_system.class_path_with(jar, f"/opt/a.jar{os.pathsep}/opt/b")
        == f"/opt/a.jar{os.pathsep}/opt/b{os.pathsep}{jar}"
    )


@in_use
def test_shared_session_writes_local_files_through_it(spark, tmp_path: Path):
    """The local session's ``file://`` is our class (Hadoop's checksummed local file system), and
    the permissions it sets are the ones asked for: at creation (the umask applied) and later."""
    jvm = spark._jvm
    hadoop_fs = jvm.org.apache.hadoop.fs
    fs = hadoop_fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
    assert fs.getClass().getName() == FILE_SYSTEM_CLASS
    assert fs.getRaw().getClass().getName() == FILE_SYSTEM_CLASS + "$Raw"
    target = tmp_path / "state" / "1.changelog"
    out = fs.create(hadoop_fs.Path(target.as_uri()), True)
    out.write(b"abc")
    out.close()
    umask = int(spark._jsc.hadoopConfiguration().get("fs.permissions.umask-mode", "022"), 8)  # Hadoop's, not the process's
    assert target.read_bytes() == b"abc"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert (tmp_path / "state" / ".1.changelog.crc").is_file()  # the checksum file, as Hadoop writes it
    fs.setPermission(hadoop_fs.Path(target.as_uri()), jvm.org.apache.hadoop.fs.permission.FsPermission(0o640))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    fs.setPermission(hadoop_fs.Path(target.as_uri()), jvm.org.apache.hadoop.fs.permission.FsPermission(0o751))
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    # as chmod(1) does: the sticky bit is set, and a directory keeps its set-group-ID bit
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    fs.setPermission(hadoop_fs.Path(shared.as_uri()), jvm.org.apache.hadoop.fs.permission.FsPermission(0o1750))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o3750
    missing = hadoop_fs.Path((tmp_path / "missing").as_uri())
    with pytest.raises(Exception, match="FileNotFoundException"):
        fs.setPermission(missing, jvm.org.apache.hadoop.fs.permission.FsPermission(0o644))


@in_use
def test_a_running_jvm_without_the_jar_keeps_hadoops_file_system(spark, monkeypatch):
    """PySpark keeps its JVM after a session stops, and the next session starts in it: the file
    system is asked for only if that JVM has the jar (else no class would load)."""
    from streamspark.engine.session import _local_file_system_jar

    jar = local_file_system.jar_path(build=False)
    assert jar is not None
    assert _local_file_system_jar({}, {}) == jar  # the shared session's JVM has it
    monkeypatch.setattr(local_file_system, "jar_path", lambda build=True: jar.with_name("elsewhere.jar"))
    assert _local_file_system_jar({}, {}) is None


@in_use
def test_the_class_data_sharing_archive_still_maps(spark):
    """The jar is appended to the class path, so the archive (recorded without it) still maps;
    and the program's environment is left as it was."""
    jar = local_file_system.jar_path(build=False)
    assert jar is not None
    class_path = str(spark._jvm.java.lang.System.getProperty("java.class.path")).split(os.pathsep)
    assert class_path[-1] == str(jar)
    assert str(jar) not in os.environ.get(local_file_system.DIST_CLASS_PATH, "")
    archive = jvm_archive.archive_path()
    if archive is None or not archive.is_file():
        pytest.skip("no JVM class archive built here")
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    assert str(archive) in Path(f"/proc/{pid}/maps").read_text()
