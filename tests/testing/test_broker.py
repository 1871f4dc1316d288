"""The embedded broker's options (streamspark/testing/broker.py)."""

from __future__ import annotations

import os

import pytest
from confluent_kafka.admin import AdminClient

from streamspark.testing import EmbeddedBroker


def _broker_nice(port: int) -> list[int]:
    """The nice values of the processes serving ``port`` (found by their command line)."""
    marker = b"--kafka-port\0" + str(port).encode() + b"\0"
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker not in f.read():
                    continue
            with open(f"/proc/{name}/stat") as f:
                found.append(int(f.read().rsplit(")", 1)[1].split()[16]))
        except OSError:
            continue
    return found


def test_broker_runs_at_the_requested_priority_and_serves():
    with EmbeddedBroker(nice=7) as broker:
        assert _broker_nice(broker.port) and set(_broker_nice(broker.port)) == {os.nice(0) + 7}
        topics = AdminClient({"bootstrap.servers": broker.address}).list_topics(timeout=10).topics
        assert isinstance(topics, dict)


def test_broker_priority_out_of_range_is_refused():
    with pytest.raises(ValueError, match="between 0 and 19"):
        EmbeddedBroker(nice=25)
