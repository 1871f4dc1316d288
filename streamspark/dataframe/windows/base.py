"""The window base class: a window definition with its aggregation(s), emitted with
``.final()`` or ``.current()``; and :func:`get_window_ranges`.

>>> get_window_ranges(timestamp_ms=25, duration_ms=10, step_ms=5)
deque([(20, 30), (25, 35)])
"""

from __future__ import annotations

import abc
import weakref
from collections import deque
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Deque, Optional, Union

from ...core.stream.exceptions import InvalidOperation
from ...exceptions import InvalidTopology
from ...state.exceptions import StoreAlreadyRegisteredError
from ..utils import ensure_milliseconds
from . import _process

if TYPE_CHECKING:
    from ...core.stream import StreamNode
    from ..dataframe import StreamingDataFrame
    from .definitions import WindowDefinition

__all__ = ("Window", "SingleAggregationWindowMixin", "CollectorInCurrentWindow", "get_window_ranges", "to_ms")


def to_ms(value: Union[int, timedelta], what: str = "duration") -> int:
    """Milliseconds from an int or a ``timedelta`` (rounded to the nearest millisecond).

    >>> to_ms(timedelta(seconds=1.0006)), to_ms(250)
    (1001, 250)
    """
    try:
        return ensure_milliseconds(value)
    except TypeError as exc:
        raise TypeError(f"{exc} ({what})") from None


#: the ``(stream_id, store name)`` of the windows applied in each dataframe tree
_window_stores: "weakref.WeakKeyDictionary[StreamNode, set[tuple[str, str]]]" = weakref.WeakKeyDictionary()


class CollectorInCurrentWindow(InvalidOperation, InvalidTopology):
    """``.current()`` on a window with collectors (they need ``.final()``)."""


def get_window_ranges(timestamp_ms: int, duration_ms: int, step_ms: Optional[int] = None) -> Deque[tuple[int, int]]:
    """The ``(start, end)`` windows containing ``timestamp_ms``, aligned to the epoch, oldest first.

    ``step_ms`` is the step of hopping windows (None: tumbling windows of ``duration_ms``).

    >>> get_window_ranges(25, 10)
    deque([(20, 30)])
    """
    return deque(_process.window_ranges(timestamp_ms, duration_ms, step_ms))


class Window(abc.ABC):
    """A window with its aggregation(s): pick how its results are emitted.

    ``sdf.tumbling_window(...).sum()`` (or ``.agg(...)``) returns one; ``.final()`` emits each
    window once when it closes, ``.current()`` the updated windows on every record.

    >>> from streamspark.dataframe import StreamingDataFrame
    >>> from streamspark.models import Topic
    >>> isinstance(StreamingDataFrame(Topic("t")).tumbling_count_window(3).sum(), Window)
    True
    """

    def __init__(self, definition: "WindowDefinition", aggregation: _process.Aggregation, name: str) -> None:
        self._definition = definition
        self._aggregation = aggregation
        self.name = name
        self._record_processor: Any = None

    @abc.abstractmethod
    def final(self) -> "StreamingDataFrame":
        """Emit each window once, when it closes: ``{"start": ms, "end": ms, "value": ...}``."""

    @abc.abstractmethod
    def current(self) -> "StreamingDataFrame":
        """Emit the updated window(s) on every record (not with collectors)."""

    def process_window(
        self, value: Any, key: Any, timestamp_ms: int, transaction: _process.WindowStore
    ) -> tuple[list[tuple[Any, dict[str, Any]]], list[tuple[Any, dict[str, Any]]]]:
        """Add one record to this window's state in ``transaction`` (closing windows by key).

        :return: ``(updated, expired)``: the ``(key, window)`` pairs updated by the record
            and those it closed. The pipeline calls this for you (the state lives in Spark's
            state store); it is here for running a window by hand over a store of your own.
        """
        if self._record_processor is None:
            self._record_processor = self._definition._processor(self._aggregation, self.name, False)  # noqa: SLF001
        updated, expired = self._record_processor.process(value, key, timestamp_ms, transaction, True)
        return list(updated), list(expired)

    def _check_current(self) -> None:
        if self._aggregation.collect:
            raise CollectorInCurrentWindow("BaseCollectors are not supported by `current` windows")

    def _final(self, closing_strategy: str, close_idle_after: Optional[Union[int, timedelta]]) -> "StreamingDataFrame":
        closing_strategy = _closing_strategy(closing_strategy)
        idle = None
        if close_idle_after is not None:
            idle = to_ms(close_idle_after, "close_idle_after")
            if idle <= 0:
                raise ValueError("close_idle_after must be positive")
            if closing_strategy != "key":
                raise TypeError(
                    'close_idle_after works with closing_strategy="key" (partition closing already '
                    "closes the windows of quiet keys)"
                )
        return self._apply("final", closing_strategy, idle)

    def _apply(self, emit: str, closing_strategy: str, idle_ms: Optional[int] = None) -> "StreamingDataFrame":
        closing_strategy = _closing_strategy(closing_strategy)
        processor = self._definition._processor(self._aggregation, self.name, closing_strategy == "partition")  # noqa: SLF001
        processor.idle_ms = idle_ms
        sdf = self._definition._dataframe  # noqa: SLF001
        stores = _window_stores.setdefault(sdf.stream.root(), set())
        if (sdf.stream_id, self.name) in stores:
            raise StoreAlreadyRegisteredError(
                "This window range and type combination already exists; "
                "to use this window, provide a unique name via the `name` parameter."
            )
        stores.add((sdf.stream_id, self.name))
        return sdf._derive(sdf._stream.add_window(processor, emit, sdf.stream_id))  # noqa: SLF001


class SingleAggregationWindowMixin:
    """Deprecated: the windows of one aggregation (``.sum()``, ``.collect()``...).

    Every window class takes one or several aggregations (``.agg(...)``); a single one is
    emitted under ``"value"``. Kept so that imports of it keep working.
    """


def _closing_strategy(value: Any) -> str:
    """``"key"`` or ``"partition"``, in any letter case (as Quix Streams takes them).

    >>> _closing_strategy("PARTITION")
    'partition'
    """
    strategy = value.lower() if isinstance(value, str) else value
    if strategy not in ("key", "partition"):
        raise TypeError('closing_strategy must be "key" or "partition"')
    return str(strategy)
