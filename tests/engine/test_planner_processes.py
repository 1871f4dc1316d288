"""Spark's Python planner processes: the lookup of data source packages is spared when none is
installed; the others, idle once a query runs, are given back (the ``release-planners`` path),
the session's next query runs as before (Spark starts them again), and the plain path keeps
them. Both paths give the same outputs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from streamspark.engine import runner as runner_module
from streamspark.engine.planner_processes import PLANNER_MODULES, release_planner_processes, skip_data_source_lookup
from streamspark.engine.strategies import Strategies


def planner_processes(modules: frozenset[str] = PLANNER_MODULES) -> list[int]:
    """Processes of this process's tree running one of Spark's planner ``modules``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                argv = (Path("/proc") / str(child) / "cmdline").read_bytes().decode().split("\0")
            except OSError:
                continue
            if "pyspark.daemon" in argv and modules & set(argv):
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


def test_releasing_twice_finds_nothing_more_to_stop(spark):
    release_planner_processes(spark)
    assert planner_processes() == []
    # the factories stay registered, stopped: stopping them again is harmless
    assert release_planner_processes(spark) >= 0
    assert planner_processes() == []


def test_a_session_it_cannot_reach_leaves_everything_as_it_is():
    class NoJvm:
        @property
        def sparkContext(self):
            raise RuntimeError("no JVM here")

    assert release_planner_processes(NoJvm()) == 0


def test_the_session_did_not_start_a_process_to_look_for_data_source_packages(spark):
    """The shared session's queries registered and read Python data sources without it."""
    lookup = frozenset({"pyspark.sql.worker.lookup_data_sources"})
    assert planner_processes(lookup) == []
    found = spark._jvm.java.lang.Class.forName("org.apache.spark.sql.execution.datasources.DataSourceManager$")
    field = found.getDeclaredField("dataSourceBuilders")
    field.setAccessible(True)
    assert field.get(None).get().isEmpty()  # Spark's answer is there: no package found
    assert skip_data_source_lookup(spark) is False  # and it is given once only


def test_an_installed_data_source_package_is_left_to_sparks_lookup(tmp_path, monkeypatch):
    (tmp_path / "pyspark_custom_source.py").write_text("from pyspark.sql.datasource import DataSource\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert skip_data_source_lookup(spark=None) is False  # Spark is not even asked
