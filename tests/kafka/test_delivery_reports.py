"""Delivery failures: the producer-wide collector and the error that reports them."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["streamspark.engine._producers", "streamspark.kafka.exceptions"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_task_producers_report_failures_only_through_the_collector():
    from streamspark.engine._producers import DeliveryReports, reporting_config

    reports = DeliveryReports()
    config = reporting_config({"bootstrap.servers": "x", "on_delivery": print, "linger.ms": 5}, reports)
    # ours wins over a user's per-producer callback; successes never reach Python
    assert config["on_delivery"] is reports and config["delivery.report.only.error"] is True
    assert config["linger.ms"] == 5
