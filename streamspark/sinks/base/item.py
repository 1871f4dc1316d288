"""One record buffered by a sink."""

from __future__ import annotations

from typing import Any

from ...models.types import Headers

__all__ = ("SinkItem",)


class SinkItem:
    __slots__ = ("value", "key", "timestamp", "headers", "offset")

    def __init__(self, value: Any, key: Any, timestamp: int, headers: Headers, offset: int) -> None:
        self.value = value
        self.key = key
        self.timestamp = timestamp
        self.headers = headers
        self.offset = offset

    def __repr__(self) -> str:
        return f"SinkItem(key={self.key!r}, offset={self.offset}, value={self.value!r:.60})"
