"""What a new session's driver loads while its JVM starts (engine/driver_preload.py)."""

from __future__ import annotations

import sys

import pytest

from streamspark.engine import planner_processes
from streamspark.engine.driver_preload import DRIVER_MODULES, DriverPreload
from streamspark.engine.planner_processes import data_source_packages_installed, skip_data_source_lookup


def test_the_preload_imports_its_modules_and_leaves_failing_ones_to_their_users():
    sys.modules.pop("colorsys", None)
    preload = DriverPreload(modules=("colorsys", "streamspark_no_such_module"))
    assert preload.packages_installed() is data_source_packages_installed()
    assert preload.imported == ("colorsys",)
    assert "colorsys" in sys.modules


def test_the_preload_imports_what_a_session_imports():
    preload = DriverPreload()
    preload.packages_installed()
    assert preload.imported == DRIVER_MODULES
    assert {"pandas", "pyarrow"} <= set(sys.modules)


def test_the_preload_finds_an_installed_data_source_package(tmp_path, monkeypatch):
    (tmp_path / "pyspark_preload_probe.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert DriverPreload(modules=()).packages_installed() is True


def test_a_failed_lookup_is_not_known_and_asked_again(monkeypatch):
    def unreadable() -> bool:
        raise PermissionError("a folder on sys.path")

    monkeypatch.setattr("streamspark.engine.driver_preload.data_source_packages_installed", unreadable)
    assert DriverPreload(modules=()).packages_installed() is None


def test_a_known_answer_spares_the_lookup(monkeypatch):
    def no_walk() -> bool:
        raise AssertionError("sys.path walked again")

    monkeypatch.setattr(planner_processes, "data_source_packages_installed", no_walk)
    # a package is installed: Spark looks itself, and the session is not even asked
    assert skip_data_source_lookup(spark=None, installed=True) is False
    with pytest.raises(AssertionError, match="walked again"):
        skip_data_source_lookup(spark=None)
