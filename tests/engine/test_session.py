"""Settings the shared SparkSession gets on a local master (engine/session.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from streamspark.engine.session import LOCAL_CHECKPOINT_FILE_MANAGER, LOCAL_GC, LOCAL_INITIAL_HEAP, _with_local_defaults

KEY = "spark.sql.streaming.checkpointFileManagerClass"


def test_local_defaults_add_the_checkpoint_file_manager_unless_the_user_chose_one():
    assert _with_local_defaults({"spark.sql.shuffle.partitions": "4"})[KEY] == LOCAL_CHECKPOINT_FILE_MANAGER
    mine = "org.example.MyCheckpointFileManager"
    conf = {KEY: mine, "spark.sql.shuffle.partitions": "4"}
    merged = _with_local_defaults(conf)
    assert merged[KEY] == mine and merged["spark.sql.shuffle.partitions"] == "4"
    assert conf == {KEY: mine, "spark.sql.shuffle.partitions": "4"}  # the caller's dict is left alone


JAVA = "spark.driver.extraJavaOptions"


@pytest.mark.parametrize(
    "conf, driver_memory, serial",
    [
        ({}, None, True),  # Spark's default heap, 1g
        ({"spark.driver.memory": "1g"}, None, True),
        ({"spark.driver.memory": "2048m"}, None, True),
        ({"spark.driver.memory": "4g"}, None, False),  # a large heap keeps the JVM's choice
        ({"spark.driver.memory": "1g"}, "8g", False),  # as spark-submit gave it
        ({JAVA: "-XX:+UseParallelGC -Dx=1"}, None, False),  # the user's collector
    ],
)
def test_a_small_local_driver_heap_gets_the_serial_collector(conf, driver_memory, serial):
    options = _with_local_defaults(conf, driver_memory=driver_memory)[JAVA]
    assert (LOCAL_GC in options.split()) is serial
    if JAVA in conf:
        assert options.endswith(conf[JAVA])  # theirs kept, after ours
        assert "-XX:+UseSerialGC" not in options


@pytest.mark.parametrize("where", ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "spark-defaults.conf", "defaultJavaOptions"])
def test_a_collector_chosen_where_the_jvm_also_reads_options_is_left_alone(where, monkeypatch, tmp_path):
    """Two collectors stop the JVM from starting: none is added when one is chosen elsewhere."""
    conf: dict[str, str] = {}
    if where == "spark-defaults.conf":
        (tmp_path / "spark-defaults.conf").write_text("spark.driver.defaultJavaOptions  -XX:+UseParallelGC\n")
        monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    elif where == "defaultJavaOptions":
        conf["spark.driver.defaultJavaOptions"] = "-XX:+UseZGC"
    else:
        monkeypatch.setenv(where, "-XX:+UseParallelGC")
    assert LOCAL_GC not in _with_local_defaults(conf).get(JAVA, "")


def test_the_serial_collector_comes_with_a_small_initial_heap():
    options = _with_local_defaults({})[JAVA].split()
    assert options.index(LOCAL_INITIAL_HEAP) == options.index(LOCAL_GC) + 1
    assert LOCAL_INITIAL_HEAP not in _with_local_defaults({"spark.driver.memory": "4g"}).get(JAVA, "")


@pytest.mark.parametrize("where", ["extraJavaOptions", "JAVA_TOOL_OPTIONS", "defaultJavaOptions", "spark-defaults.conf"])
def test_an_initial_heap_chosen_by_the_user_is_theirs(where, monkeypatch, tmp_path):
    conf: dict[str, str] = {}
    if where == "spark-defaults.conf":  # Java properties: "=" separates too
        (tmp_path / "spark-defaults.conf").write_text('spark.driver.defaultJavaOptions="-Xms1g"\n')
        monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    elif where == "extraJavaOptions":
        conf[JAVA] = "-Dx=1 -Xms512m"
    elif where == "defaultJavaOptions":
        conf["spark.driver.defaultJavaOptions"] = "-XX:InitialHeapSize=536870912"
    else:
        monkeypatch.setenv(where, "-Xms512m")
    options = _with_local_defaults(conf)[JAVA].split()
    assert LOCAL_GC in options and LOCAL_INITIAL_HEAP not in options


def test_other_options_are_not_an_initial_heap():
    assert LOCAL_INITIAL_HEAP in _with_local_defaults({JAVA: "-Xss4m -XX:MaxHeapSize=1g"})[JAVA].split()


def test_the_shared_local_session_runs_the_serial_collector(spark):
    args = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert LOCAL_GC in args and LOCAL_INITIAL_HEAP in args
    beans = spark._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    names = {bean.getName() for bean in beans}
    assert names == {"Copy", "MarkSweepCompact"}, names  # the serial collector's generations


def test_shared_local_session_writes_checkpoints_through_the_filesystem_api(spark):
    assert spark.conf.get(KEY) == LOCAL_CHECKPOINT_FILE_MANAGER
    # the class exists in this Spark (a missing one fails only when a query starts)
    assert spark._jvm.java.lang.Class.forName(LOCAL_CHECKPOINT_FILE_MANAGER) is not None


@pytest.mark.parametrize("master, env", [("sc://127.0.0.1:15002", {}), ("local[2]", {"SPARK_REMOTE": "sc://h:1"})])
def test_spark_connect_is_refused_at_start_with_the_reason(make_app, kafka, monkeypatch, master, env):
    from streamspark.exceptions import StreamsparkException

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    topic = kafka.new_topic()
    app = make_app(spark_master=master)
    app.dataframe(app.topic(topic))
    with pytest.raises(StreamsparkException, match="Spark Connect .* is not supported: .*foreachBatch"):
        app.run(timeout=5)


def test_local_sessions_log_spark_errors_only_unless_the_user_configures_log4j():
    from streamspark.engine.session import log4j_config

    options = _with_local_defaults({})["spark.driver.extraJavaOptions"]
    path = log4j_config()
    assert path is not None and f"-Dlog4j2.configurationFile=file:{path}" in options
    with open(path) as f:
        text = f.read()
    assert "appender.console.filter.threshold.level = error" in text
    assert "org.apache.spark.sql.execution.streaming" in text
    mine = "-Dlog4j2.configurationFile=file:/etc/mine.properties"
    assert (
        _with_local_defaults({"spark.driver.extraJavaOptions": mine})["spark.driver.extraJavaOptions"].count(
            "log4j2.configurationFile"
        )
        == 1
    )


def test_shared_session_runs_with_the_log4j_config(spark):
    args = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert any(a.startswith("-Dlog4j2.configurationFile=file:") for a in args)


def _report_error(server, exc: BaseException) -> None:
    """What socketserver does when a request's handler raised ``exc``."""
    try:
        raise exc
    except BaseException:
        server.handle_error(None, ("127.0.0.1", 1))


