"""Storage of all state of one bucket of message keys, serialised as one blob in Spark state.

The blob keeps the ``State`` entries of a bucket's keys in *pages*: each key (with its stream)
belongs to one page by a stable hash, and a page is the pickled entries of its keys. Loading a
blob decodes no page; a key's page is decoded when a step first asks for the key's state, and
only the decoded pages are pickled again when the blob is written. So a micro-batch pays for
the keys it touches (and their page neighbours), not for every key of the bucket: what is left
per untouched key is copying its bytes. The pages double in number as the keys grow (all keys
are laid out again then, once per doubling), so a page holds at most about twice
:data:`PAGE_SCOPES` keys (:data:`PAGE_SCOPES` to twice that while the keys only grow).

>>> store = KeyedStateStore(buckets=1)
>>> for i in range(100):
...     store.state("clicks", b"user-%d" % i).set("n", i)
>>> again = KeyedStateStore.loads(store.dumps(), buckets=1)
>>> again.decoded_pages(), again.state("clicks", b"user-7").get("n"), again.decoded_pages()
(0, 7, 1)
>>> len(again)
100
"""

from __future__ import annotations

import pickle
import time
import zlib
from typing import Any, Callable, Optional

import orjson

from . import blob_codec
from .exceptions import StateError
from .base.state import State
from .ttl_count import ttl_writes

__all__ = ("KeyedStateStore", "scope_key")

#: 4: the blob names its bucket (3: the same without it; 2 and 1: every key in one dict)
_FORMAT = 4

#: the keys a page holds at least once the pages are laid out (at most twice that)
PAGE_SCOPES = 8

#: with entries that expire, each write of the blob also decodes this share of the pages not
#: decoded by the micro-batch, so that their expired entries are dropped within as many writes
SWEEP_SHARE = 16

_Scope = tuple[str, Any]

#: what unpickling a blob that was cut short or overwritten raises
_DAMAGED = (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError, OverflowError, UnicodeDecodeError)


def _page_of(scope: _Scope, pages: int) -> int:
    """The page of ``scope`` (a stream id and a scope key) among ``pages`` (a power of two):
    the same in every process (Python's own hash of str and bytes is not).

    The engine puts a key in its state bucket by the CRC-32 of the key modulo the bucket count,
    so the low bits of the CRC are the same for every key of a bucket: the page comes from the
    high bits of the CRC times an odd constant (Fibonacci hashing), which all bits of the CRC
    feed.

    >>> bucket_0 = [b"key-%d" % i for i in range(10_000) if zlib.crc32(b"key-%d" % i) % 64 == 0]
    >>> len({zlib.crc32(key) % 16 for key in bucket_0}), len({_page_of(("s", key), 16) for key in bucket_0})
    (1, 16)
    """
    skey = scope[1]
    crc = zlib.crc32(skey if skey is not None else b"\xff", zlib.crc32(scope[0].encode()))
    return ((crc * 0x9E3779B1) & 0xFFFFFFFF) >> (33 - pages.bit_length()) if pages > 1 else 0


def _holds_expiry(data: dict[_Scope, dict[Any, Any]]) -> bool:
    """Whether an entry of ``data`` (keys' entries, as in a store) has an expiry."""
    return any(e[2] is not None for entries in data.values() for e in entries.values())


