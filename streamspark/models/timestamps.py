"""Kafka timestamp types and the timestamp-extractor signature."""

from __future__ import annotations

import enum
from typing import Any, Callable, Optional

__all__ = ("TimestampType", "MessageTimestamp", "TimestampExtractor")


class TimestampType(enum.IntEnum):
    """How Kafka produced a message's timestamp."""

    TIMESTAMP_NOT_AVAILABLE = 0
    TIMESTAMP_CREATE_TIME = 1
    TIMESTAMP_LOG_APPEND_TIME = 2


class MessageTimestamp:
    """A timestamp in milliseconds with its type.

    >>> MessageTimestamp.create(TimestampType.TIMESTAMP_CREATE_TIME, 1000).milliseconds
    1000
    >>> MessageTimestamp.create(TimestampType.TIMESTAMP_NOT_AVAILABLE, 5).milliseconds is None
    True
    """

    __slots__ = ("_milliseconds", "_type")

    def __init__(self, milliseconds: Optional[int], type: TimestampType) -> None:
        self._milliseconds = milliseconds
        self._type = type

    @property
    def milliseconds(self) -> Optional[int]:
        return self._milliseconds

    @property
    def type(self) -> TimestampType:
        return self._type

    @classmethod
    def create(cls, timestamp_type: int, milliseconds: int) -> "MessageTimestamp":
        """A timestamp from ``confluent_kafka.Message.timestamp()``'s ``(type, milliseconds)``.

        :param timestamp_type: 0 (``TIMESTAMP_NOT_AVAILABLE``: the milliseconds become None),
            1 (``TIMESTAMP_CREATE_TIME``) or 2 (``TIMESTAMP_LOG_APPEND_TIME``).
        :raises ValueError: another type.
        """
        ts_type = TimestampType(timestamp_type)
        if ts_type == TimestampType.TIMESTAMP_NOT_AVAILABLE:
            return cls(None, ts_type)
        return cls(milliseconds, ts_type)

    def __repr__(self) -> str:
        return f"MessageTimestamp({self._milliseconds}, {self._type.name})"


#: ``extractor(value, headers, timestamp_ms, timestamp_type) -> int`` milliseconds.
TimestampExtractor = Callable[[Any, Any, int, TimestampType], int]
