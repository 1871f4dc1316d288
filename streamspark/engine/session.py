"""The shared SparkSession."""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Mapping, Optional

from ._worker_python import restores_sigterm, worker_python
from ._warmup import WarmupSource, start_warmup, warmup_enabled
from . import local_file_system, rocksdb_library
from .jvm_archive import java_options
from .local_file_system import DIST_CLASS_PATH, FILE_SYSTEM_CLASS, FILE_SYSTEM_SETTING, class_path_with
from .masters import default_master, is_local_master, running_session, submitted_conf
from .driver_preload import DriverPreload
from .allocators import lean_allocator_env
from .fork_server import SOCKET_ENV as FORK_SOCKET_ENV
from .fork_server import ForkServer
from .fork_server import enabled as fork_server_enabled
from .planner_processes import skip_data_source_lookup

__all__ = (
    "get_spark",
    "fork_server",
    "wait_warmup",
    "parallelism",
    "local_cores",
    "planned_shuffle_partitions",
    "refuse_spark_connect",
    "py_files_for_streaming_sources",
    "quiet_accumulator_server",
    "leave_sigterm_to_python",
    "task_daemon",
    "DEFAULT_SPARK_CONF",
)

logger = logging.getLogger(__name__)

#: Settings tuned for small machines; every key can be overridden through ``spark_conf`` (or
#: spark-submit's ``--conf``). The Spark UI is off: ``spark.ui.enabled=true`` turns it on.
DEFAULT_SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    # a local master gets one per core instead (see local_cores)
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.streaming.pollingDelay": "50ms",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.stateStore.providerClass": ("org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"),
    # a state commit uploads the keys it changed, not a snapshot of the store (Spark snapshots
    # in the background); checkpoints written either way carry on with the other
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.python.worker.reuse": "true",
    "spark.driver.memory": "1g",
}

#: Spark's setting for the module its Python daemon runs; a local session runs ours (:mod:`._daemon`)
DAEMON_MODULE = "spark.python.daemon.module"
LOCAL_DAEMON = "streamspark.engine._daemon"

_lock = threading.Lock()
#: the background warm-up of the current local session's Python processes (see :mod:`._warmup`)
_warmup: Optional[threading.Thread] = None


