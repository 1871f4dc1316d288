"""Storage of all state of one bucket of message keys, serialised as one blob in Spark state."""

from __future__ import annotations

import pickle
import time
from typing import Any, Callable, Optional

import orjson

from .exceptions import StateError
from .base.state import State

__all__ = ("KeyedStateStore", "scope_key")

_FORMAT = 2


def scope_key(key: Any) -> Any:
    """How a message key scopes state: bytes as they are, anything else as its JSON."""
    if key is None or isinstance(key, bytes):
        return key
    try:
        return orjson.dumps(key, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return repr(key).encode()


class KeyedStateStore:
    """State of many message keys: ``{(stream_id, key): {state key: entry}}``.

    On Spark, one store holds one bucket of keys and lives in the state store as one
    blob (loaded once per bucket per micro-batch, written back at its end). In
    ``sdf.test()`` one store holds everything in memory.
    """

    def __init__(
        self,
        data: Optional[dict[tuple[str, Any], dict[Any, Any]]] = None,
        buckets: int = 0,
        windows: Optional[dict[tuple[str, Any], dict[str, Any]]] = None,
    ) -> None:
        self._data = data if data is not None else {}
        self.buckets = buckets
        #: window data: ``{(scope, key): plain dict}`` (kept as Python objects, pickled with the blob)
        self._windows = windows if windows is not None else {}
        #: timer callbacks of windows (set by the engine; absent in ``sdf.test()``)
        self.tickers: Optional[list[Any]] = None
        #: the ``State`` views handed out by :meth:`state_getter`, per (stream id, step)
        self._views: dict[tuple[str, str], dict[bytes, State]] = {}

    def window_data(self, scope: str, key: Any) -> dict[str, Any]:
        """The window data dict of ``key`` in ``scope`` (a stream id and window name), created empty."""
        slot = (scope, scope_key(key) if not isinstance(key, tuple) else key)
        data = self._windows.get(slot)
        if data is None:
            data = self._windows[slot] = {}
        return data

    def window_scope(self, scope: str) -> list[dict[str, Any]]:
        """Every key's window data in ``scope``."""
        return [data for (sc, _), data in self._windows.items() if sc == scope]

    def drop_window_data(self, scope: str, key: Any) -> None:
        self._windows.pop((scope, scope_key(key) if not isinstance(key, tuple) else key), None)

    def state(self, stream_id: str, key: Any, step: str = "a stateful step") -> State:
        scope = (stream_id, scope_key(key))
        data = self._data.get(scope)
        if data is None:
            data = self._data[scope] = {}
        return State(data, step)

    def state_getter(self, stream_id: str, step: str = "a stateful step") -> Callable[[Any], State]:
        """``f(key) -> State`` of ``stream_id``: :meth:`state` for a step that runs once per record.

        The view of a bytes key (Kafka's usual key type, its own scope key) is made once and
        handed out again; a view holds no values of its own, only the key's entries.

        >>> store = KeyedStateStore()
        >>> state_of = store.state_getter("clicks")
        >>> state_of(b"u1").set("n", 1)
        >>> state_of(b"u1").get("n"), store.state("clicks", b"u1").get("n")
        (1, 1)
        """
        views = self._views.setdefault((stream_id, step), {})
        make = self.state

        def state_of(key: Any) -> State:
            if key.__class__ is bytes:
                view = views.get(key)
                if view is None:
                    view = views[key] = make(stream_id, key, step)
                return view
            return make(stream_id, key, step)

        return state_of

    def purge_expired(self) -> None:
        for views in self._views.values():  # a purged key's view would point at a dropped dict
            views.clear()
        now = int(time.time() * 1000)
        for scope in list(self._data):
            entries = self._data[scope]
            for k in [k for k, e in entries.items() if e[2] is not None and e[2] <= now]:
                del entries[k]
            if not entries:
                del self._data[scope]

    def __len__(self) -> int:
        return len(self._data) + len(self._windows)

    def dumps(self) -> bytes:
        self.purge_expired()
        windows = {slot: data for slot, data in self._windows.items() if data}
        return pickle.dumps((_FORMAT, self.buckets, self._data, windows), protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def loads(cls, blob: Optional[bytes], buckets: int) -> "KeyedStateStore":
        if not blob:
            return cls(buckets=buckets)
        fmt, stored_buckets, data, *rest = pickle.loads(blob)
        if fmt not in (1, _FORMAT):
            raise StateError(f"Unknown state format {fmt}")
        if stored_buckets != buckets:
            raise StateError(
                f"The checkpoint's state was written with state_buckets={stored_buckets}, the application "
                f"now uses {buckets}; keep the old value or clear the state (Application.clear_state())"
            )
        return cls(data, buckets, rest[0] if rest else None)
