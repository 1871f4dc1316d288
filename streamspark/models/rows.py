"""Record views handed to error callbacks."""

from __future__ import annotations

from typing import Any, Optional

from .messagecontext import MessageContext
from .types import Headers

__all__ = ("Row", "RawMessage")


class Row:
    """A deserialized record: value, key, timestamp, headers and its message context."""

    __slots__ = ("value", "key", "timestamp", "headers", "context")

    def __init__(self, value: Any, key: Any, timestamp: int, context: MessageContext, headers: Headers = None) -> None:
        self.value = value
        self.key = key
        self.timestamp = timestamp
        self.context = context
        self.headers = headers

    @property
    def topic(self) -> str:
        return self.context.topic

    @property
    def partition(self) -> int:
        return self.context.partition

    @property
    def offset(self) -> int:
        return self.context.offset

    @property
    def size(self) -> int:
        return self.context.size

    @property
    def leader_epoch(self) -> Optional[int]:
        return self.context.leader_epoch

    def __repr__(self) -> str:
        return f"Row(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, key={self.key!r})"


class RawMessage:
    """A consumed Kafka message before deserialization (the confluent-kafka ``Message`` accessors).

    >>> msg = RawMessage("t", 0, 5, b"k", b'{"a": 1}', None, 1000, 1)
    >>> msg.timestamp(), len(msg)
    ((1, 1000), 8)
    """

    __slots__ = ("_topic", "_partition", "_offset", "_key", "_value", "_headers", "_timestamp", "_timestamp_type")

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        key: Optional[bytes],
        value: Optional[bytes],
        headers: Headers,
        timestamp: int,
        timestamp_type: int,
    ) -> None:
        self._topic = topic
        self._partition = partition
        self._offset = offset
        self._key = key
        self._value = value
        self._headers = headers
        self._timestamp = timestamp
        self._timestamp_type = timestamp_type

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> Optional[bytes]:
        return self._key

    def value(self) -> Optional[bytes]:
        return self._value

    def headers(self) -> Headers:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return self._timestamp_type, self._timestamp

    def leader_epoch(self) -> Optional[int]:
        return None

    def latency(self) -> Optional[float]:
        return None

    def error(self) -> None:
        return None

    def __len__(self) -> int:
        """The value's size in bytes (0 for a null value), as ``len()`` of a confluent-kafka message."""
        return len(self._value) if self._value is not None else 0

    def __repr__(self) -> str:
        return f"RawMessage(topic={self._topic!r}, partition={self._partition}, offset={self._offset})"
