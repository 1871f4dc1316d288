"""Shared fixtures: one embedded broker and one SparkSession for the whole test session."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Callable, Iterator, Optional

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from streamspark.testing import EmbeddedBroker

# gcsfs probes GCS bucket types over gRPC, which the GCS emulator of the lake tests does not
# serve; set before gcsfs is imported (here and in Spark's Python workers, which inherit it)
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Run the kill -9 harnesses first, longest first: with ``-n 2`` (scripts/test.sh) xdist
    hands them out in turn to both workers and the short tests fill in around them."""

    def order(item: Any) -> tuple[bool, float]:
        mark = item.get_closest_marker("harness")
        return (mark is None, -mark.kwargs.get("seconds", 0) if mark is not None else 0)

    items.sort(key=order)
    # tests that start Spark or the embedded broker (directly, or through an application run in a
    # subprocess) carry the "spark" marker: `pytest -m "not spark"` runs the in-process rest in seconds
    heavy = {"spark", "broker", "make_app", "kafka"}
    for item in items:
        if heavy & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("harness") is not None:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def broker() -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker() as b:
        yield b


@pytest.fixture(scope="session")
def spark(broker: EmbeddedBroker) -> Iterator[Any]:
    """The shared SparkSession (stopped before the broker, so no worker is left polling it)."""
    from streamspark.engine.session import get_spark

    session = get_spark("local[2]")
    yield session
    session.stop()


class KafkaHelper:
    """Create topics, produce and read back with plain confluent-kafka (independent of streamspark)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.admin = AdminClient({"bootstrap.servers": address})
        self.producer = Producer({"bootstrap.servers": address, "linger.ms": 5})

    def new_topic(self, partitions: int = 1, prefix: str = "t") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        for fut in self.admin.create_topics([NewTopic(name, partitions, 1, config={"retention.ms": "-1"})]).values():
            fut.result(30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            md = self.admin.list_topics(timeout=5).topics.get(name)
            if md is not None and len(md.partitions) == partitions:
                return name
            time.sleep(0.1)
        raise RuntimeError(f"topic {name} not ready")

    def produce(self, topic: str, messages: list[dict[str, Any]]) -> None:
        """messages: dicts with value (bytes), optional key, partition, headers, timestamp."""
        for m in messages:
            kwargs = {k: m[k] for k in ("key", "partition", "headers", "timestamp") if m.get(k) is not None}
            self.producer.produce(topic, value=m.get("value"), **kwargs)
        assert self.producer.flush(30) == 0

    def consume(self, topic: str, expected: int, timeout: float = 30.0, isolation: str = "read_uncommitted") -> list[Any]:
        """Read the topic from the beginning until ``expected`` messages arrived (or the timeout)."""
        consumer = Consumer(
            {
                "bootstrap.servers": self.address,
                "group.id": f"check-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "isolation.level": isolation,
            }
        )
        md = self.admin.list_topics(timeout=10).topics[topic]
        consumer.assign([TopicPartition(topic, p, 0) for p in md.partitions])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                if msg.error() is None:
                    out.append(msg)
        # give stragglers (duplicates) a chance to show up
        for msg in consumer.consume(num_messages=1000, timeout=0.5):
            if msg.error() is None:
                out.append(msg)
        consumer.close()
        return out

    def high_watermarks(self, topic: str) -> dict[int, int]:
        consumer = Consumer({"bootstrap.servers": self.address, "group.id": "watermarks"})
        md = self.admin.list_topics(timeout=10).topics[topic]
        marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions}
        consumer.close()
        return marks

    def committed(self, group: str, topic: str) -> dict[int, int]:
        consumer = Consumer({"bootstrap.servers": self.address, "group.id": group, "enable.auto.commit": False})
        md = self.admin.list_topics(timeout=10).topics[topic]
        result = consumer.committed([TopicPartition(topic, p) for p in md.partitions], timeout=10)
        consumer.close()
        return {tp.partition: tp.offset for tp in result}


@pytest.fixture(scope="session")
def kafka(broker: EmbeddedBroker) -> KafkaHelper:
    return KafkaHelper(broker.address)


@pytest.fixture
def make_app(broker: EmbeddedBroker, spark: Any, tmp_path: Any) -> Callable[..., Any]:
    """Build an Application on the test broker with its own consumer group and state dir."""
    from streamspark import Application

    def factory(**kwargs: Any) -> Any:
        kwargs.setdefault("broker_address", broker.address)
        kwargs.setdefault("consumer_group", f"g-{uuid.uuid4().hex[:8]}")
        kwargs.setdefault("auto_offset_reset", "earliest")
        kwargs.setdefault("state_dir", str(tmp_path / "state"))
        kwargs.setdefault("loglevel", "WARNING")
        return Application(**kwargs)

    return factory


def json_messages(values: list[Any], key: Optional[Callable[[Any], bytes]] = None, **extra: Any) -> list[dict[str, Any]]:
    import json

    return [{"value": json.dumps(v).encode(), "key": key(v) if key else None, **extra} for v in values]
