"""Several tasks creating the same Iceberg namespace at once (sinks/_iceberg_namespace.py)."""

from __future__ import annotations

import threading

import pytest

from streamspark.sinks._iceberg_namespace import ensure_namespace


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
