"""Servers of the sink catalogue tests: started once per test session, on first use."""

from __future__ import annotations

from typing import Iterator

import pytest

from streamspark.sinks.base import SinkBatch
from tests.servers.servers import (
    BigQueryEmulator,
    InfluxDB1,
    MongoEmulator,
    MotoServer,
    OpenSearchEmulator,
    PostgreSQL,
    Redis,
)


def make_batch(*values, topic="t", partition=0, start=0, keys=None, timestamp=1_700_000_000_000):
    """A SinkBatch of ``values`` with keys ``k0, k1, ...`` (bytes) and timestamps 1 ms apart."""
    b = SinkBatch(topic, partition)
    for i, v in enumerate(values):
        key = keys[i] if keys is not None else f"k{i}".encode()
        b.append(value=v, key=key, timestamp=timestamp + i, headers=[("h", b"v")], offset=start + i)
    return b


def feed(sink, batch):
    for item in batch:
        sink.add(item.value, item.key, item.timestamp, item.headers, batch.topic, batch.partition, item.offset)


def _server(cls):
    @pytest.fixture(scope="session")
    def fixture() -> Iterator:
        server = cls().start()
        yield server
        server.stop()

    return fixture


postgres = _server(PostgreSQL)
redis_server = _server(Redis)
influxdb = _server(InfluxDB1)
moto = _server(MotoServer)
mongo = _server(MongoEmulator)
opensearch = _server(OpenSearchEmulator)
bigquery_emulator = _server(BigQueryEmulator)


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on (a server that is down)."""
    from streamspark.testing.broker import free_port

    return free_port()
