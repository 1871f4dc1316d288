"""The metadata of the message being processed."""

from __future__ import annotations

from typing import Any, Optional

from .types import Headers

__all__ = ("MessageContext",)


class MessageContext:
    """Immutable metadata of one Kafka message: key, timestamp, topic, partition, offset, headers.

    The first parameters are the reference's, in its order: ``topic, partition, offset, size,
    leader_epoch``; ``key``, ``timestamp`` and ``headers`` follow.

    >>> ctx = MessageContext("t", 0, 3, 120)
    >>> ctx.topic, ctx.partition, ctx.offset, ctx.size
    ('t', 0, 3, 120)
    >>> MessageContext(topic="t", partition=0, offset=3, key=b"k", timestamp=1).key
    b'k'

    ``offset`` is None only in the row handed to ``on_producer_error`` for a failed delivery:
    that row describes the output message, which has no input offset.
    """

    __slots__ = ("_key", "_topic", "_partition", "_offset", "_size", "_timestamp", "_headers", "_leader_epoch")

    def __init__(
        self,
        topic: str = "",
        partition: int = 0,
        offset: Optional[int] = 0,
        size: int = 0,
        leader_epoch: Optional[int] = None,
        key: Any = None,
        timestamp: Optional[int] = None,
        headers: Headers = None,
    ) -> None:
        self._key = key
        self._topic = topic
        self._partition = partition
        self._offset = offset
        self._size = size
        self._timestamp = timestamp
        self._headers = headers
        self._leader_epoch = leader_epoch

    key = property(lambda self: self._key)
    topic = property(lambda self: self._topic)
    partition = property(lambda self: self._partition)
    offset = property(lambda self: self._offset)
    size = property(lambda self: self._size)
    timestamp = property(lambda self: self._timestamp)
    headers = property(lambda self: self._headers)
    leader_epoch = property(lambda self: self._leader_epoch)

    def __repr__(self) -> str:
        return (
            f"MessageContext(topic={self._topic!r}, partition={self._partition}, "
            f"offset={self._offset}, key={self._key!r}, timestamp={self._timestamp})"
        )
