"""The embedded broker's options (streamspark/testing/broker.py)."""

from __future__ import annotations

import os

import pytest
from confluent_kafka.admin import AdminClient

from streamspark.testing import EmbeddedBroker


def _nice(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def test_broker_runs_at_the_requested_priority_and_serves():
    with EmbeddedBroker(nice=7) as broker:
        pids = broker.server_pids()
        assert pids and {_nice(pid) for pid in pids} == {os.nice(0) + 7}
        topics = AdminClient({"bootstrap.servers": broker.address}).list_topics(timeout=10).topics
        assert isinstance(topics, dict)


def test_broker_priority_out_of_range_is_refused():
    with pytest.raises(ValueError, match="between 0 and 19"):
        EmbeddedBroker(nice=25)


def test_a_server_that_down_does_not_stop_is_ended_when_the_broker_stops():
    broker = EmbeddedBroker().start()
    pids = broker.server_pids()
    assert pids
    broker._down = lambda timeout: None  # as if `noida-db down` failed
    broker.stop(timeout=1.0)
    assert broker.server_pids() == []