def _page_count(scopes: int) -> int:
    """The pages for ``scopes`` keys: the power of two that puts PAGE_SCOPES to twice that many in a page."""
    pages = 1
    while pages * PAGE_SCOPES * 2 < scopes:
        pages *= 2
    return pages


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
        pages: Optional[list[bytes]] = None,
        paged_scopes: int = 0,
        expiring: bool = False,
        sweep: int = 0,
        bucket: Optional[int] = None,
    ) -> None:
        #: the decoded keys' entries (every key when ``_pages`` is None)
        self._data = data if data is not None else {}
        #: the pickled pages of a loaded blob (see the module); None: everything is in ``_data``
        self._pages = pages
        #: the pages decoded into ``_data``
        self._decoded: set[int] = set()
        #: keys in the pages not decoded yet
        self._paged_scopes = paged_scopes
        #: some entry has (or had) an expiry: writes sweep the pages for expired entries
        self._expiring = expiring
        if data is not None and pages is None and not expiring:
            # entries handed over whole (formats 1 and 2 record no such flag): looked through once
            self._expiring = _holds_expiry(data)
        #: :func:`ttl_writes` when this store was made: while it stays the same and the blob had
        #: no expiring entry, no entry here can expire
        self._ttl_mark = ttl_writes()
        self._sweep = sweep
        self.buckets = buckets
        #: the bucket this store holds (None: not one bucket's, as in ``sdf.test()``)
        self.bucket = bucket
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
            if self._pages is not None:
                if self._decode(_page_of(scope, len(self._pages))):
                    data = self._data.get(scope)
            if data is None:
                data = self._data[scope] = {}
        return State(data, step)

    def _decode(self, page: int) -> bool:
        """Decode ``page`` into ``_data`` unless it already is; True when it was decoded now."""
        assert self._pages is not None
        if page in self._decoded:
            return False
        raw = self._pages[page]
        if raw:
            scopes: dict[_Scope, dict[Any, Any]] = pickle.loads(raw)
            self._paged_scopes -= len(scopes)
            self._data.update(scopes)
        # only once its keys are in _data: a page that failed to load is never written back
        self._decoded.add(page)
        return True

    def decoded_pages(self) -> int:
        """How many pages of the loaded blob have been decoded (see the module)."""
        return len(self._decoded)

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

    def _may_expire(self) -> bool:
        """Whether an entry of this store may have an expiry (otherwise none is ever looked for)."""
        return self._expiring or ttl_writes() != self._ttl_mark

    def purge_expired(self) -> None:
        """Drop the expired entries of the decoded keys, and the keys left without entries."""
        for views in self._views.values():  # a purged key's view would point at a dropped dict
            views.clear()
        data = self._data
        if not self._may_expire():  # no entry has an expiry: only the empty keys go
            for scope in [scope for scope, entries in data.items() if not entries]:
                del data[scope]
            return
        now = int(time.time() * 1000)
        for scope in list(data):
            entries = data[scope]
            for k in [k for k, e in entries.items() if e[2] is not None and e[2] <= now]:
                del entries[k]
            if not entries:
                del data[scope]

    def __len__(self) -> int:
        return self._paged_scopes + len(self._data) + len(self._windows)

    def dumps(self, *, compress: bool = False) -> bytes:
        """The blob of this store: the pages of the keys not decoded as they were loaded, the
        decoded ones pickled again (all of them laid out again when the pages double); with
        ``compress``, compressed (:func:`blob_codec.pack`), which :meth:`loads` reads as well as
        an uncompressed blob.

        >>> store = KeyedStateStore(buckets=1)
        >>> for i in range(1000):
        ...     store.state("clicks", b"user-%d" % i).set("n", i)
        >>> packed = store.dumps(compress=True)
        >>> packed.startswith(blob_codec.MAGIC), len(packed) < len(store.dumps())
        (True, True)
        >>> KeyedStateStore.loads(packed, buckets=1).state("clicks", b"user-7").get("n")
        7
        """
        pages = self._pages
        if pages is not None and self._expiring:
            # a share of the other pages in turn, so that entries nobody reads expire too
            step = -(-len(pages) // SWEEP_SHARE)
            for page in range(self._sweep, min(self._sweep + step, len(pages))):
                self._decode(page)
            self._sweep = (self._sweep + step) % len(pages)
        self.purge_expired()
        # the pages (at least) double when the keys outgrow them: every key is laid out again
        relaid = pages is None or _page_count(self._paged_scopes + len(self._data)) > len(pages)
        if relaid and pages is not None:
            for page in range(len(pages)):
                self._decode(page)
            self.purge_expired()
        live = self._data
        expiring = self._may_expire() and (self._expiring or _holds_expiry(live))
        scopes = self._paged_scopes + len(live)
        grouped: dict[int, dict[_Scope, Any]]
        if relaid:
            # at least twice the pages: a count that fell back once the expired entries of the
            # pages never decoded were dropped would otherwise cross the same threshold again
            size = max(_page_count(scopes), 2 * len(pages) if pages is not None else 1)
            self._sweep = 0
            grouped = {}
            out = [b""] * size
        else:
            assert pages is not None
            size = len(pages)
            grouped = {page: {} for page in self._decoded}
            out = list(pages)
        for scope, entries in live.items():
            page = _page_of(scope, size)
            group = grouped.get(page)
            if group is None:
                if not relaid:  # a key of a page never decoded: writing it would drop the page's other keys
                    raise StateError(f"State of {scope!r} is in page {page}, which was not read")
                group = grouped[page] = {}
            group[scope] = entries
        for page, group in grouped.items():
            out[page] = pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL) if group else b""
        windows = {slot: data for slot, data in self._windows.items() if data}
        blob = pickle.dumps(
            (_FORMAT, self.buckets, windows, out, scopes, expiring, self._sweep, self.bucket), protocol=pickle.HIGHEST_PROTOCOL
        )
        return blob_codec.pack(blob) if compress else blob

    @classmethod
    def loads(cls, blob: Optional[bytes | bytearray], buckets: int, bucket: Optional[int] = None) -> "KeyedStateStore":
        """The store of ``blob`` (an empty one without it), for bucket ``bucket`` of ``buckets``;
        ``blob`` compressed or not (:mod:`.blob_codec`). A blob that was cut short or altered
        raises :class:`StateError` saying the checkpoint's state is damaged.

        A blob written with another bucket count, or (from format 4) by another bucket than
        ``bucket``, raises :class:`StateError`: the keys would be looked for in the wrong place.

        >>> blob = KeyedStateStore(buckets=4, bucket=2).dumps()
        >>> KeyedStateStore.loads(blob, 4, bucket=2).bucket
        2
        >>> KeyedStateStore.loads(blob, 4, bucket=3)
        Traceback (most recent call last):
        ...
        streamspark.state.exceptions.StateError: The state of bucket 2 was read as bucket 3's: ...
        """
        if not blob:
            return cls(buckets=buckets, bucket=bucket)
        raw = blob_codec.unpack(blob)
        try:
            fmt, stored_buckets, *rest = pickle.loads(raw)
        except _DAMAGED as exc:  # a blob cut short or overwritten (not a class that is gone: its own error)
            raise StateError(f"A state blob could not be read ({exc!r}); the checkpoint's state is damaged") from exc
        if fmt not in (1, 2, 3, _FORMAT):
            raise StateError(f"Unknown state format {fmt}")
        if stored_buckets != buckets:
            raise StateError(
                f"The checkpoint's state was written with state_buckets={stored_buckets}, the application "
                f"now uses {buckets}; keep the old value or clear the state (Application.clear_state())"
            )
        if fmt >= 3:
            windows, pages, scopes, expiring, sweep = rest[:5]
            stored_bucket = rest[5] if fmt >= 4 else None
            if stored_bucket is not None and bucket is not None and stored_bucket != bucket:
                raise StateError(
                    f"The state of bucket {stored_bucket} was read as bucket {bucket}'s: the checkpoint's state "
                    "layout (streamspark-state.json) is missing or not the one its state was written with; restore "
                    "it from a copy of the checkpoint, or clear the state (Application.clear_state())"
                )
            return cls(None, buckets, windows, pages=pages, paged_scopes=scopes, expiring=expiring, sweep=sweep, bucket=bucket)
        # formats 1 and 2: every key's entries in one dict (and, from 2, the windows' data)
        return cls(rest[0], buckets, rest[1] if len(rest) > 1 else None, bucket=bucket)
