"""Several tasks opening one Iceberg catalog and creating one namespace at once (sinks/_iceberg_races.py)."""

from __future__ import annotations

import threading

import pytest

from streamspark.sinks._iceberg_races import ensure_namespace, open_catalog


def _catalog(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    # one catalog instance per "task", as each Spark worker process opens its own
    return SqlCatalog("race", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")


def test_tasks_racing_to_create_a_namespace_all_succeed(tmp_path):
    _catalog(tmp_path)  # creates the catalog tables once
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def task() -> None:
        catalog = _catalog(tmp_path)
        barrier.wait()
        try:
            ensure_namespace(catalog, "lake")
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    for _ in range(5):  # the race is timing-dependent: several rounds on fresh namespaces
        threads = [threading.Thread(target=task) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        catalog = _catalog(tmp_path)
        assert catalog.namespace_exists("lake")
        catalog.drop_namespace("lake")
    assert errors == []


def test_other_failures_still_raise(tmp_path):
    class Broken:
        def create_namespace_if_not_exists(self, namespace):
            raise ConnectionError("catalog unreachable")

        def namespace_exists(self, namespace):
            raise ConnectionError("catalog unreachable")

    with pytest.raises(ConnectionError, match="unreachable"):
        ensure_namespace(Broken(), "lake")


def test_tasks_racing_to_open_a_fresh_sql_catalog_all_succeed(tmp_path):
    """Each round opens a catalog database nobody created yet, from 8 threads at once."""
    errors: list[BaseException] = []
    for round_ in range(5):
        barrier = threading.Barrier(8)
        uri = f"sqlite:///{tmp_path}/fresh{round_}.db"

        def task() -> None:
            from pyiceberg.catalog.sql import SqlCatalog

            barrier.wait()
            try:
                catalog = open_catalog(lambda: SqlCatalog("race", uri=uri, warehouse=f"file://{tmp_path}/wh"))
                ensure_namespace(catalog, "lake")
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)

        threads = [threading.Thread(target=task) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


def test_open_catalog_tries_again_after_losing_the_table_creation_race():
    calls = []

    def load():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("(sqlite3.OperationalError) table iceberg_tables already exists")
        return "catalog"

    assert open_catalog(load) == "catalog"
    assert len(calls) == 2


def test_open_catalog_raises_other_failures_at_once():
    calls = []

    def load():
        calls.append(1)
        raise ConnectionError("catalog unreachable")

    with pytest.raises(ConnectionError, match="unreachable"):
        open_catalog(load)
    assert len(calls) == 1


def test_open_catalog_gives_up_when_the_race_never_settles():
    calls = []

    def load():
        calls.append(1)
        raise RuntimeError("table iceberg_tables already exists")

    with pytest.raises(RuntimeError, match="already exists"):
        open_catalog(load)
    assert len(calls) == 3
