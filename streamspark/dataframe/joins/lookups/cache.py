"""A least-recently-used cache whose entries expire after a time-to-live.

>>> cache = TTLCache(maxsize=2)
>>> cache.get("a", ttl=60, now=0.0) is MISSING
True
>>> cache.set("a", {"x": 1}, now=0.0)
>>> cache.get("a", ttl=60, now=30.0), cache.get("a", ttl=60, now=61.0) is MISSING
({'x': 1}, True)
>>> cache.info()
{'hits': 1, 'misses': 2, 'size': 1, 'maxsize': 2}
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, Hashable

from .utils import CacheInfo

__all__ = ("TTLCache", "MISSING")

#: what :meth:`TTLCache.get` returns for an absent or expired entry
MISSING: Any = object()


class TTLCache:
    """Up to ``maxsize`` entries; storing one more evicts the least recently used.

    Values are copied in and out, so a caller that mutates what it got (a record being
    enriched further down a pipeline) cannot change what the next caller gets.
    """

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        #: key -> (stored at, value)
        self._entries: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()

    def get(self, key: Hashable, ttl: float, now: float) -> Any:
        """The value stored under ``key`` less than ``ttl`` seconds before ``now``, else :data:`MISSING`."""
        entry = self._entries.get(key)
        if entry is not None and now - entry[0] < ttl:
            self.hits += 1
            self._entries.move_to_end(key)
            return copy.deepcopy(entry[1])
        self.misses += 1
        return MISSING

    def set(self, key: Hashable, value: Any, now: float) -> None:
        """Store ``value`` under ``key`` as of ``now``."""
        self._entries[key] = (now, copy.deepcopy(value))
        self._entries.move_to_end(key)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def info(self) -> CacheInfo:
        return CacheInfo(hits=self.hits, misses=self.misses, size=len(self._entries), maxsize=self.maxsize)
