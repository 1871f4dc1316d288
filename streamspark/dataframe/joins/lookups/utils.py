"""Types shared by the lookups.

>>> CacheInfo(hits=1, misses=2, size=2, maxsize=1000)["misses"]
2
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ("CacheInfo",)


class CacheInfo(TypedDict):
    """Statistics of a lookup's LRU cache.

    :ivar hits: lookups answered from the cache.
    :ivar misses: lookups that had to query the store.
    :ivar size: entries held now.
    :ivar maxsize: most entries held at once.
    """

    hits: int
    misses: int
    size: int
    maxsize: int
