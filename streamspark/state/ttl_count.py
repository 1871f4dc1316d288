"""How many state entries this process has written with a ``ttl``.

A store whose blob held no expiring entry, and that has seen this count stay the same since
it was made, holds no entry that can expire, so writing it back need not look for any
(:meth:`streamspark.state.store.KeyedStateStore.dumps`).

>>> before = ttl_writes()
>>> note_ttl_write()
>>> ttl_writes() - before
1
"""

from __future__ import annotations

import threading

__all__ = ("note_ttl_write", "ttl_writes")

_lock = threading.Lock()
_count = 0


def note_ttl_write() -> None:
    """Count one entry written with a ``ttl`` (thread-safe: the count only ever grows)."""
    global _count
    with _lock:
        _count += 1


def ttl_writes() -> int:
    """How many entries this process has written with a ``ttl`` so far."""
    return _count
