"""Fixtures of the engine's tests."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from streamspark.engine._kafka_source import SourcePrivate, _KafkaStreamReader, source_options


@pytest.fixture
def source_planner(kafka) -> Iterator[Callable[..., _KafkaStreamReader]]:
    """``make(topics, cap, **options)``: Kafka source readers planning over the test broker
    from the earliest offsets, at most ``cap`` records of a partition per micro-batch, with
    more ``source_options``; closed at the end."""
    readers: list[_KafkaStreamReader] = []

    def make(topics: list[str], cap: int, **options: Any) -> _KafkaStreamReader:
        settings = source_options(topics, "earliest", max_records_per_partition=cap, request_timeout=10, **options)
        reader = _KafkaStreamReader(settings, SourcePrivate.of({"bootstrap.servers": kafka.address, "group.id": "planner"}))
        readers.append(reader)
        return reader

    yield make
    for reader in readers:
        reader.stop()


@pytest.fixture
def app_factory(broker: Any, tmp_path: Any) -> Callable[..., Any]:
    """Applications on the test broker, for tests that drive task code in this process (the
    task makes a producer; nothing is produced)."""
    from streamspark import Application

    def factory(**kwargs: Any) -> Application:
        return Application(
            broker_address=broker.address,
            consumer_group="task-code",
            state_dir=str(tmp_path / "state"),
            loglevel="WARNING",
            **kwargs,
        )

    return factory
