"""A second embedded broker: the source cluster of the KafkaReplicatorSource tests."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from streamspark.testing import EmbeddedBroker

from ...conftest import KafkaHelper


@pytest.fixture(scope="module")
def source_cluster(broker: Any) -> Iterator[KafkaHelper]:
    """Topics, producing and reading on a cluster of its own (``broker`` is the application's)."""
    with EmbeddedBroker() as second:
        helper = KafkaHelper(second.address)
        yield helper
        # release the clients before the broker goes: no reconnect attempts logged after it
        del helper.producer, helper.admin
