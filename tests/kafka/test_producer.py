"""Producer without a broker: the full-queue retries and the default error callback."""

from __future__ import annotations

import logging
import time

import pytest

from streamspark.kafka import Producer
from streamspark.testing.broker import free_port


def test_a_full_queue_is_retried_then_raises():
    producer = Producer(f"127.0.0.1:{free_port()}", extra_config={"queue.buffering.max.messages": 1})
    producer.produce("t", value=b"1")  # queued: nothing can deliver it
    with pytest.raises(BufferError):
        producer.produce("t", value=b"2", poll_timeout=0.01, buffer_error_max_tries=2)
    assert len(producer) == 1


def test_client_errors_are_logged_by_default(caplog):
    producer = Producer(f"127.0.0.1:{free_port()}")
    producer.produce("t", value=b"v")
    with caplog.at_level(logging.ERROR, logger="streamspark"):
        deadline = time.monotonic() + 30
        while not any("Kafka client error" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            producer.poll(0.2)
    assert any("Kafka client error" in r.getMessage() for r in caplog.records)


def test_keys_are_partitioned_like_the_java_client_unless_configured():
    assert Producer("127.0.0.1:1")._config["partitioner"] == "murmur2"
    assert Producer("127.0.0.1:1", extra_config={"partitioner": "crc32"})._config["partitioner"] == "crc32"
