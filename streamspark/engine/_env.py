"""The engine's on/off environment switches (``STREAMSPARK_JVM_ARCHIVE``, ``STREAMSPARK_WARMUP``,
``STREAMSPARK_ROCKSDB_LIBRARY``, ``STREAMSPARK_NIO_LOCAL_FS``, ``STREAMSPARK_FORK_SERVER``)."""

from __future__ import annotations

import os
from typing import Mapping, Optional

__all__ = ("switched_on", "NIO_LOCAL_FS", "ROCKSDB_LIBRARY")

#: turns off :mod:`.local_file_system` (Hadoop's local file system without ``chmod`` processes)
NIO_LOCAL_FS = "STREAMSPARK_NIO_LOCAL_FS"
#: turns off :mod:`.rocksdb_library` (RocksDB's native library unpacked once)
ROCKSDB_LIBRARY = "STREAMSPARK_ROCKSDB_LIBRARY"


def switched_on(name: str, environ: Optional[Mapping[str, str]] = None) -> bool:
    """True unless the variable ``name`` says off (``0``, ``false``, ``no``, ``off``; any case).

    >>> switched_on("STREAMSPARK_WARMUP", {}), switched_on("STREAMSPARK_WARMUP", {"STREAMSPARK_WARMUP": " Off"})
    (True, False)
    """
    env = os.environ if environ is None else environ
    return env.get(name, "1").strip().lower() not in ("0", "false", "no", "off")
