"""Window definitions: ``sdf.tumbling_window(...)`` → an aggregation → ``.current()`` / ``.final()``.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("t")).tumbling_window(duration_ms=10).sum().final()
>>> [sdf.test(v, timestamp=t) for v, t in ((1, 1), (2, 5), (3, 12))]
[[], [], [({'start': 0, 'end': 10, 'value': 3}, b'key', 0, None)]]
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Literal, Optional, Union

from ...core.stream.exceptions import InvalidOperation
from ...exceptions import InvalidTopology
from ..utils import ensure_milliseconds
from . import _process
from .aggregations import (
    BaseAggregator, BaseCollector, Collect, Count, Max, Mean, Min, Reduce, Sum,
)

if TYPE_CHECKING:
    from ..dataframe import StreamingDataFrame

__all__ = (
    "WindowDefinition", "Window", "TumblingTimeWindowDefinition", "HoppingTimeWindowDefinition",
    "SlidingTimeWindowDefinition", "TumblingCountWindowDefinition", "HoppingCountWindowDefinition",
    "SlidingCountWindowDefinition", "SessionWindowDefinition", "CollectorInCurrentWindow", "to_ms",
)

ClosingStrategy = Literal["key", "partition"]


def to_ms(value: Union[int, timedelta], what: str = "duration") -> int:
    """Milliseconds from an int or a ``timedelta`` (rounded to the nearest millisecond).

    >>> to_ms(timedelta(seconds=1.0006)), to_ms(250)
    (1001, 250)
    """
    try:
        return ensure_milliseconds(value)
    except TypeError:
        raise TypeError(f"{what} must be an int (ms) or a timedelta, got {type(value).__name__}") from None


class CollectorInCurrentWindow(InvalidOperation, InvalidTopology):
    """``.current()`` on a window with collectors (they need ``.final()``)."""


class Window:
    """A window with its aggregations; pick how results are emitted."""

    def __init__(self, definition: "WindowDefinition", aggregation: _process.Aggregation, name: str) -> None:
        self._definition = definition
        self._aggregation = aggregation
        self.name = name

    def current(self, closing_strategy: ClosingStrategy = "key") -> "StreamingDataFrame":
        """Emit the updated window(s) on every record (not with collectors)."""
        if self._aggregation.collect:
            raise CollectorInCurrentWindow(
                "BaseCollectors are not supported by `current` windows: collectors (collect(), Collect()) "
                "work with .final() only"
            )
        return self._apply("current", closing_strategy)

    def final(
        self, closing_strategy: ClosingStrategy = "key", close_idle_after: Optional[Union[int, timedelta]] = None
    ) -> "StreamingDataFrame":
        """Emit each window once, when it closes.

        :param close_idle_after: also close a key's open windows once it sent nothing for this
            long in *processing* time (ms or timedelta) — for keys that went quiet, whose last
            window would otherwise never close. Later records for those windows are late. On
            Spark this uses processing-time timers (an empty micro-batch runs every trigger
            interval to check them). Not in ``sdf.test()``; ``closing_strategy="key"`` only.
        """
        idle = to_ms(close_idle_after, "close_idle_after") if close_idle_after is not None else None
        if idle is not None:
            if idle <= 0:
                raise ValueError("close_idle_after must be positive")
            if closing_strategy != "key":
                raise TypeError('close_idle_after works with closing_strategy="key" (partition closing already '
                                "closes the windows of quiet keys)")
        return self._apply("final", closing_strategy, idle)

    def _apply(self, emit: str, closing_strategy: str, idle_ms: Optional[int] = None) -> "StreamingDataFrame":
        if closing_strategy not in ("key", "partition"):
            raise TypeError('closing_strategy must be "key" or "partition"')
        processor = self._definition._processor(self._aggregation, self.name, closing_strategy == "partition")
        processor.idle_ms = idle_ms
        sdf = self._definition._dataframe
        return sdf._derive(sdf._stream.add_window(processor, emit, sdf.stream_id))


class WindowDefinition:
    """Common part: choose the aggregation(s)."""

    _kind = "window"

    def __init__(self, dataframe: "StreamingDataFrame", name: Optional[str],
                 on_late: Optional[Callable[..., Optional[bool]]] = None) -> None:
        self._dataframe = dataframe
        self._name = name
        self._on_late = on_late

    def _params(self) -> str:
        raise NotImplementedError

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        raise NotImplementedError

    def _window(self, aggregators: dict[str, BaseAggregator], collectors: dict[str, BaseCollector],
                single: bool, op: str) -> Window:
        name = self._name or f"{self._kind}_{self._params()}_{op}"
        return Window(self, _process.Aggregation(aggregators, collectors, single), name)

    def _single(self, op: str, aggregation: Union[BaseAggregator, BaseCollector]) -> Window:
        if isinstance(aggregation, BaseCollector):
            return self._window({}, {"value": aggregation}, True, op)
        return self._window({"value": aggregation}, {}, True, op)

    def sum(self) -> Window:
        """Sum of the values."""
        return self._single("sum", Sum())

    def count(self) -> Window:
        """Number of records."""
        return self._single("count", Count())

    def mean(self) -> Window:
        """Mean of the values."""
        return self._single("mean", Mean())

    def max(self) -> Window:
        """Largest value."""
        return self._single("max", Max())

    def min(self) -> Window:
        """Smallest value."""
        return self._single("min", Min())

    def reduce(self, reducer: Callable[[Any, Any], Any], initializer: Callable[[Any], Any]) -> Window:
        """``initializer(first value)``, then ``reducer(aggregate, value)``."""
        return self._single("reduce", Reduce(reducer, initializer))

    def collect(self) -> Window:
        """All values of the window as a list (``.final()`` only)."""
        return self._single("collect", Collect())

    def agg(self, **operations: Union[BaseAggregator, BaseCollector]) -> Window:
        """Several named aggregations: ``.agg(avg=Mean("temp"), n=Count())`` → ``{"avg", "n", "start", "end"}``."""
        if not operations:
            raise ValueError("agg() needs at least one named aggregation")
        aggregators: dict[str, BaseAggregator] = {}
        collectors: dict[str, BaseCollector] = {}
        for col, op in operations.items():
            if col in ("start", "end"):
                raise ValueError(f"{col!r} is reserved for the window bounds")
            if isinstance(op, BaseAggregator):
                aggregators[col] = op
            elif isinstance(op, BaseCollector):
                collectors[col] = op
            else:
                raise TypeError(f"{col}={op!r} is neither an aggregator nor a collector")
        return self._window(aggregators, collectors, False, "agg")


class _TimeDefinition(WindowDefinition):
    def __init__(self, dataframe: "StreamingDataFrame", duration_ms: Union[int, timedelta],
                 grace_ms: Union[int, timedelta] = 0, name: Optional[str] = None,
                 on_late: Optional[Callable[..., Optional[bool]]] = None,
                 step_ms: Optional[Union[int, timedelta]] = None) -> None:
        super().__init__(dataframe, name, on_late)
        self.duration_ms = to_ms(duration_ms, "duration_ms")
        self.grace_ms = to_ms(grace_ms, "grace_ms")
        self.step_ms = to_ms(step_ms, "step_ms") if step_ms is not None else None
        if self.duration_ms < 1:
            raise ValueError("Window size cannot be smaller than 1ms")
        if self.grace_ms < 0:
            raise ValueError("Window grace cannot be smaller than 0ms")
        if self.step_ms is not None and not 0 < self.step_ms < self.duration_ms:
            raise ValueError(
                f"Window step size must be smaller than duration and bigger than 0ms, got {self.step_ms}ms"
            )

    def _params(self) -> str:
        step = f"_{self.step_ms}" if self.step_ms else ""
        return f"{self.duration_ms}{step}_{self.grace_ms}"


class TumblingTimeWindowDefinition(_TimeDefinition):
    _kind = "tumbling_window"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.TimeWindowProcessor(name, aggregation, self.duration_ms, self.grace_ms, None,
                                            self._on_late, by_partition)


class HoppingTimeWindowDefinition(_TimeDefinition):
    _kind = "hopping_window"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.TimeWindowProcessor(name, aggregation, self.duration_ms, self.grace_ms, self.step_ms,
                                            self._on_late, by_partition)


class SlidingTimeWindowDefinition(_TimeDefinition):
    _kind = "sliding_window"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        if by_partition:
            raise TypeError('Sliding windows support only the "key" closing strategy')
        return _process.SlidingWindowProcessor(name, aggregation, self.duration_ms, self.grace_ms, self._on_late)


class _CountDefinition(WindowDefinition):
    def __init__(self, dataframe: "StreamingDataFrame", count: int, step: Optional[int] = None,
                 name: Optional[str] = None) -> None:
        super().__init__(dataframe, name)
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"Window count must be an int, got {type(count).__name__}")
        if count < 2:
            raise ValueError("Window count must be greater than 1")
        if step is not None:
            if isinstance(step, bool) or not isinstance(step, int):
                raise TypeError(f"Window step must be an int, got {type(step).__name__}")
            if step < 1:
                raise ValueError("Window step must be greater or equal to 1")
        self.count_ = count
        self.step = step

    def _params(self) -> str:
        return f"{self.count_}" + (f"_{self.step}" if self.step else "")

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        if by_partition:
            raise TypeError("Count windows close when full; closing_strategy does not apply")
        return _process.CountWindowProcessor(name, aggregation, self.count_, self.step)


class TumblingCountWindowDefinition(_CountDefinition):
    _kind = "tumbling_count_window"


class HoppingCountWindowDefinition(_CountDefinition):
    _kind = "hopping_count_window"


class SlidingCountWindowDefinition(_CountDefinition):
    _kind = "sliding_count_window"


class SessionWindowDefinition(WindowDefinition):
    _kind = "session_window"

    def __init__(self, dataframe: "StreamingDataFrame", timeout_ms: Union[int, timedelta],
                 grace_ms: Union[int, timedelta] = 0, name: Optional[str] = None,
                 on_late: Optional[Callable[..., Optional[bool]]] = None) -> None:
        super().__init__(dataframe, name, on_late)
        self.timeout_ms = to_ms(timeout_ms, "timeout_ms")
        self.grace_ms = to_ms(grace_ms, "grace_ms")
        if self.timeout_ms < 1:
            raise ValueError("Session timeout cannot be smaller than 1ms")
        if self.grace_ms < 0:
            raise ValueError("Window grace cannot be smaller than 0ms")

    def _params(self) -> str:
        return f"{self.timeout_ms}_{self.grace_ms}"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.SessionWindowProcessor(name, aggregation, self.timeout_ms, self.grace_ms,
                                               self._on_late, by_partition)
