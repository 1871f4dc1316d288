"""A serialized Kafka message."""

from __future__ import annotations

from typing import Any, Optional

from .types import Headers

__all__ = ("KafkaMessage",)


class KafkaMessage:
    """A serialized key, value, headers and timestamp, as produced or consumed.

    >>> KafkaMessage(key=b"k", value=b"v", headers=[]).timestamp is None
    True
    """

    __slots__ = ("key", "value", "headers", "timestamp")

    def __init__(self, key: Any, value: Any, headers: Headers = None, timestamp: Optional[int] = None) -> None:
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp

    def __repr__(self) -> str:
        return f"KafkaMessage(key={self.key!r:.80}, value={self.value!r:.80}, timestamp={self.timestamp})"
