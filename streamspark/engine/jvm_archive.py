"""A class-data-sharing (CDS) archive of Spark's JVM, for a faster Spark start on a local master.

A fresh JVM spends most of Spark's start-up and of the first query loading, verifying and
compiling classes. Java can map the classes a previous run loaded from an archive instead
(``-XX:SharedArchiveFile``). Build the archive once per installation: it is tied to the Java
runtime and to PySpark's jars. The bootstrap script builds it; it takes about a minute:

.. code-block:: shell

    python -m streamspark.engine.jvm_archive          # build it if missing (prints its path)
    python -m streamspark.engine.jvm_archive --force  # build it again

:func:`~streamspark.engine.session.get_spark` then starts local sessions with it, and with the
JVM's quick (C1) compiler only. If the Java runtime or PySpark changes, the archive no longer
matches and Java ignores it silently. Rebuild it then. ``STREAMSPARK_JVM_ARCHIVE=0`` turns both
off.

Building runs a small pipeline (the embedded broker, stateful and windowed steps) in a child
process. That process's JVM writes the archive when it exits, and the file is renamed into place
only after that JVM has exited cleanly. A half-written archive would crash the JVM that maps it.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Optional

from ._env import NIO_LOCAL_FS, switched_on

__all__ = ("archive_path", "cache_dir", "java_executable", "java_options", "build_archive", "pyspark_jar")

logger = logging.getLogger(__name__)

#: ``-Xlog`` settings that keep a mismatched archive from printing a warning on every start
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
#: C1 only: the JVM of a local session mostly moves Arrow batches between Python processes, and
#: C2 compiles cost about 4 CPU-seconds at the first query of a session (measured on 2 cores)
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def java_executable() -> Optional[Path]:
    """The ``java`` of ``$JAVA_HOME``, else the one on the ``PATH`` (resolved); None without one."""
    home = os.environ.get("JAVA_HOME")
    found = Path(home, "bin", "java") if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def pyspark_jar(pattern: str) -> Optional[Path]:
    """The jar of the installed PySpark whose name matches ``pattern`` (the last one by name);
    None without one.

    >>> pyspark_jar("spark-core_*.jar").name.startswith("spark-core_")
    True
    """
    jars = sorted(_pyspark_jars().glob(pattern))
    return jars[-1] if jars else None


def cache_dir() -> Path:
    """Where streamspark keeps what it prepares once per installation (this archive, RocksDB's
    unpacked library): ``$STREAMSPARK_CACHE_DIR``, else ``$XDG_CACHE_HOME/streamspark``, else
    ``~/.cache/streamspark``."""
    base = os.environ.get("STREAMSPARK_CACHE_DIR")
    return Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "streamspark")


def archive_path() -> Optional[Path]:
    """Where the archive for this Java runtime and PySpark installation lives (it may not exist
    yet), in :func:`cache_dir`; None without a Java runtime."""
    import pyspark

    java = java_executable()
    if java is None:
        return None
    jvm = java.parent.parent / "lib" / "server" / "libjvm.so"
    stamp = (jvm if jvm.exists() else java).stat().st_mtime_ns
    jars = _pyspark_jars()
    # Java checks each jar's size and time against the archive's record and ignores a stale
    # archive silently: a PySpark installed again at the same path needs an archive of its own
    installed = max((jar.stat().st_mtime_ns for jar in jars.glob("spark-*.jar")), default=0)
    key = hashlib.sha1(f"{pyspark.__version__}|{jars}|{java}|{stamp}|{installed}".encode()).hexdigest()[:12]
    return cache_dir() / f"spark-{pyspark.__version__}-{key}.jsa"


def _enabled() -> bool:
    return switched_on("STREAMSPARK_JVM_ARCHIVE")


def java_options() -> str:
    """JVM options for a local session: the archive when it exists, and the quick compiler;
    empty when turned off with ``STREAMSPARK_JVM_ARCHIVE=0``."""
    if not _enabled():
        return ""
    path = archive_path()
    if path is None or not path.is_file():
        return QUICK_JIT
    return f"-XX:SharedArchiveFile={path} {_QUIET} {QUICK_JIT}"


def build_archive(path: Optional[Path] = None, *, force: bool = False, timeout: float = 600) -> Optional[Path]:
    """Build the archive (in a child process) unless it exists; return its path.

    None when there is no Java runtime, when it is turned off, or when building failed (the
    reason is logged; Spark then starts without it).
    """
    target = path or archive_path()
    if target is None or not _enabled():
        return None
    if target.is_file() and not force:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.partial")
    started = time.monotonic()
    logger.info("Building the JVM class archive %s (about a minute, once)", target)
    try:
        child = subprocess.run(
            [sys.executable, "-m", "streamspark.engine.jvm_archive", "--dump-into", str(partial)],
            capture_output=True,
            text=True,
            timeout=timeout,
            # without the archive, and without our file system's jar: the archive records the
            # class path, and a session may append that jar (or not) to it
            env={**os.environ, "STREAMSPARK_JVM_ARCHIVE": "0", NIO_LOCAL_FS: "0"},
        )
        if child.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
            logger.warning("Could not build the JVM class archive (exit %s): %s", child.returncode, child.stderr[-2000:])
            return None
        os.replace(partial, target)
    except subprocess.TimeoutExpired:
        logger.warning("Building the JVM class archive took longer than %ss: skipped", timeout)
        return None
    finally:
        partial.unlink(missing_ok=True)
    logger.info("JVM class archive ready in %.0fs: %s", time.monotonic() - started, target)
    return target


def _warm_up(spark_conf: dict[str, str]) -> None:
    """Run the kinds of query streamspark runs, so that the JVM loads their classes."""
    from streamspark import Application
    from streamspark.dataframe.windows import Count, Mean
    from streamspark.testing import EmbeddedBroker

    def count(value: dict, state) -> dict:  # type: ignore[no-untyped-def]
        n = state.get("n", 0) + 1
        state.set("n", n)
        return {**value, "n": n}

    with EmbeddedBroker() as broker, tempfile.TemporaryDirectory() as state_dir:

        def app(group: str) -> Application:
            return Application(
                broker_address=broker.address,
                consumer_group=group,
                auto_offset_reset="earliest",
                state_dir=state_dir,
                spark_conf=spark_conf,
                loglevel="WARNING",
            )

        plain_app = app("jvm-archive-plain")
        source, output = plain_app.topic("readings"), plain_app.topic("outputs")
        with plain_app.get_producer() as producer:
            for i in range(200):
                producer.produce(
                    source.name, key=f"k{i % 7}", value=f'{{"i": {i}, "temp": {i % 40}, "ts": {1_700_000_000_000 + i * 100}}}'
                )
        plain = plain_app.dataframe(source)
        plain = plain[plain["temp"] > 5]
        plain["f"] = plain["temp"] * 9 / 5 + 32
        plain.to_topic(output)
        plain_app.run(timeout=2.0, collect=False)
        stateful_app = app("jvm-archive-stateful")
        stateful = stateful_app.dataframe(stateful_app.topic("readings")).apply(count, stateful=True)
        stateful.tumbling_window(1000).agg(avg=Mean("temp"), n=Count()).final().to_topic(stateful_app.topic("outputs"))
        stateful_app.run(timeout=2.0, collect=False)


def _dump_into(partial: Path) -> int:
    """In the child process: warm up a JVM that writes its loaded classes to ``partial`` at exit."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    _warm_up({"spark.driver.extraJavaOptions": f"-XX:ArchiveClassesAtExit={partial} {_QUIET}"})
    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()
    gateway = SparkContext._gateway  # noqa: SLF001 (the JVM process has no public handle)
    proc = getattr(gateway, "proc", None)
    if proc is None:
        print("no JVM process to wait for", file=sys.stderr)
        return 1
    proc.stdin.close()  # Spark's JVM exits when the driver's pipe closes, writing the archive
    return 0 if proc.wait(timeout=300) == 0 else 1


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamspark.engine.jvm_archive", description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="build it again even if it exists")
    parser.add_argument("--dump-into", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dump_into is not None:
        return _dump_into(args.dump_into)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from .local_file_system import jar_path  # it builds on this module

    jar = jar_path()  # the local file system's jar (see that module), before the archive
    if jar is not None:
        print(jar)
    built = build_archive(force=args.force)
    if built is None:
        print("no JVM class archive (no Java runtime, turned off, or the build failed: see above)")
        return 0  # Spark runs without it
    print(built)
    return 0


if __name__ == "__main__":
    sys.exit(main())
