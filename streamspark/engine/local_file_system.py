"""Hadoop's local file system without a ``chmod`` process per file, for a local master.

Spark writes a local checkpoint (offset and commit logs, state store changelogs and
snapshots) through Hadoop's ``LocalFileSystem``. Without Hadoop's native library (PySpark does
not ship it), Hadoop sets each new file's permission by running ``chmod`` in a new process, for
the file and again for its checksum file: about nine processes per stateful micro-batch, each
started from the driver's JVM (a spawn took 4 ms from a small JVM on 2 cores; the offset and
commit logs took 14–18.5 ms a write this way against 1–3 ms without), several of them on the
micro-batch's path (the offset log is written before the micro-batch runs, the changelogs inside
its tasks).

``java/NioLocalFileSystem.java`` is that file system with the mode set in-process (through the
file's ``unix:mode`` attribute, as ``chmod`` sets it); everything else is Hadoop's.
:func:`jar_path` compiles it once per Hadoop version into the cache directory of :mod:`.jvm_archive` (with the JDK's ``javac``; with
a Java runtime alone nothing changes), and :func:`~streamspark.engine.session.get_spark` gives a
JVM it starts on a local master the jar (appended to the class path, so that the
class-data-sharing archive still matches) and ``spark.hadoop.fs.file.impl``, unless ``file://``'s
file system is chosen elsewhere (the program's ``spark_conf``, spark-submit,
``spark-defaults.conf``, Hadoop's ``core-site.xml``).
``STREAMSPARK_NIO_LOCAL_FS=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from pathlib import Path
from typing import Optional

from ._env import NIO_LOCAL_FS, switched_on
from .jvm_archive import cache_dir, java_executable, pyspark_jar

__all__ = ("DIST_CLASS_PATH", "FILE_SYSTEM_CLASS", "FILE_SYSTEM_SETTING", "SWITCH", "jar_path", "class_path_with")

logger = logging.getLogger(__name__)

#: the Java class (``java/NioLocalFileSystem.java``) and the setting that makes it ``file://``'s
FILE_SYSTEM_CLASS = "io.streamspark.hadoop.NioLocalFileSystem"
FILE_SYSTEM_SETTING = "spark.hadoop.fs.file.impl"
#: the environment switch that turns it off
SWITCH = NIO_LOCAL_FS
#: the environment variable whose class path Spark's launcher appends to its own jars
DIST_CLASS_PATH = "SPARK_DIST_CLASSPATH"
_CLASS_FILE = FILE_SYSTEM_CLASS.replace(".", "/") + ".class"

_SOURCE = Path(__file__).with_name("java") / "NioLocalFileSystem.java"


def _hadoop_api_jar() -> Optional[Path]:
    return pyspark_jar("hadoop-client-api-*.jar")


def _javac() -> Optional[Path]:
    java = java_executable()
    beside = java.parent / "javac" if java is not None else None
    if beside is not None and beside.is_file():
        return beside
    found = shutil.which("javac")
    return Path(found) if found else None


def jar_path(build: bool = True) -> Optional[Path]:
    """The jar of :data:`FILE_SYSTEM_CLASS` for this PySpark installation, compiled now if it is
    not there yet (``build=False``: only if it is); None when turned off, off POSIX systems,
    without a JDK, with a cache directory it cannot write, or when compiling failed (logged
    once: a marker beside the jar keeps later sessions from trying again; Spark then uses
    Hadoop's own file system).

    >>> jar = jar_path(build=False)
    >>> jar is None or jar.suffix == ".jar"
    True
    """
    if not switched_on(SWITCH) or os.name != "posix":
        return None
    api = _hadoop_api_jar()
    if api is None or not _SOURCE.is_file():
        return None
    key = hashlib.sha1(_SOURCE.read_bytes() + api.name.encode()).hexdigest()[:12]
    target = cache_dir() / f"streamspark-hadoop-{key}.jar"
    if target.is_file():
        return target if _holds_the_class(target) else None
    failed = target.with_name(f".{target.name}.failed")
    javac = _javac() if build and not failed.exists() else None
    if javac is None:
        return None
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(target.parent, os.W_OK):
            return None
        with tempfile.TemporaryDirectory() as classes:
            compiled = subprocess.run(
                [str(javac), "-nowarn", "--release", "17", "-d", classes, "-cp", str(api), str(_SOURCE)],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if compiled.returncode != 0:
                logger.warning("Could not compile %s (not tried again): %s", _SOURCE.name, compiled.stderr[-2000:])
                failed.write_text(compiled.stderr[-2000:])
                return None
            with zipfile.ZipFile(partial, "w") as jar:
                for path in sorted(Path(classes).rglob("*.class")):
                    jar.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("Could not build %s: %s", target.name, exc)
        return None
    finally:
        partial.unlink(missing_ok=True)
    return target


def _holds_the_class(jar: Path) -> bool:
    """A jar that Java could not load the class from would break every ``file://`` access."""
    try:
        with zipfile.ZipFile(jar) as archive:
            return _CLASS_FILE in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def class_path_with(jar: Path, current: Optional[str]) -> str:
    """:data:`DIST_CLASS_PATH`'s value with ``jar`` appended (Spark's launcher puts it after Spark's
    own jars, so that the class path the class-data-sharing archive recorded stays its prefix).

    >>> class_path_with(Path("/c/x.jar"), None), class_path_with(Path("/c/x.jar"), "/a.jar")
    ('/c/x.jar', '/a.jar:/c/x.jar')
    >>> class_path_with(Path("/c/x.jar"), "/a.jar:/c/x.jar")
    '/a.jar:/c/x.jar'
    """
    entries = [entry for entry in (current or "").split(os.pathsep) if entry]
    if str(jar) not in entries:
        entries.append(str(jar))
    return os.pathsep.join(entries)
