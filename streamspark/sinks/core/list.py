"""``ListSink``: collect processed records into a list (for tests and notebooks)."""

from __future__ import annotations

from collections import UserList
from typing import Any

from ...models.types import Headers
from ..base.sink import BaseSink

__all__ = ("ListSink",)


class ListSink(BaseSink, UserList):
    """A sink that is also a list of what it received.

    Used directly, it is a list: a record ``add``-ed is in it at once. Under a running
    application the records are gathered in the Spark tasks and appended to *this* object in
    the driver after each successful micro-batch, so the list never holds records of a batch
    that failed (no duplicates from retries or backpressure).

    :param metadata: put ``_key, _timestamp, _headers, _topic, _partition, _offset`` in front of
        each value's keys (a value that is not a dict becomes ``{"value": value}``; a value's own
        key of the same name wins).

    Positional arguments are for ``list`` itself (an initial list), so slices, ``+`` and
    ``copy()`` are ``ListSink`` objects holding the items.

    >>> sink = ListSink()
    >>> sink.add({"a": 1}, b"k", 5, None, "t", 0, 7)
    >>> sink
    [{'a': 1}]
    >>> sink.append({"b": 2}); sink[-1]
    {'b': 2}
    """

    collects_to_driver = True

    def __init__(self, *args: Any, metadata: bool = False) -> None:
        BaseSink.__init__(self)
        UserList.__init__(self, args[0] if args else None)
        self._metadata = metadata
        self._unflushed = 0  # how many of the last records were added since the last flush

    def add(self, value: Any, key: Any, timestamp: int, headers: Headers, topic: str, partition: int, offset: int) -> None:
        if self._metadata:
            value = {
                "_key": key,
                "_timestamp": timestamp,
                "_headers": headers,
                "_topic": topic,
                "_partition": partition,
                "_offset": offset,
                **(value if isinstance(value, dict) else {"value": value}),
            }
        self.data.append(value)
        self._unflushed += 1

    def flush(self) -> None:
        """Keep what was added (under Spark the engine then hands it to the driver's list)."""
        self._unflushed = 0

    def on_paused(self) -> None:
        """Drop the records added since the last flush: their batch is being retried."""
        if self._unflushed:
            del self.data[-self._unflushed :]
        self._unflushed = 0

    def drain_for_driver(self) -> Any:
        items, self.data = self.data, []
        self._unflushed = 0
        return items

    def receive_from_worker(self, payload: Any) -> None:
        self.data.extend(payload)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["data"] = []
        state["_unflushed"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # UserList defines __eq__ by content; keep identity hashing for the engine's bookkeeping.
    __hash__ = object.__hash__  # type: ignore[assignment]
