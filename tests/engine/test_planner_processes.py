"""Spark's Python planner processes: the lookup of data source packages is spared when none is
installed; the others, idle once a query runs, are given back (the ``release-planners`` path),
the session's next query runs as before (Spark starts them again), and the plain path keeps
them. Both paths give the same outputs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Optional

from streamspark.engine import runner as runner_module
from streamspark.engine.fork_server import served_children
from streamspark.engine.planner_processes import PLANNER_MODULES, release_planner_processes, skip_data_source_lookup
from streamspark.engine.session import fork_server
from streamspark.engine.strategies import Strategies


def planner_processes(modules: frozenset[str] = PLANNER_MODULES) -> list[int]:
    """Processes of this process's tree running one of Spark's planner ``modules``, started by
    an interpreter or forked by the session's fork server (whose children show the server's
    command line: the server lists their arguments, and their own forks inherit them)."""
    server = fork_server()
    served = {pid: ["-m", *argv] for pid, argv in served_children(server.folder).items()} if server else {}
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo: list[tuple[int, Optional[list[str]]]] = [(os.getpid(), None)]
    while todo:
        pid, inherited = todo.pop()
        for child in children.get(pid, []):
            argv = served.get(child, inherited)
            if argv is None:
                try:
                    argv = (Path("/proc") / str(child) / "cmdline").read_bytes().decode().split("\0")
                except OSError:
                    continue
                todo.append((child, None))
            else:
                todo.append((child, argv))
            launcher = any(part.endswith("_fork_client.py") for part in argv)  # waits for a served one
            if "pyspark.daemon" in argv and modules & set(argv) and not launcher:
                found.append(child)
    return found


def _run(make_app, src: str, out: str, n: int, fast: bool, monkeypatch) -> list[int]:
    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=() if fast else {"release-planners"}))
    monkeypatch.setattr(runner_module.QueryRunner, "release_planners_after", 0.0)
    app = make_app(max_records_per_partition=10)  # several micro-batches: the release comes after the first
    sdf = app.dataframe(app.topic(src)).apply(lambda v: {"x": v["i"] * 2})
    sdf.to_topic(app.topic(out))
    return sorted(row["x"] for row in app.run(count=n, timeout=60))


def test_a_running_query_releases_the_planners_and_the_next_query_runs(make_app, kafka, spark, monkeypatch):
    src = kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode()} for i in range(50)])
    results = {}
    for fast in (False, True, True):  # the plain path, then two queries in a row with the release
        out = kafka.new_topic()
        outputs = _run(make_app, src, out, 50, fast, monkeypatch)
        left = planner_processes()
        assert (left == []) is fast, left
        produced = sorted(json.loads(m.value())["x"] for m in kafka.consume(out, expected=50))
        results.setdefault(fast, []).append((outputs, produced))
    expected = [2 * i for i in range(50)]
    assert results[False] == [(expected, expected)]
    assert results[True] == [(expected, expected), (expected, expected)]


def test_a_run_without_limits_releases_the_planners_once_its_reader_is_planned(make_app, kafka, spark, monkeypatch):
    """``app.run()`` with neither ``timeout`` nor ``count`` (a service) gives the planner
    processes back as soon as its reader is planned; a limited run keeps them until the query
    has run ``release_planners_after`` seconds or a micro-batch ``release_planners_batch`` (set
    out of reach here)."""
    import threading

    monkeypatch.setattr(runner_module.QueryRunner, "strategies", Strategies(plain=()))
    monkeypatch.setattr(runner_module.QueryRunner, "release_planners_after", 3600.0)
    monkeypatch.setattr(runner_module.QueryRunner, "release_planners_batch", 3600.0)
    src = kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode()} for i in range(30)])

    limited = make_app()
    limited.dataframe(limited.topic(src)).apply(lambda v: {"x": v["i"] * 2}).to_topic(limited.topic(kafka.new_topic()))
    assert len(limited.run(count=30, timeout=60)) == 30
    assert planner_processes()  # kept: the thresholds were not reached

    out = kafka.new_topic()
    app = make_app()
    app.dataframe(app.topic(src)).apply(lambda v: {"x": v["i"] * 2}).to_topic(app.topic(out))
    seen: dict[str, Any] = {}

    def stop_once_released() -> None:
        seen["gone"] = _gone(deadline=60.0)
        seen["status"] = app.status()
        app.stop()

    stopper = threading.Thread(target=stop_once_released, daemon=True)
    stopper.start()
    try:
        app.run()
    finally:
        app.stop()
        stopper.join(timeout=90)
    assert seen["gone"], planner_processes()
    assert seen["status"]["running"]  # given back while the query ran
    produced = sorted(json.loads(m.value())["x"] for m in kafka.consume(out, expected=30))
    assert produced == [2 * i for i in range(30)]


def _gone(deadline: float = 15.0) -> bool:
    """Whether the planner processes end within ``deadline`` seconds (Spark does not wait for
    the daemons it stops)."""
    end = time.monotonic() + deadline
    while planner_processes():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def test_releasing_stops_the_planner_factories_and_their_processes(make_app, kafka, spark, monkeypatch):
    src = kafka.new_topic()
    kafka.produce(src, [{"value": json.dumps({"i": i}).encode()} for i in range(5)])
    _run(make_app, src, kafka.new_topic(), 5, False, monkeypatch)  # the plain path keeps them
    assert planner_processes()
    assert release_planner_processes(spark) == 2  # creating the data source, planning its reader
    assert _gone()


def test_a_session_it_cannot_reach_leaves_everything_as_it_is():
    class NoJvm:
        @property
        def sparkContext(self):
            raise RuntimeError("no JVM here")

    assert release_planner_processes(NoJvm()) == 0


def _lookup_field(spark: Any) -> Any:
    """Spark's record of its lookup of Python data source packages (a Scala ``Option``)."""
    jvm = spark._jvm
    field = jvm.java.lang.Class.forName("org.apache.spark.sql.execution.datasources.DataSourceManager$").getDeclaredField(
        "dataSourceBuilders"
    )
    field.setAccessible(True)
    return field


def test_no_process_looks_for_data_source_packages_when_none_is_installed(spark):
    field = _lookup_field(spark)
    assert field.get(None).get().isEmpty()  # the shared session got the empty answer
    nothing = spark._jvm.java.lang.Class.forName("scala.None$").getDeclaredField("MODULE$").get(None)
    field.set(None, nothing)  # as a session that has not looked yet
    assert skip_data_source_lookup(spark) is True
    assert field.get(None).get().isEmpty()
    assert skip_data_source_lookup(spark) is False  # given once only

    from pyspark.sql.datasource import DataSource

    class Probe(DataSource):
        @classmethod
        def name(cls) -> str:
            return "lookup_probe"

    spark.dataSource.register(Probe)  # Spark would look here
    assert planner_processes(frozenset({"pyspark.sql.worker.lookup_data_sources"})) == []


def test_an_installed_data_source_package_is_left_to_sparks_lookup(tmp_path, monkeypatch):
    (tmp_path / "pyspark_custom_source.py").write_text("from pyspark.sql.datasource import DataSource\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert skip_data_source_lookup(spark=None) is False  # Spark is not even asked
