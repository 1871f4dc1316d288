"""The ``State`` object handed to stateful steps: a key-value view scoped to one message key.

>>> from streamspark.state.base.state import State
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, Optional, TypeVar

import orjson

from ..exceptions import StateSerializationError
from ..ttl_count import note_ttl_write

__all__ = ("State", "state_key")

K = TypeVar("K")
V = TypeVar("V")

_JSON = 0
_BYTES = 1
_loads = orjson.loads
#: what state keys and values may hold: JSON types (str dict keys only), as the reference
#: stores them; datetimes and dataclasses are refused rather than turned into strings and dicts
_JSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


@dataclass(frozen=True)
class _JsonKey:
    """A state key by its JSON text: a key Python's ``==`` would confuse with another (``True``
    and ``1``, ``1.0`` and ``1``), or one it cannot hash (a dict). The reference keys state by
    JSON, where these are all different keys."""

    text: str


def _hashable(key: Any) -> Any:
    cls = key.__class__
    if cls is list or cls is tuple:
        return tuple(_hashable(k) for k in key)
    if cls is bool:
        return _JsonKey("true" if key else "false")
    if cls is float:
        return _JsonKey(repr(key))
    if isinstance(key, dict):
        return _JsonKey(orjson.dumps(key, option=_JSON_OPTIONS).decode())
    return key


def state_key(key: Any, step: str = "a stateful step") -> Any:
    """``key`` as the state stores it: bytes, or a JSON value with lists as tuples (so ``[1, 2]``
    and ``(1, 2)`` name the same entry, as they do in JSON).

    >>> state_key("n"), state_key(b"n"), state_key(["a", [1]])
    ('n', b'n', ('a', (1,)))
    >>> state_key(True) == state_key(1), state_key(1.0) == state_key(1)
    (False, False)

    :raises StateSerializationError: ``key`` is neither bytes nor JSON-serialisable (a datetime,
        an object...).
    """
    if key.__class__ is str or key.__class__ is bytes:
        return key
    try:
        orjson.dumps(key, option=_JSON_OPTIONS)
    except TypeError as exc:
        raise StateSerializationError(
            f'Failed to serialize value: "{key}" (state key in {step} is not JSON-serialisable ({type(key).__name__}): {exc})'
        ) from exc
    return _hashable(key)


def _now_ms() -> int:
    return int(time.time() * 1000)


class State(Generic[K, V]):
    """Key-value state of the current message key (and stream), persisted by Spark.

    Values are stored as JSON: what you ``get`` is a fresh copy of what you ``set``.
    ``ttl`` makes an entry expire after that much processing (wall-clock) time.

    >>> from streamspark.state.store import KeyedStateStore
    >>> state = KeyedStateStore().state("stream", b"user-1")
    >>> state.get("n", 0)
    0
    >>> state.set("n", 1); state.get("n")
    1
    >>> state.exists("n"), state.delete("n"), state.exists("n")
    (True, None, False)
    """

    __slots__ = ("_data", "_step")

    def __init__(self, data: dict[Any, tuple[int, bytes, Optional[int]]], step: str = "a stateful step") -> None:
        self._data = data
        self._step = step

    def _entry(self, key: Any) -> Optional[tuple[int, bytes, Optional[int]]]:
        if key.__class__ is not str:
            key = state_key(key, self._step)
        entry = self._data.get(key)
        if entry is not None and entry[2] is not None and entry[2] <= _now_ms():
            del self._data[key]
            return None
        return entry

    def get(self, key: Any, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is missing or expired.

        :raises StateSerializationError: the value was stored by :meth:`set_bytes` and its
            bytes are not JSON.
        """
        # ``_entry`` inlined: this runs once per record of most stateful steps
        if key.__class__ is not str:
            key = state_key(key, self._step)
        entry = self._data.get(key)
        if entry is None:
            return default
        kind, data, expiry = entry
        if expiry is not None and expiry <= _now_ms():
            del self._data[key]
            return default
        if kind == _JSON:
            return _loads(data)
        try:  # raw bytes of set_bytes(): read as JSON, as the reference reads every value
            return _loads(data)
        except orjson.JSONDecodeError as exc:
            raise StateSerializationError(
                f"Failed to deserialize value: {data!r} (the bytes stored by set_bytes() under {key!r} in "
                f"{self._step} are not JSON: read them with get_bytes())"
            ) from exc

    def set(self, key: Any, value: Any, *, ttl: Optional[timedelta] = None) -> None:
        """Store ``value`` (JSON-serialisable) under ``key``; ``ttl`` makes it expire.

        :raises StateSerializationError: the key or the value is not JSON-serialisable (dict
            keys must be strings; datetimes and dataclasses are refused).
        :raises ValueError: ``ttl`` is zero or negative.
        """
        if key.__class__ is not str:
            key = state_key(key, self._step)
        try:
            data = orjson.dumps(value, option=_JSON_OPTIONS)
        except TypeError as exc:
            raise StateSerializationError(
                f'Failed to serialize value: "{value}" (state value for key {key!r} in {self._step} is not '
                f"JSON-serialisable ({type(value).__name__}): {exc})"
            ) from exc
        self._data[key] = (_JSON, data, self._expiry(ttl))

    def get_bytes(self, key: Any, default: Optional[bytes] = None) -> Optional[bytes]:
        """The raw bytes stored under ``key`` (JSON values are returned as their JSON bytes)."""
        entry = self._entry(key)
        return default if entry is None else entry[1]

    def set_bytes(self, key: Any, value: bytes, *, ttl: Optional[timedelta] = None) -> None:
        """Store raw bytes under ``key``."""
        if not isinstance(value, (bytes, bytearray)):
            raise StateSerializationError(f"set_bytes() in {self._step} expects bytes, got {type(value).__name__}")
        if key.__class__ is not str:
            key = state_key(key, self._step)
        self._data[key] = (_BYTES, bytes(value), self._expiry(ttl))

    def delete(self, key: Any) -> None:
        """Remove ``key`` (no error when it is missing)."""
        self._data.pop(key if key.__class__ is str else state_key(key, self._step), None)

    def exists(self, key: Any) -> bool:
        """True when ``key`` holds a value that has not expired."""
        return self._entry(key) is not None

    @staticmethod
    def _expiry(ttl: Optional[timedelta]) -> Optional[int]:
        if ttl is None:
            return None
        if isinstance(ttl, (int, float)):
            raise TypeError("ttl must be a datetime.timedelta")
        if ttl <= timedelta(0):
            raise ValueError(f"ttl must be a positive timedelta (or None), got {ttl!r}")
        note_ttl_write()
        return _now_ms() + int(ttl.total_seconds() * 1000)