def get_spark(
    master: Optional[str] = None, conf: Optional[Mapping[str, Any]] = None, app_name: str = "streamspark", warmup: bool = True
) -> Any:
    """Return the process-wide SparkSession, creating it on first use.

    A session already running in the process is returned as it is (Spark has one session per
    JVM; a master of another kind than ``master`` is logged). A new session gets ``master``
    (None: :func:`.masters.default_master`, i.e. spark-submit's ``--master`` or ``local[*]``)
    and its settings in Spark's own order of precedence: ``conf`` (the application's
    ``spark_conf``, set in code), then what spark-submit was given (``--conf``), then
    :data:`DEFAULT_SPARK_CONF`. A new session on a local master starts Spark's Python processes
    in the background (:mod:`._warmup`), so that its first query does not wait for them; not
    with ``warmup=False``, for a query that starts right away (it starts the same processes
    itself, and its tasks would queue behind the warm-up's). A JVM it starts on a local master
    gets the start-up settings of :mod:`.jvm_archive`, :mod:`.rocksdb_library` and
    :mod:`.local_file_system`, and with the Python processes it starts, the memory allocator
    settings of :mod:`.allocators`.
    """
    from pyspark.sql import SparkSession

    master = master or default_master()
    refuse_spark_connect(master)
    global _warmup
    with _lock:
        active = running_session()
        if active is not None:
            running = active.sparkContext.master
            if is_local_master(running) != is_local_master(master):
                logger.warning(
                    "Spark already runs in this process with master %s: spark_master=%s has no effect", running, master
                )
            return active
        submitted = submitted_conf()
        # a fork server another streamspark program started (this one's parent) serves that
        # program's session only: this one's Python processes fork from its own, or start as before
        os.environ.pop(FORK_SOCKET_ENV, None)
        user = dict(conf or {})
        merged = {**DEFAULT_SPARK_CONF, **user}
        if "PYSPARK_PYTHON" not in os.environ and not {"spark.pyspark.python"} & (merged.keys() | submitted.keys()):
            # on a local master Spark's Python processes run here: start them without the zipped
            # PySpark that Spark puts first on their path (no bytecode cache, ~1 CPU-s each)
            os.environ["PYSPARK_PYTHON"] = worker_python(sys.executable) if is_local_master(master) else sys.executable
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        fs_jar: Optional[Path] = None
        # the allocator settings of the JVM started here (a JVM already running, from
        # spark-submit, keeps its own), and of the Python processes it and the fork server start
        allocators = (
            lean_allocator_env(os.environ) if is_local_master(master) and "PYSPARK_GATEWAY_PORT" not in os.environ else {}
        )
        if is_local_master(master):
            memory = "spark.driver.memory"
            merged = _with_local_defaults(merged, driver_memory=user.get(memory, submitted.get(memory, merged.get(memory))))
            if SHUFFLE_PARTITIONS not in user and SHUFFLE_PARTITIONS not in submitted:
                merged[SHUFFLE_PARTITIONS] = str(local_cores(master))
            # bind Spark to the loopback interface (and skip its warning about the host name)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            fs_jar = _local_file_system_jar(user, submitted)
            if fs_jar is not None:
                merged[FILE_SYSTEM_SETTING] = FILE_SYSTEM_CLASS
            daemon = task_daemon({**submitted, **merged})
            if daemon is not None:
                merged.setdefault(DAEMON_MODULE, daemon)
            _start_fork_server(merged, submitted, allocators)
        # what spark-submit was given wins over streamspark's defaults, not over the program's own
        merged = {key: value for key, value in merged.items() if key not in submitted or key in user}
        builder = SparkSession.builder.master(master)
        if "spark.app.name" not in submitted:
            builder = builder.appName(app_name)
        for key, value in merged.items():
            builder = builder.config(key, str(value))
        logger.info("Starting Spark (master=%s)", master)
        # the JVM this process starts may leave SIGTERM to the program when the Python processes
        # it starts in turn get SIGTERM's default back (they inherit an ignored signal)
        sigterm_to_python = (
            "PYSPARK_GATEWAY_PORT" not in os.environ
            and "spark.pyspark.python" not in merged
            and "spark.pyspark.python" not in submitted
            and restores_sigterm(os.environ.get("PYSPARK_PYTHON"))
        )
        class_path = os.environ.get(DIST_CLASS_PATH)
        if fs_jar is not None:  # on the class path of the JVM started here, for it alone
            os.environ[DIST_CLASS_PATH] = class_path_with(fs_jar, class_path)
        # for the JVM started here and the Python processes it starts, not for this process's
        # later children
        os.environ.update(allocators)
        # where the fork server listens, for the JVM started here alone (the program's later
        # children must not use it: it ends with this program)
        if _fork_server is not None:  # (never started under spark-submit)
            os.environ[FORK_SOCKET_ENV] = _fork_server.socket_path
        # pandas, pyarrow and the lookup of data source packages while the JVM starts
        preload = DriverPreload()
        sigint = _program_sigint_handler()
        try:
            spark = builder.getOrCreate()
        finally:
            if sigint is not None:  # PySpark's SparkContext sets its own
                signal.signal(signal.SIGINT, sigint)
            for name in allocators:
                os.environ.pop(name, None)
            os.environ.pop(FORK_SOCKET_ENV, None)
            if fs_jar is not None:
                if class_path is None:
                    os.environ.pop(DIST_CLASS_PATH, None)
                else:
                    os.environ[DIST_CLASS_PATH] = class_path
        if sigterm_to_python:
            leave_sigterm_to_python(spark)
        spark.sparkContext.setLogLevel("ERROR")
        quiet_accumulator_server(spark.sparkContext)
        skip_data_source_lookup(spark, installed=preload.packages_installed())
        py_files_for_streaming_sources(spark)
        if spark.sparkContext.uiWebUrl:
            logger.info("Spark UI: %s", spark.sparkContext.uiWebUrl)
        if warmup and warmup_enabled(master):
            spark.dataSource.register(WarmupSource)
            _warmup = start_warmup(spark, parallelism(spark))
        return spark


