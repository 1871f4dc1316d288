"""``ListSink``: collect processed records into a list (for tests and notebooks)."""

from __future__ import annotations

from collections import UserList
from typing import Any

from ...models.types import Headers
from ..base.sink import BaseSink

__all__ = ("ListSink",)


class ListSink(BaseSink, UserList):
    """A sink that is also a list of what it received.

    The records are gathered in the Spark tasks and appended to *this* object in the
    driver after each successful micro-batch, so the list never holds records of a batch
    that failed (no duplicates from retries or backpressure).

    :param metadata: add ``_key, _timestamp, _headers, _topic, _partition, _offset`` to each value.

    >>> sink = ListSink()
    >>> sink.add({"a": 1}, b"k", 5, None, "t", 0, 7); sink.flush()
    >>> list(sink)
    [{'a': 1}]
    """

    _collect_to_driver = True

    def __init__(self, metadata: bool = False) -> None:
        BaseSink.__init__(self)
        UserList.__init__(self)
        self._metadata = metadata
        self._pending: list[Any] = []

    def add(self, value: Any, key: Any, timestamp: int, headers: Headers, topic: str, partition: int, offset: int) -> None:
        if self._metadata:
            value = {
                **(value if isinstance(value, dict) else {"_value": value}),
                "_key": key,
                "_timestamp": timestamp,
                "_headers": headers,
                "_topic": topic,
                "_partition": partition,
                "_offset": offset,
            }
        self._pending.append(value)

    def flush(self) -> None:
        # Locally (sdf.test, plain use) the records become visible on flush; under Spark the
        # engine drains them to the driver instead.
        self.data.extend(self._pending)
        self._pending = []

    def on_paused(self) -> None:
        self._pending = []

    def _drain_for_driver(self) -> Any:
        items, self.data = self.data, []
        return items

    def _receive_from_worker(self, payload: Any) -> None:
        self.data.extend(payload)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["data"] = []
        state["_pending"] = []
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # UserList defines __eq__ by content; keep identity hashing for the engine's bookkeeping.
    __hash__ = object.__hash__  # type: ignore[assignment]