@pytest.mark.parametrize("exc", [EOFError(), ConnectionResetError(104, "Connection reset by peer")])
def test_the_jvm_closing_its_accumulator_connection_prints_no_traceback(spark, capsys, exc):
    """A SIGTERM that reaches the JVM ends it while the program still finishes its
    micro-batch: the accumulator server's connection then ends in one of these."""
    _report_error(spark.sparkContext._accumulatorServer, exc)
    assert capsys.readouterr().err == ""


def test_other_accumulator_server_errors_are_still_reported(spark, capsys):
    _report_error(spark.sparkContext._accumulatorServer, ValueError("token is not correct"))
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: token is not correct" in err


def test_the_daemon_preloads_what_imports_and_reports_what_does_not(capsys):
    from streamspark.engine._daemon import preload

    assert preload(("json", "streamspark_no_such_module")) == ["json"]
    assert "not preloading streamspark_no_such_module" in capsys.readouterr().err


def test_local_tasks_run_in_workers_forked_from_the_preloading_daemon(spark):
    """The task workers of a local session come from ``streamspark.engine._daemon``, with the
    engine's task modules and pandas already imported before their first task."""
    from streamspark.engine._daemon import PRELOADED

    def probe(_: object) -> list[object]:
        import sys

        main = sys.modules["__main__"]
        spec = getattr(main, "__spec__", None)
        return [getattr(spec, "name", None), sorted(name for name in PRELOADED if name in sys.modules)]

    daemon, loaded = spark.sparkContext.parallelize([0], 1).mapPartitions(lambda it: [probe(x) for x in it]).collect()[0]
    assert daemon == "streamspark.engine._daemon"
    assert loaded == sorted(PRELOADED)


def test_workers_forked_from_the_daemon_draw_their_own_numpy_random_numbers():
    """numpy, unlike ``random``, keeps its global generator's state across a fork: without the
    daemon's fork hook every worker would draw the same numbers."""
    import os

    import numpy as np

    from streamspark.engine._daemon import preload

    preload(("numpy",))
    np.random.seed(7)
    draws = []
    for _ in range(3):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            os.write(write_end, repr(float(np.random.rand())).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        draws.append(os.read(read_end, 64))
        os.close(read_end)
        os.close(write_end)
    assert len(set(draws)) == 3


def test_the_task_daemon_is_used_only_where_a_fresh_interpreter_imports_streamspark(tmp_path):
    from pathlib import Path

    import streamspark
    from streamspark.engine.session import LOCAL_DAEMON, task_daemon

    root = str(Path(streamspark.__file__).resolve().parents[1])
    assert task_daemon({}, script_dir=str(tmp_path), cwd=str(tmp_path)) == LOCAL_DAEMON  # installed
    assert task_daemon({"spark.submit.pyFiles": "deps.zip"}, script_dir=str(tmp_path)) is None
    # found only through the script's folder, started elsewhere: a daemon would not find it
    assert task_daemon({}, script_dir=root, cwd=str(tmp_path)) is None
    assert task_daemon({}, script_dir=root, cwd=root) == LOCAL_DAEMON


_SIGINT_CHILD = r"""
import json, signal
from streamspark.engine.session import get_spark

seen = {}
spark = get_spark("local[1]", warmup=False)  # no handler of the program's: PySpark's is set
first = signal.getsignal(signal.SIGINT)
seen["first"] = getattr(first, "__module__", None)
spark.stop()
spark = get_spark("local[1]", warmup=False)  # the stopped context's handler is not put back
seen["fresh"] = signal.getsignal(signal.SIGINT) is not first
seen["again"] = getattr(signal.getsignal(signal.SIGINT), "__module__", None)
spark.stop()
def stop(signum, frame):
    pass
signal.signal(signal.SIGINT, stop)  # as Application.run() does before it starts the session
spark = get_spark("local[1]", warmup=False)
seen["program"] = signal.getsignal(signal.SIGINT) is stop
spark.stop()
print(json.dumps(seen))
"""


def test_a_sigint_handler_the_program_set_survives_a_new_spark_context():
    """PySpark's SparkContext sets its own SIGINT handler (cancel the jobs, raise
    KeyboardInterrupt); a handler the program set before the session (``app.run()``'s) is put
    back, and PySpark's stays where the program set none."""
    env = {**os.environ, "STREAMSPARK_WARMUP": "0"}
    done = subprocess.run([sys.executable, "-c", _SIGINT_CHILD], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"first": "pyspark.core.context", "fresh": True, "again": "pyspark.core.context", "program": True}
