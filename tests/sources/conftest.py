"""Helpers of the source tests: a source manager on the test broker, waiting for sources to end."""

from __future__ import annotations

import time
import uuid
from typing import Any, Iterator, Optional

import pytest

from streamspark.models.topics import Topic
from streamspark.sources import SourceManager
from streamspark.sources.base.source import BaseSource


class Sources:
    """Register sources on the test broker, run them and wait for them."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.group = f"g-{uuid.uuid4().hex[:8]}"
        self.managers: list[SourceManager] = []

    def manager(self) -> SourceManager:
        manager = SourceManager()
        self.managers.append(manager)
        return manager

    def start(self, source: BaseSource, topic: Topic, manager: Optional[SourceManager] = None, **kwargs: Any) -> SourceManager:
        manager = manager or self.manager()
        manager.register(
            source, topic, {"bootstrap.servers": self.address}, consumer_group=self.group, loglevel="WARNING", **kwargs
        )
        manager.start()
        return manager

    @staticmethod
    def wait(manager: SourceManager, timeout: float = 60) -> None:
        """Wait until every source's process ended; raise its SourceException if one failed."""
        deadline = time.monotonic() + timeout
        while manager.is_alive():
            manager.raise_for_error()
            if time.monotonic() > deadline:
                raise AssertionError(f"sources still running after {timeout}s")
            time.sleep(0.05)
        manager.raise_for_error()

    def close(self) -> None:
        for manager in self.managers:
            manager.stop(timeout=5)


@pytest.fixture
def sources(broker: Any) -> Iterator[Sources]:
    helper = Sources(broker.address)
    yield helper
    helper.close()


class RecordingProducer:
    """Stands in for a source's producer in in-process tests: keeps what is produced."""

    transactional = False

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.flushes = 0

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Any = None,
        partition: Any = None,
        timestamp: Any = None,
        poll_timeout: float = 0,
        buffer_error_max_tries: int = 0,
    ) -> None:
        self.messages.append(
            {"topic": topic, "value": value, "key": key, "headers": headers, "partition": partition, "timestamp": timestamp}
        )

    def flush(self, timeout: Optional[float] = None) -> int:
        self.flushes += 1
        return 0


def run_in_process(source: BaseSource, topic: Optional[Topic] = None) -> list[dict[str, Any]]:
    """Configure ``source`` with a recording producer, run it here and return what it produced."""
    producer = RecordingProducer()
    source.configure(topic or source.default_topic(), producer)  # type: ignore[arg-type]
    source.start()
    return producer.messages
