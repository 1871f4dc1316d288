"""PubSubSource at its client boundary: no Pub/Sub server installs here, so a fake
``SubscriberClient`` stands in for the service (in the source's process too). A Spark pipeline
reading its messages, acknowledgements after delivery, subscription creation, a missing
subscription."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import Any, Optional

import pytest
from google.api_core.exceptions import NotFound

from streamspark.sources import SourceInputError
from streamspark.sources.community.pubsub import PubSubSource

from ..conftest import RecordingProducer
from .conftest import run_until

NOW_MS = int(datetime.now(timezone.utc).timestamp() * 1000)  # recent: the broker's retention keeps them


class FakeMessage:
    """A received message (stands in for ``subscriber.message.Message``)."""

    def __init__(self, data: bytes, attributes: dict, ordering_key: str, publish_ms: int, log: list) -> None:
        self.data, self.attributes, self.ordering_key = data, attributes, ordering_key
        self.publish_time = datetime.fromtimestamp(publish_ms / 1000, tz=timezone.utc)
        self._log = log

    def ack(self) -> None:
        self._log.append(("ack", self.data))


class FakeFuture:
    """The streaming pull's future: failed at once (``error``), or running until cancelled."""

    def __init__(self, error: Optional[Exception] = None) -> None:
        self._error, self._cancelled = error, threading.Event()

    def done(self) -> bool:
        return self._error is not None or self._cancelled.is_set()

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def exception(self) -> Optional[Exception]:
        return self._error

    def cancel(self) -> None:
        self._cancelled.set()

    def result(self, timeout: Optional[float] = None) -> None:
        if self._error is not None:
            raise self._error


class FakeSubscriber:
    """Stands in for ``pubsub_v1.SubscriberClient`` (client boundary): holds the subscriptions,
    delivers ``messages`` (``(data, attributes, ordering_key, publish_ms)``) to a subscriber's
    callback from a thread of its own, and logs what the source does."""

    def __init__(self, messages: list[tuple], subscriptions: set[str], log: list) -> None:
        self.messages, self.subscriptions, self.log = messages, subscriptions, log

    def topic_path(self, project: str, topic: str) -> str:
        return f"projects/{project}/topics/{topic}"

    def subscription_path(self, project: str, subscription: str) -> str:
        return f"projects/{project}/subscriptions/{subscription}"

    def get_subscription(self, subscription: str) -> dict:
        if subscription not in self.subscriptions:
            raise NotFound(subscription)
        return {"name": subscription}

    def create_subscription(self, request: dict) -> dict:
        self.log.append(("create", request))
        self.subscriptions.add(request["name"])
        return request

    def subscribe(self, subscription: str, callback: Any, flow_control: Any = None) -> FakeFuture:
        if subscription not in self.subscriptions:
            return FakeFuture(NotFound(f"Resource not found (resource={subscription})"))
        messages = [FakeMessage(*m, log=self.log) for m in self.messages]
        threading.Thread(target=lambda: [callback(m) for m in messages], daemon=True).start()
        return FakeFuture()

    def close(self) -> None:
        self.log.append(("close",))


class FakeBackedPubSubSource(PubSubSource):
    """A PubSubSource reading from a :class:`FakeSubscriber` (made in the source's process)."""

    def __init__(self, messages: list[tuple], subscriptions: set[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.messages, self.subscriptions, self.log = messages, subscriptions, []

    def subscriber_client(self) -> FakeSubscriber:
        return FakeSubscriber(self.messages, set(self.subscriptions), self.log)


def messages(n: int) -> list[tuple]:
    return [(json.dumps({"n": i}).encode(), {"origin": "sensor"}, "" if i % 2 else f"k{i}", NOW_MS + i) for i in range(n)]


def test_spark_pipeline_reads_a_subscription_client_boundary(make_app, kafka):
    out = kafka.new_topic()
    app = make_app()
    source = FakeBackedPubSubSource(
        messages(3),
        {f"projects/p/subscriptions/sub-{out}"},
        project_id="p",
        topic_id="events",
        subscription_id=f"sub-{out}",
        commit_interval=0.5,
    )
    sdf = app.dataframe(source=source)
    assert sdf.topic.name == f"source__pubsub_sub-{out}_events"
    sdf = sdf.apply(lambda data: {"n": json.loads(data)["n"] + 100})  # values arrive as bytes
    sdf.to_topic(app.topic(out))
    app.run(count=3, timeout=60)
    got = sorted((json.loads(m.value())["n"], m.key(), m.timestamp()[1], m.headers()) for m in kafka.consume(out, expected=3))
    assert got == [
        (100, b"k0", NOW_MS, [("origin", b"sensor")]),
        (101, None, NOW_MS + 1, [("origin", b"sensor")]),
        (102, b"k2", NOW_MS + 2, [("origin", b"sensor")]),
    ]


# --- in process (no broker) ---------------------------------------------------------------------------


def test_messages_are_acknowledged_in_batches_after_they_are_delivered_client_boundary():
    source = FakeBackedPubSubSource(
        messages(5),
        {"projects/p/subscriptions/sub"},
        project_id="p",
        topic_id="events",
        subscription_id="sub",
        commit_every=2,
        commit_interval=5,
    )
    producer = RecordingProducer()
    original_flush = producer.flush

    def flush(timeout: Optional[float] = None) -> int:
        source.log.append(("flush",))
        return original_flush(timeout)

    producer.flush = flush  # type: ignore[method-assign]
    got = run_until(source, 5, producer=producer)
    assert [(m["key"], json.loads(m["value"]), m["timestamp"], m["headers"]) for m in got] == [
        (f"k{i}".encode() if i % 2 == 0 else None, {"n": i}, NOW_MS + i, [("origin", "sensor")]) for i in range(5)
    ]
    steps = [entry[0] if entry[0] != "ack" else json.loads(entry[1])["n"] for entry in source.log]
    # batches of two, each acknowledged only after the producer flushed it; the last one when the
    # source stops (then the client closes and the source's final flush runs)
    assert steps == ["flush", 0, 1, "flush", 2, 3, "flush", 4, "close", "flush"]


def test_create_subscription_creates_a_missing_one_with_message_ordering_client_boundary():
    source = FakeBackedPubSubSource(
        messages(1),
        set(),
        project_id="p",
        topic_id="events",
        subscription_id="sub",
        create_subscription=True,
        enable_message_ordering=True,
    )
    assert len(run_until(source, 1)) == 1
    assert source.log[0] == (
        "create",
        {
            "name": "projects/p/subscriptions/sub",
            "topic": "projects/p/topics/events",
            "ack_deadline_seconds": 30,
            "enable_message_ordering": True,
        },
    )


def test_a_missing_subscription_names_the_source_and_the_subscription_client_boundary():
    source = FakeBackedPubSubSource(messages(1), set(), project_id="p", topic_id="events", subscription_id="sub")
    with pytest.raises(
        SourceInputError,
        match='Source "sub" cannot read the Pub/Sub subscription '
        '"projects/p/subscriptions/sub": it does not exist; create it or set '
        "create_subscription=True",
    ):
        run_until(source, 1)


def test_commit_every_must_be_positive():
    with pytest.raises(ValueError, match="commit_every must be >= 1"):
        PubSubSource(project_id="p", topic_id="t", subscription_id="s", commit_every=0)
