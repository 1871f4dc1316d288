"""RocksDB's native library, unpacked once, for a faster first stateful micro-batch on a local master.

Spark's state store (the RocksDB provider) loads RocksDB's JNI library when a session first
uses state. Unless the library is on the JVM's library path, RocksDB unpacks it from its jar
(about 15 MB) into a temporary file in every new JVM: 0.14-0.4 s of the first stateful
micro-batch, measured on 2 cores, against 0.05-0.14 s to load an unpacked copy.

:func:`library_dir` unpacks the copy for the running platform once per PySpark installation
into the cache directory of :mod:`.jvm_archive` (``$STREAMSPARK_CACHE_DIR``, else
``$XDG_CACHE_HOME/streamspark``, else ``~/.cache/streamspark``), and :func:`~streamspark.engine.session.get_spark` puts that
directory on the library path of a local session's JVM it starts
(``spark.driver.extraLibraryPath``, unless the program, spark-submit or ``spark-defaults.conf``
sets one). RocksDB looks for its library there first and unpacks
nothing. ``STREAMSPARK_ROCKSDB_LIBRARY=0`` turns this off.

>>> jni_library_name("Linux", "x86_64", "glibc")
'librocksdbjni-linux64.so'
>>> jni_library_name("Linux", "aarch64", "glibc"), jni_library_name("Darwin", "arm64", "")
('librocksdbjni-linux-aarch64.so', None)
"""

from __future__ import annotations

import logging
import os
import platform
import uuid
import zipfile
from pathlib import Path
from typing import Optional

from ._env import ROCKSDB_LIBRARY, switched_on
from .jvm_archive import cache_dir, pyspark_jar

__all__ = ("jni_library_name", "library_dir")

logger = logging.getLogger(__name__)

#: the JNI library of RocksDB's jar per Linux machine type (glibc builds; RocksDB's own names)
_LINUX_NAMES = {"x86_64": "linux64", "amd64": "linux64", "aarch64": "linux-aarch64", "arm64": "linux-aarch64"}


def jni_library_name(system: str, machine: str, libc: str) -> Optional[str]:
    """The file name RocksDB looks for on the library path on this platform; None where this
    module does not unpack one (not Linux with glibc on x86-64 or ARM64: RocksDB then unpacks
    it itself, as without this module)."""
    suffix = _LINUX_NAMES.get(machine.lower()) if system == "Linux" and libc == "glibc" else None
    return f"librocksdbjni-{suffix}.so" if suffix else None


def _rocksdb_jar() -> Optional[Path]:
    return pyspark_jar("rocksdbjni-*.jar")


def library_dir() -> Optional[Path]:
    """The directory holding RocksDB's unpacked JNI library for this platform and PySpark
    installation, unpacked now if it is not there yet; None when turned off
    (``STREAMSPARK_ROCKSDB_LIBRARY=0``), on other platforms, or when it cannot be unpacked
    (logged; RocksDB then unpacks it itself)."""
    if not switched_on(ROCKSDB_LIBRARY):
        return None
    name = jni_library_name(platform.system(), platform.machine(), platform.libc_ver()[0])
    jar = _rocksdb_jar()
    if name is None or jar is None:
        return None
    directory = cache_dir() / jar.stem  # rocksdbjni-<version>: one per RocksDB version
    target = directory / name
    if target.is_file():
        return directory
    partial = directory / f".{name}.{uuid.uuid4().hex[:8]}.partial"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(jar) as archive, archive.open(name) as packed, open(partial, "wb") as out:
            while chunk := packed.read(1 << 20):
                out.write(chunk)
        os.replace(partial, target)  # a JVM never maps a half-written library
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        logger.warning("Could not unpack RocksDB's native library from %s: %s", jar, exc)
        return None
    finally:
        partial.unlink(missing_ok=True)
    return directory