#: the fork server of this process's local session (see :mod:`.fork_server`), when enabled
_fork_server: Optional[ForkServer] = None


def fork_server() -> Optional[ForkServer]:
    """The fork server Spark's Python processes of this process's local session fork from
    (:mod:`.fork_server`; ``STREAMSPARK_FORK_SERVER=0`` turns it off), or None."""
    return _fork_server


def _start_fork_server(merged: Mapping[str, Any], submitted: Mapping[str, Any], allocators: Mapping[str, str]) -> None:
    """Start the fork server (unless ``STREAMSPARK_FORK_SERVER=0``) when Spark's Python processes
    start through our launcher with our task daemon (the server serves what those run), with
    the ``allocators`` settings those processes get from the JVM (it starts before the JVM)."""
    global _fork_server
    if _fork_server is not None or not fork_server_enabled() or "PYSPARK_GATEWAY_PORT" in os.environ:
        return  # (a JVM that is already running, under spark-submit, would never be told of it)
    python = os.environ.get("PYSPARK_PYTHON")
    chosen = "spark.pyspark.python" in merged or "spark.pyspark.python" in submitted
    if chosen or not restores_sigterm(python) or merged.get(DAEMON_MODULE) != LOCAL_DAEMON:
        logger.debug("The fork server is not used: Spark's Python processes start another way")
        return
    try:
        _fork_server = ForkServer.start(python=str(python), env={**os.environ, **allocators})
    except OSError as exc:
        logger.warning("The fork server could not start (Spark starts its Python processes itself): %s", exc)
        return
    atexit.register(_fork_server.stop)
    logger.debug("Spark's Python processes fork from %s", _fork_server.folder)


