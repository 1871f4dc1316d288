"""Values of a message key kept by timestamp, for the joins (``join_asof``, ``join_interval``).

Each key keeps its values sorted by timestamp and a *minimum eligible timestamp*: storing a
value at ``t`` raises it to ``t - grace_ms``, and values older than it are gone, for lookups
at once and from the store on the same call. The data of a key lives in a plain dict of the
bucket's state (:meth:`KeyedStateStore.window_data <streamspark.state.KeyedStateStore.window_data>`),
so it is saved and restored with the rest of the bucket's state, exactly once.

Values are stored as JSON, like :class:`~streamspark.state.State`'s: what a lookup returns is
a fresh copy, and a value that is not JSON-serialisable raises
:class:`~streamspark.state.StateSerializationError`.

>>> from streamspark.state.store import KeyedStateStore
>>> store = TimestampedStore(KeyedStateStore(), "configs/join", grace_ms=100)
>>> store.set_for_timestamp(10, {"v": 1}, b"k"); store.set_for_timestamp(20, {"v": 2}, b"k")
>>> store.get_latest(15, b"k"), store.get_latest(25, b"k"), store.get_latest(5, b"k")
({'v': 1}, {'v': 2}, None)
>>> store.set_for_timestamp(200, {"v": 3}, b"k")  # expires what is older than 200 - 100
>>> store.get_latest(150, b"k") is None
True
"""

from __future__ import annotations

import bisect
from typing import Any, Optional

import orjson

from .exceptions import StateSerializationError

__all__ = ("TimestampedStore",)

_MIN = "min"
_TS = "ts"
_VALUES = "values"


class TimestampedStore:
    """The timestamped values of one store (a stream id and a store name), for every key.

    :param states: the bucket's state (anything with ``window_data(scope, key) -> dict``).
    :param scope: the store's name in the bucket's state.
    :param grace_ms: how far behind the newest stored timestamp of a key values are kept.
    :param keep_duplicates: keep every value stored at one timestamp (in the order they were
        stored); without it a value replaces the one stored at the same timestamp.
    """

    __slots__ = ("_states", "_scope", "_grace_ms", "_keep_duplicates", "_by_key")

    def __init__(self, states: Any, scope: str, grace_ms: int, keep_duplicates: bool = False) -> None:
        self._states = states
        self._scope = scope
        self._grace_ms = grace_ms
        self._keep_duplicates = keep_duplicates
        #: the data dicts of bytes keys (Kafka's usual key type), asked of ``states`` once per key
        #: (a key's dict stays in ``states`` for good: nothing drops a join's store)
        self._by_key: dict[bytes, dict[str, Any]] = {}

    def _slot(self, key: Any) -> dict[str, Any]:
        """The data dict of ``key`` in the bucket's state (empty for a key never stored)."""
        if key.__class__ is bytes:
            data = self._by_key.get(key)
            if data is None:
                data = self._by_key[key] = self._states.window_data(self._scope, key)
            return data
        found: dict[str, Any] = self._states.window_data(self._scope, key)
        return found

    def _data(self, key: Any) -> dict[str, Any]:
        data = self._slot(key)
        if not data:
            data[_MIN] = 0
            data[_TS] = []
            data[_VALUES] = []
        return data

    def set_for_timestamp(self, timestamp: int, value: Any, key: Any) -> None:
        """Store ``value`` at ``timestamp`` for ``key`` and expire what falls out of the grace period.

        :raises StateSerializationError: ``value`` is not JSON-serialisable.
        """
        try:
            blob = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError as exc:
            raise StateSerializationError(f"A joined value is not JSON-serialisable ({type(value).__name__}): {exc}") from exc
        data = self._data(key)
        stamps: list[int] = data[_TS]
        values: list[bytes] = data[_VALUES]
        if self._keep_duplicates:
            at = bisect.bisect_right(stamps, timestamp)
            stamps.insert(at, timestamp)
            values.insert(at, blob)
        else:
            at = bisect.bisect_left(stamps, timestamp)
            if at < len(stamps) and stamps[at] == timestamp:
                values[at] = blob
            else:
                stamps.insert(at, timestamp)
                values.insert(at, blob)
        lowest = max(data[_MIN], timestamp - self._grace_ms, 0)
        data[_MIN] = lowest
        expired = bisect.bisect_left(stamps, lowest)
        if expired:
            del stamps[:expired]
            del values[:expired]

    def get_latest(self, timestamp: int, key: Any) -> Optional[Any]:
        """The value of ``key`` with the largest timestamp at or before ``timestamp`` (None: none)."""
        data = self._by_key.get(key) if key.__class__ is bytes else None  # called once per left record
        if data is None:
            data = self._slot(key)
        if not data:
            return None
        stamps: list[int] = data[_TS]
        at = bisect.bisect_right(stamps, timestamp) - 1
        if at < 0 or stamps[at] < data[_MIN]:
            return None
        return orjson.loads(data[_VALUES][at])

    def get_interval(self, start: int, end: int, key: Any) -> list[Any]:
        """The values of ``key`` stored at ``start <= timestamp < end``, oldest first."""
        data = self._slot(key)
        if not data:
            return []
        stamps: list[int] = data[_TS]
        lo = bisect.bisect_left(stamps, max(start, data[_MIN]))
        hi = bisect.bisect_left(stamps, end)
        loads = orjson.loads
        return [loads(blob) for blob in data[_VALUES][lo:hi]]
