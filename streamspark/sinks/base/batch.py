"""``SinkBatch``: the records of one topic partition waiting to be written."""

from __future__ import annotations

import itertools
from typing import Any, Iterator, List, Tuple

from ...models.types import Headers
from .item import SinkItem

__all__ = ("SinkBatch",)


class SinkBatch:
    """Records of one topic partition accumulated between two flushes.

    >>> b = SinkBatch("t", 0)
    >>> for i in range(5): b.append(value=i, key=None, timestamp=0, headers=None, offset=i)
    >>> [[item.value for item in chunk] for chunk in b.iter_chunks(2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, topic: str, partition: int) -> None:
        self._topic = topic
        self._partition = partition
        self._buffer: List[SinkItem] = []

    @property
    def topic(self) -> str:
        return self._topic

    @property
    def partition(self) -> int:
        return self._partition

    @property
    def size(self) -> int:
        return len(self._buffer)

    @property
    def start_offset(self) -> int:
        """Offset of the first record (raises IndexError on an empty batch)."""
        return self._buffer[0].offset

    def empty(self) -> bool:
        return not self._buffer

    def append(self, value: Any, key: Any, timestamp: int, headers: Headers, offset: int) -> None:
        self._buffer.append(SinkItem(value=value, key=key, timestamp=timestamp, headers=headers, offset=offset))

    def clear(self) -> None:
        self._buffer.clear()

    def iter_chunks(self, n: int) -> Iterator[Tuple[SinkItem, ...]]:
        """Yield tuples of at most ``n`` items (the last one may be shorter).

        :raises ValueError: ``n`` is less than one.
        """
        if n < 1:
            raise ValueError("n must be at least one")
        it = iter(self._buffer)
        while chunk := tuple(itertools.islice(it, n)):
            yield chunk

    def __iter__(self) -> Iterator[SinkItem]:
        return iter(self._buffer)

    def __len__(self) -> int:
        return len(self._buffer)