def _program_sigint_handler() -> Any:
    """The SIGINT handler the program installed itself (``Application.run()``'s, which finishes
    the micro-batch and stops, or an ignored SIGINT), or None: Python's default, or not the
    main thread.

    A new SparkContext replaces the SIGINT handler of the main thread with PySpark's (cancel
    every job, raise ``KeyboardInterrupt``); a program's own handler is put back after it, so
    Ctrl-C stops ``app.run()`` as cleanly as SIGTERM does.

    >>> import signal
    >>> previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    >>> _program_sigint_handler() is None
    True
    >>> stop = lambda signum, frame: None
    >>> _ = signal.signal(signal.SIGINT, stop)
    >>> _program_sigint_handler() is stop
    True
    >>> _ = signal.signal(signal.SIGINT, previous)
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    handler = signal.getsignal(signal.SIGINT)
    if handler in (signal.default_int_handler, signal.SIG_DFL, None):
        return None
    if (getattr(handler, "__module__", None) or "").startswith("pyspark."):
        return None  # an earlier SparkContext's (of a session stopped since)
    return handler


def leave_sigterm_to_python(spark: Any) -> bool:
    """Make the JVM this process started ignore SIGTERM, so that a SIGTERM to the program's
    process group (``kill -- -PGID``, a supervisor stopping a group, the bench) reaches the
    program and not Spark: the program finishes its micro-batch, stops the query and then
    Spark, as for a SIGTERM to the program alone. Without it the JVM ended at once, the
    micro-batch in flight failed and Spark printed a Java stack trace on the way out.

    The JVM still goes away with the program: PySpark's gateway exits when the program's end of
    its stdin pipe closes, whatever ended the program (even SIGKILL). An ignored signal is
    inherited by the processes the JVM starts, so :func:`get_spark` calls this only when Spark's
    Python processes start through the launcher of :mod:`._worker_python`, which gives them
    SIGTERM's default back; and only for a JVM launched by this process (under spark-submit the
    JVM is the parent and keeps Spark's handling). Returns whether SIGTERM is now ignored.

    Example::

        leave_sigterm_to_python(spark)   # True on Linux with a HotSpot JVM
    """
    try:
        jvm = spark.sparkContext._jvm  # noqa: SLF001 (PySpark offers no public JVM view)
        jvm.sun.misc.Signal.handle(jvm.sun.misc.Signal("TERM"), jvm.sun.misc.SignalHandler.SIG_IGN)
    except Exception as exc:  # another JVM, or signals Java may not handle: keep Spark's way
        logger.debug("The JVM keeps its SIGTERM handler: %s", exc)
        return False
    return True


def quiet_accumulator_server(context: Any) -> None:
    """Keep PySpark's accumulator server from printing a traceback when Spark's JVM goes away
    first (a SIGTERM that reaches the JVM, e.g. systemd's ``KillMode=control-group`` or a JVM
    that does not leave SIGTERM to the program, ends it while the program still finishes its
    micro-batch): its connection then ends in an ``EOFError`` or a ``ConnectionError``, which is
    logged at debug level. Other errors are reported as before.

    Example::

        quiet_accumulator_server(spark.sparkContext)
    """
    server = getattr(context, "_accumulatorServer", None)
    if server is None:
        return
    report = server.handle_error

    def handle_error(request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (EOFError, ConnectionError)):
            logger.debug("Spark's JVM closed its accumulator connection: %r", exc)
            return
        report(request, client_address)

    server.handle_error = handle_error


#: the folder, under the driver's SparkFiles root, where Spark's planner of a streaming Python
#: data source looks for the application's ``--py-files`` (Spark 4 hands it this fixed job
#: artifact id, and copies nothing there)
STREAMING_PLANNER_FILES = "streaming_job"


def py_files_for_streaming_sources(spark: Any) -> list[str]:
    """Make the application's ``--py-files`` (``spark.submit.pyFiles``) importable by the
    planner of streaming Python data sources; returns the files copied.

    That planner is a Python process on the driver that unpickles the Kafka source (so imports
    streamspark) before the first micro-batch. Spark gives it ``<SparkFiles root>/streaming_job``
    as its files folder and the ``--py-files`` names as imports, but puts the files in the
    root only: a streamspark shipped with ``--py-files`` (rather than installed on the driver)
    is then missing there. Copying the files into that folder is all it takes.
    """
    from pyspark import SparkFiles

    names = [
        os.path.basename(path)
        for path in str(spark.sparkContext.getConf().get("spark.submit.pyFiles", "") or "").split(",")
        if path
    ]
    if not names:
        return []
    root = SparkFiles.getRootDirectory()
    target = os.path.join(root, STREAMING_PLANNER_FILES)
    copied = []
    for name in names:
        source, dest = os.path.join(root, name), os.path.join(target, name)
        if os.path.isfile(source) and not os.path.exists(dest):
            os.makedirs(target, exist_ok=True)
            shutil.copyfile(source, dest)
            copied.append(dest)
    if copied:
        logger.debug("--py-files for the streaming source's planner: %s", copied)
    return copied


def refuse_spark_connect(master: str) -> None:
    """Refuse a Spark Connect master (``sc://…``, or ``SPARK_REMOTE`` set) with the reason.

    Under Spark Connect the ``foreachBatch`` function of a streaming query runs in a Python
    process of the Connect server, not in the application: the per-micro-batch work of the
    driver side (raising a record's error with its topic/partition/offset, the driver side of
    sinks that commit per batch, ``run(count=…)`` and the outputs it returns, the callbacks'
    channel) would happen out of the application's reach. Use ``spark://…`` (standalone),
    ``yarn``, ``k8s://…`` or ``local[*]`` instead.

    >>> refuse_spark_connect("local[2]")
    >>> refuse_spark_connect("sc://spark-host:15002")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    streamspark.exceptions.StreamsparkException: Spark Connect (sc://spark-host:15002) is not supported: ...
    """
    from ..exceptions import StreamsparkException

    remote = master if master.startswith("sc://") else os.environ.get("SPARK_REMOTE", "")
    if not remote and os.environ.get("SPARK_CONNECT_MODE_ENABLED") != "1":
        return
    raise StreamsparkException(
        f"Spark Connect ({remote or 'SPARK_CONNECT_MODE_ENABLED=1'}) is not supported: streamspark's driver side runs "
        "inside each micro-batch's foreachBatch, which Spark Connect executes on the server, out of the "
        "application's reach (errors with their record, sinks' per-batch commits, run(count=...) outputs). "
        "Use a cluster master (spark://..., yarn, k8s://...) or local[*]."
    )


def wait_warmup(timeout: Optional[float] = None) -> bool:
    """Wait for the current session's warm-up (if any) to end; False if it is still running.

    Benchmarks call it to count the warm-up as session start-up; applications need not.
    """
    thread = _warmup
    if thread is None:
        return True
    thread.join(timeout)
    return not thread.is_alive()


SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def local_cores(master: str) -> int:
    """The cores a local master runs tasks on: a new session on it gets as many shuffle
    partitions (a stateful micro-batch then runs one task per core; on two cores, two shuffle
    partitions instead of four cut a small stateful micro-batch from ~0.55 to ~0.4 s).

    >>> [local_cores(m) for m in ("local", "local[3]", "local[2,4]", "local-cluster[2,3,1024]")]
    [1, 3, 2, 6]
    >>> local_cores("local[*]") == (os.cpu_count() or 1)
    True
    """
    import re

    inside = re.search(r"\[(.*)\]", master)
    if inside is None:
        return 1
    parts = [part.strip() for part in inside.group(1).split(",")]
    if master.startswith("local-cluster"):
        return max(1, int(parts[0]) * int(parts[1]))
    if parts[0] == "*":
        return os.cpu_count() or 1
    return max(1, int(parts[0]))


def planned_shuffle_partitions(
    master: str, conf: Optional[Mapping[str, Any]] = None, session: Optional[Any] = None
) -> Optional[int]:
    """The shuffle partitions of a run on ``master`` with the program's ``conf``
    (``spark_conf``), known before it starts: the running ``session``'s own, else the program's
    or spark-submit's setting, else a local master's cores (as :func:`get_spark` sets them).
    None for another master, which leaves them to the cluster's defaults.

    >>> planned_shuffle_partitions("local[3]"), planned_shuffle_partitions("local[3]", {SHUFFLE_PARTITIONS: 12})
    (3, 12)
    >>> planned_shuffle_partitions("spark://host:7077") is None
    True
    """
    if session is not None:
        return int(session.conf.get(SHUFFLE_PARTITIONS))
    chosen = (conf or {}).get(SHUFFLE_PARTITIONS) or submitted_conf().get(SHUFFLE_PARTITIONS)
    if chosen is not None:
        return int(chosen)
    return local_cores(master) if is_local_master(master) else None


def parallelism(spark: Any) -> int:
    """How many tasks Spark runs at once (cores of ``local[*]``, or the cluster's executors)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # no SparkContext here (e.g. Spark Connect)
        return int(spark.conf.get("spark.default.parallelism", "1"))


#: the driver's native library path on a local master: RocksDB's unpacked library (see
#: :mod:`.rocksdb_library`) unless the program sets its own
LIBRARY_PATH = "spark.driver.extraLibraryPath"
#: Hadoop's FileSystem API for checkpoints (offset and commit logs, state store files) on a local
#: master. Spark's default, the FileContext API, checks every rename with ``getFileLinkStatus``,
#: which without Hadoop's native library runs a ``readlink`` process; two log writes per
#: micro-batch took ~80 ms each that way, ~27 ms with FileSystem (still one ``chmod`` process
#: per file, for the same reason).
LOCAL_CHECKPOINT_FILE_MANAGER = "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager"


#: the JVM's garbage collector on a local master with a small driver heap. On 2 cores the JVM
#: picks G1, whose bookkeeping costs memory: with the serial collector the program's peak
#: memory (driver, JVM and Python workers) was 50–140 MB lower at the default 1 GB heap, for
#: the same speed (bench/user.py W2 and W7, two runs each)
LOCAL_GC = "-XX:+UseSerialGC"
#: the initial heap that comes with :data:`LOCAL_GC`. The JVM's default is 1/64 of the
#: machine's memory (384 MiB on 24 GiB), and a young generation that size is soon all resident,
#: though a local session needs much less; the heap grows from here as it fills
LOCAL_INITIAL_HEAP = "-Xms128m"
#: the largest driver heap (MiB) that gets :data:`LOCAL_GC`: a larger heap's full collections
#: would be long pauses on one thread
_SERIAL_GC_MAX_HEAP_MIB = 2048
_GC_FLAG = re.compile(r"-XX:[+]Use\w*GC\b")
_INITIAL_HEAP_FLAG = re.compile(r"(?<![\w-])-Xms\d|-XX:InitialHeapSize=")


def _heap_mib(value: Any) -> Optional[float]:
    """A Spark memory setting (``1g``, ``512m``, ``1024`` MiB) in MiB; None when unreadable.

    >>> _heap_mib("1g"), _heap_mib("512m"), _heap_mib("2048"), _heap_mib("1t"), _heap_mib("lots")
    (1024.0, 512.0, 2048.0, 1048576.0, None)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", str(value).lower())
    if match is None:
        return None
    scale = {"k": 1 / 1024, "": 1, "m": 1, "g": 1024, "t": 1024 * 1024}[match.group(2)]
    return float(match.group(1)) * scale


#: environment variables whose JVM options the driver's JVM also reads
_JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")


def _chosen_elsewhere(flag: re.Pattern[str], conf: Mapping[str, Any]) -> bool:
    """Whether ``flag`` is set where the driver's JVM also reads options: the driver's default
    Java options (in ``conf`` or in a ``spark-defaults.conf``) or the JVM's own environment
    variables. A second collector would stop the JVM from starting; a second initial heap
    would override the user's."""
    places = [str(conf.get("spark.driver.defaultJavaOptions") or "")]
    places += [os.environ.get(name, "") for name in _JAVA_OPTION_VARIABLES]
    places += [line for line in _spark_defaults_lines() if line.strip().startswith("spark.driver.")]
    return any(flag.search(place) for place in places)


def _spark_defaults_lines() -> list[str]:
    """The lines of the ``spark-defaults.conf`` files spark-submit reads (``$SPARK_CONF_DIR``,
    ``$SPARK_HOME/conf``); settings passed as ``--conf`` override theirs."""
    lines: list[str] = []
    spark_home = os.environ.get("SPARK_HOME")
    for folder in (os.environ.get("SPARK_CONF_DIR"), os.path.join(spark_home, "conf") if spark_home else None):
        if folder:
            try:
                with open(os.path.join(folder, "spark-defaults.conf"), encoding="utf-8") as defaults:
                    lines += list(defaults)
            except OSError:
                pass
    return lines


def _in_spark_defaults(key: str) -> bool:
    """Whether a ``spark-defaults.conf`` that spark-submit reads sets ``key``."""
    return any(line.split(maxsplit=1)[:1] == [key] or line.strip().startswith(key + "=") for line in _spark_defaults_lines())


def _local_file_system_jar(user: Mapping[str, Any], submitted: Mapping[str, Any]) -> Optional[Path]:
    """The jar of :mod:`.local_file_system` for a JVM this process starts on a local master; None
    under spark-submit (its JVM runs already), when ``file://``'s file system is chosen elsewhere
    (also ``fs.file.impl`` in Hadoop's ``core-site.xml``, which Spark reads from its conf folder),
    when there is no jar, or when this process runs a JVM without it."""
    chosen = FILE_SYSTEM_SETTING in user or FILE_SYSTEM_SETTING in submitted or _in_spark_defaults(FILE_SYSTEM_SETTING)
    if "PYSPARK_GATEWAY_PORT" in os.environ or chosen:
        return None
    for folder in (os.environ.get("HADOOP_CONF_DIR"), os.environ.get("SPARK_CONF_DIR")):
        if folder and _mentions(os.path.join(folder, "core-site.xml"), "fs.file.impl"):
            return None
    jar = local_file_system.jar_path()
    if jar is not None and not _jvm_can_load(jar):
        return None
    return jar


def _jvm_can_load(jar: Path) -> bool:
    """Whether a new session can use ``jar``: no JVM runs in this process yet (the one started
    next gets it), or the running one (a stopped session's: PySpark keeps its JVM) has it."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway  # noqa: SLF001 (PySpark's handle on its JVM; no public one)
    if gateway is None:
        return True
    return str(jar) in str(gateway.jvm.java.lang.System.getProperty("java.class.path")).split(os.pathsep)


def _mentions(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return text in handle.read()
    except OSError:
        return False


def _with_local_gc(options: str, driver_memory: Any, conf: Optional[Mapping[str, Any]] = None) -> str:
    """``options`` with :data:`LOCAL_GC` added for a driver heap of at most 2 GiB, unless a
    collector is chosen in them or elsewhere (:func:`_chosen_elsewhere`); with it the
    :data:`LOCAL_INITIAL_HEAP`, unless an initial heap is chosen in them or elsewhere.

    >>> _with_local_gc("-Dx=1", "1g")
    '-XX:+UseSerialGC -Xms128m -Dx=1'
    >>> _with_local_gc("-XX:+UseG1GC", "1g"), _with_local_gc("", "8g"), _with_local_gc("-Xms1g", "2g")
    ('-XX:+UseG1GC', '', '-XX:+UseSerialGC -Xms1g')
    >>> _with_local_gc("", "1g", {"spark.driver.defaultJavaOptions": "-XX:+UseZGC"})
    ''
    """
    heap = _heap_mib(driver_memory)
    if _GC_FLAG.search(options) or heap is None or heap > _SERIAL_GC_MAX_HEAP_MIB:
        return options
    conf = conf or {}
    if _chosen_elsewhere(_GC_FLAG, conf):
        return options
    if _INITIAL_HEAP_FLAG.search(options) or _chosen_elsewhere(_INITIAL_HEAP_FLAG, conf):
        return f"{LOCAL_GC} {options}".strip()
    return f"{LOCAL_GC} {LOCAL_INITIAL_HEAP} {options}".strip()


def _with_local_defaults(conf: dict[str, Any], driver_memory: Any = None) -> dict[str, Any]:
    """``conf`` with the settings of a local master added where the user set none: the JVM
    options of :mod:`.jvm_archive`, the garbage collector (:func:`_with_local_gc`), Spark's
    logging (:func:`log4j_config`), the checkpoint file manager and RocksDB's unpacked library
    (:mod:`.rocksdb_library`, on the driver's library path). ``driver_memory``: the
    driver's heap as the session will get it (default: ``conf``'s, else Spark's 1g).

    >>> _with_local_defaults({"spark.sql.streaming.checkpointFileManagerClass": "x"})[
    ...     "spark.sql.streaming.checkpointFileManagerClass"]
    'x'
    """
    merged = dict(conf)
    jvm_options = _with_log4j_config(
        _with_local_gc(
            _with_local_jvm_options(merged.get("spark.driver.extraJavaOptions")),
            driver_memory if driver_memory is not None else merged.get("spark.driver.memory", "1g"),
            merged,
        )
    )
    if jvm_options:
        merged["spark.driver.extraJavaOptions"] = jvm_options
    merged.setdefault("spark.sql.streaming.checkpointFileManagerClass", LOCAL_CHECKPOINT_FILE_MANAGER)
    # for a JVM this process starts, unless a library path is set (a --conf would override
    # spark-defaults.conf's, e.g. the folder of Hadoop's native library)
    if LIBRARY_PATH not in merged and "PYSPARK_GATEWAY_PORT" not in os.environ and not _in_spark_defaults(LIBRARY_PATH):
        rocksdb = rocksdb_library.library_dir()
        if rocksdb is not None:
            merged[LIBRARY_PATH] = str(rocksdb)
    return merged


def task_daemon(conf: Mapping[str, Any], script_dir: Optional[str] = None, cwd: Optional[str] = None) -> Optional[str]:
    """The daemon module for a local session's task workers (:mod:`._daemon`), or None to keep
    Spark's where a fresh interpreter might not import streamspark: with ``--py-files`` (a task
    puts them on its path, after the daemon has started) or when streamspark is found only
    through the running script's folder (a daemon starts in the working directory).

    >>> task_daemon({"spark.submit.pyFiles": "deps.zip"}) is None
    True
    """
    if str(conf.get("spark.submit.pyFiles") or "").strip():
        return None
    root = Path(__file__).resolve().parents[2]  # the folder that holds the streamspark package
    if not root.is_dir():  # imported from a zip
        return None
    first = script_dir if script_dir is not None else (sys.path[0] if sys.path else "")
    here = Path(cwd or os.getcwd()).resolve()
    if first and Path(first).resolve() == root and root != here:
        return None
    return LOCAL_DAEMON


def _with_local_jvm_options(user: Optional[str]) -> str:
    """The user's driver JVM options, after ours (:mod:`.jvm_archive`) so that theirs win; theirs
    alone when they choose an archive or a compiler themselves."""
    user = str(user or "").strip()
    if any(flag in user for flag in ("SharedArchiveFile", "ArchiveClassesAtExit", "TieredStopAtLevel", "Xshare")):
        return user
    return f"{java_options()} {user}".strip()


def _with_log4j_config(options: str) -> str:
    """JVM options with Spark's logging set by :func:`log4j_config`, unless they configure
    log4j themselves."""
    config = None if "log4j" in options else log4j_config()
    return f"-Dlog4j2.configurationFile=file:{config} {options}".strip() if config else options


#: Spark's JVM logging for a local master: errors only, and none from the streaming engine's
#: own bookkeeping (a query stopped by the application is logged by Spark as an error with its
#: stack trace; streamspark reports a failed query itself, with the record that failed).
#: The root level stays at Spark's shell default (warn) and the console drops what is below
#: error: Spark prints "Setting default log level to ..." at start-up whenever a shell's root
#: level differs from that default.
LOG4J2_PROPERTIES = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
logger.streaming.name = org.apache.spark.sql.execution.streaming
logger.streaming.level = off
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = off
"""


def log4j_config() -> Optional[str]:
    """Write :data:`LOG4J2_PROPERTIES` to the temporary directory (once) and return its path;
    None if it cannot be written (Spark then uses its own defaults)."""
    import hashlib
    import tempfile

    digest = hashlib.sha1(LOG4J2_PROPERTIES.encode()).hexdigest()[:10]
    path = os.path.join(tempfile.gettempdir(), f"streamspark-log4j2-{digest}.properties")
    try:
        if not os.path.isfile(path):
            partial = f"{path}.{os.getpid()}"
            with open(partial, "w") as f:
                f.write(LOG4J2_PROPERTIES)
            os.replace(partial, path)
    except OSError as exc:
        logger.debug("no log4j configuration for Spark: %s", exc)
        return None
    return path
