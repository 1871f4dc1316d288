"""Helpers of the community source tests: running a never-ending source in a thread."""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

from streamspark.sources.base.store import SourceStorePartition

from ..conftest import RecordingProducer


def run_until(
    source: Any,
    expected: int,
    store: Optional[SourceStorePartition] = None,
    timeout: float = 20,
    producer: Optional[RecordingProducer] = None,
) -> list[dict[str, Any]]:
    """Run ``source`` in a thread with a recording producer (and ``store``, for a stateful
    source) until it produced ``expected`` messages to its topic, then stop it; returns them.
    What the source's thread raised is raised here."""
    producer = producer or RecordingProducer()
    topic = source.default_topic()
    if store is not None:
        store.producer = producer
        source.configure(topic, producer, store_partition=store)
    else:
        source.configure(topic, producer)
    failure: list[BaseException] = []

    def start() -> None:
        try:
            source.start()
        except BaseException as exc:
            failure.append(exc)

    def produced() -> list[dict[str, Any]]:  # a stateful source's changelog shares the producer
        return [m for m in producer.messages if m["topic"] == topic.name]

    thread = threading.Thread(target=start)
    thread.start()
    deadline = time.monotonic() + timeout
    while len(produced()) < expected and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.05)
    source.stop()
    thread.join(10)
    if failure:
        raise failure[0]
    return produced()
