"""State types for type hints: the windowed state interface and its window tuples.

>>> from streamspark.state.types import WindowedState, WindowDetail
>>> detail: WindowDetail[int] = ((0, 10), 3, b"key")

streamspark's windows keep their state in Spark, so no user callback receives a
``WindowedState``; the protocol describes the interface for code written against it.
"""

from __future__ import annotations

from typing import Iterable, Optional, Protocol, TypeVar

__all__ = ("WindowDetail", "ExpiredWindowDetail", "WindowedState")

K = TypeVar("K", contravariant=True)  # keys only go in
V = TypeVar("V")

#: ``((start, end), aggregated value, key)``
WindowDetail = tuple[tuple[int, int], V, bytes]
#: ``((start, end), aggregated value, collected values, key)``
ExpiredWindowDetail = tuple[tuple[int, int], V, list[V], bytes]


class WindowedState(Protocol[K, V]):
    """Per-key state of a window step: plain keys, window values and collected values."""

    def get(self, key: K, default: Optional[V] = None) -> Optional[V]:
        """The value of ``key``, else ``default``."""
        ...

    def set(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``."""
        ...

    def delete(self, key: K) -> None:
        """Remove ``key`` (no error when it is missing)."""
        ...

    def exists(self, key: K) -> bool:
        """True when ``key`` holds a value."""
        ...

    def get_window(self, start_ms: int, end_ms: int, default: Optional[V] = None) -> Optional[V]:
        """The value of the window ``[start_ms, end_ms)``, else ``default``."""
        ...

    def update_window(self, start_ms: int, end_ms: int, value: V, timestamp_ms: int) -> None:
        """Set the window's value; ``timestamp_ms`` advances the latest timestamp seen."""
        ...

    def add_to_collection(self, value: V, id: Optional[int]) -> int:
        """Collect ``value`` under ``id`` (ids need not be unique); returns the id used."""
        ...

    def get_from_collection(self, start: int, end: int) -> list[V]:
        """Collected values with ``start <= id < end``."""
        ...

    def delete_from_collection(self, end: int, *, start: Optional[int] = None) -> None:
        """Delete collected values with ``id < end`` (from ``start`` when given)."""
        ...

    def get_latest_timestamp(self) -> Optional[int]:
        """The latest timestamp seen, in milliseconds."""
        ...

    def expire_windows(
        self, max_start_time: int, delete: bool = True, collect: bool = False, end_inclusive: bool = False
    ) -> Iterable[ExpiredWindowDetail[V]]:
        """Windows starting at or before ``max_start_time`` not expired yet, oldest first."""
        ...

    def delete_windows(self, max_start_time: int, delete_values: bool) -> None:
        """Delete windows starting at or before ``max_start_time`` (and older collected values)."""
        ...

    def get_windows(self, start_from_ms: int, start_to_ms: int, backwards: bool = False) -> list[WindowDetail[V]]:
        """Windows with ``start_from_ms < start <= start_to_ms``."""
        ...
