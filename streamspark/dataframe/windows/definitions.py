"""Window definitions: ``sdf.tumbling_window(...)`` → an aggregation → ``.current()`` / ``.final()``.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("t")).tumbling_window(duration_ms=10).sum().final()
>>> [sdf.test(v, timestamp=t) for v, t in ((1, 1), (2, 5), (3, 12))]
[[], [], [({'start': 0, 'end': 10, 'value': 3}, b'key', 0, None)]]
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Generic, Optional, TypeVar, Union

from . import _process
from .aggregations import (
    BaseAggregator,
    BaseCollector,
    Collect,
    Count,
    Max,
    Mean,
    Min,
    Reduce,
    Sum,
)
from ...core.stream.exceptions import InvalidOperation
from .base import CollectorInCurrentWindow, Window, to_ms
from .count_based import CountWindow
from .sliding import SlidingWindow
from .time_based import ClosingStrategyValues, SessionWindow, TimeWindow

if TYPE_CHECKING:
    from ..dataframe import StreamingDataFrame

__all__ = (
    "WindowDefinition",
    "Window",
    "TumblingTimeWindowDefinition",
    "HoppingTimeWindowDefinition",
    "SlidingTimeWindowDefinition",
    "TumblingCountWindowDefinition",
    "HoppingCountWindowDefinition",
    "SlidingCountWindowDefinition",
    "SessionWindowDefinition",
    "CollectorInCurrentWindow",
    "to_ms",
)

#: kept under its former name
ClosingStrategy = ClosingStrategyValues


_WindowT = TypeVar("_WindowT", bound=Window)


class WindowDefinition(Generic[_WindowT]):
    """Common part: choose the aggregation(s)."""

    _kind = "window"
    #: the class of the windows this definition makes
    _window_class: type[_WindowT]

    def __init__(
        self, dataframe: "StreamingDataFrame", name: Optional[str], on_late: Optional[Callable[..., Optional[bool]]] = None
    ) -> None:
        self._dataframe = dataframe
        self._name = name
        self._on_late = on_late

    def _params(self) -> str:
        """The window's sizes in its store name (``"_<duration>"``...)."""
        raise NotImplementedError

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        raise NotImplementedError

    def _store_name(self, op: Optional[str]) -> str:
        """``[<name>_]<kind>_<sizes>[_<op>]``, e.g. ``tumbling_window_60000_sum`` (no op for ``agg``)."""
        prefix = f"{self._name}_{self._kind}" if self._name else self._kind
        return f"{prefix}{self._params()}" + (f"_{op}" if op else "")

    def _window(
        self, aggregators: dict[str, BaseAggregator], collectors: dict[str, BaseCollector], single: bool, op: Optional[str]
    ) -> _WindowT:
        return self._window_class(self, _process.Aggregation(aggregators, collectors, single), self._store_name(op))

    def _single(self, op: str, aggregation: Union[BaseAggregator, BaseCollector]) -> _WindowT:
        if isinstance(aggregation, BaseCollector):
            return self._window({}, {"value": aggregation}, True, op)
        return self._window({"value": aggregation}, {}, True, op)

    def sum(self) -> _WindowT:
        """Sum of the values."""
        return self._single("sum", Sum())

    def count(self) -> _WindowT:
        """Number of records."""
        return self._single("count", Count())

    def mean(self) -> _WindowT:
        """Mean of the values."""
        return self._single("mean", Mean())

    def max(self) -> _WindowT:
        """Largest value."""
        return self._single("max", Max())

    def min(self) -> _WindowT:
        """Smallest value."""
        return self._single("min", Min())

    def reduce(
        self,
        reducer: Callable[[Any, Any], Any],
        initializer: Callable[[Any], Any],
        *,
        merger: Optional[Callable[[Any, Any], Any]] = None,
    ) -> _WindowT:
        """``initializer(first value)``, then ``reducer(aggregate, value)`` (``merger``: see :class:`Reduce`)."""
        return self._single("reduce", Reduce(reducer, initializer, merger))

    def collect(self) -> _WindowT:
        """All values of the window as a list (``.final()`` only)."""
        return self._single("collect", Collect())

    def agg(self, **operations: Union[BaseAggregator, BaseCollector]) -> _WindowT:
        """Several named aggregations: ``.agg(avg=Mean("temp"), n=Count())`` → ``{"avg", "n", "start", "end"}``."""
        if not operations:
            raise ValueError("At least one aggregator or collector must be defined")
        aggregators: dict[str, BaseAggregator] = {}
        collectors: dict[str, BaseCollector] = {}
        for col, op in operations.items():
            if col in ("start", "end"):
                raise ValueError("`start` and `end` are reserved keywords for the window boundaries")
            if isinstance(op, BaseAggregator):
                aggregators[col] = op
            elif isinstance(op, BaseCollector):
                collectors[col] = op
            else:
                raise TypeError(f"{col}={op!r} is neither an aggregator nor a collector")
        return self._window(aggregators, collectors, False, None)


class _TimeDefinition(WindowDefinition[TimeWindow]):
    _window_class = TimeWindow
    #: whether ``before_update``/``after_update`` may close this kind of window early
    _takes_update_callbacks = True

    def __init__(
        self,
        dataframe: "StreamingDataFrame",
        duration_ms: Union[int, timedelta],
        grace_ms: Union[int, timedelta] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
        step_ms: Optional[Union[int, timedelta]] = None,
        before_update: Optional[_process.UpdateTrigger] = None,
        after_update: Optional[_process.UpdateTrigger] = None,
    ) -> None:
        if not self._takes_update_callbacks and (before_update is not None or after_update is not None):
            raise ValueError(f"{self._kind} takes no before_update/after_update; use a tumbling or hopping window")
        super().__init__(dataframe, name, on_late)
        self._before_update = before_update
        self._after_update = after_update
        self.duration_ms = to_ms(duration_ms, "duration_ms")
        self.grace_ms = to_ms(grace_ms, "grace_ms")
        self.step_ms = to_ms(step_ms, "step_ms") if step_ms is not None else None
        if self.duration_ms < 1:
            raise ValueError("Window size cannot be smaller than 1ms")
        if self.grace_ms < 0:
            raise ValueError("Window grace cannot be smaller than 0ms")
        if self.step_ms is not None and not 0 < self.step_ms < self.duration_ms:
            raise ValueError(f"Window step size must be smaller than duration and bigger than 0ms, got {self.step_ms}ms")

    def _params(self) -> str:
        step = f"_{self.step_ms}" if self.step_ms else ""
        return f"_{self.duration_ms}{step}"


class TumblingTimeWindowDefinition(_TimeDefinition):
    _kind = "tumbling_window"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.TimeWindowProcessor(
            name,
            aggregation,
            self.duration_ms,
            self.grace_ms,
            None,
            self._on_late,
            by_partition,
            self._before_update,
            self._after_update,
        )


class HoppingTimeWindowDefinition(_TimeDefinition):
    _kind = "hopping_window"

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.TimeWindowProcessor(
            name,
            aggregation,
            self.duration_ms,
            self.grace_ms,
            self.step_ms,
            self._on_late,
            by_partition,
            self._before_update,
            self._after_update,
        )


class SlidingTimeWindowDefinition(_TimeDefinition):
    _kind = "sliding_window"
    _window_class = SlidingWindow
    _takes_update_callbacks = False

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        if by_partition:
            raise TypeError('Sliding windows support only the "key" closing strategy')
        return _process.SlidingWindowProcessor(name, aggregation, self.duration_ms, self.grace_ms, self._on_late)


class _CountDefinition(WindowDefinition[CountWindow]):
    _window_class = CountWindow

    def __init__(
        self, dataframe: "StreamingDataFrame", count: int, step: Optional[int] = None, name: Optional[str] = None
    ) -> None:
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
        return ""

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


class SessionWindowDefinition(WindowDefinition[TimeWindow]):
    _kind = "session_window"
    _window_class = SessionWindow

    def __init__(
        self,
        dataframe: "StreamingDataFrame",
        inactivity_gap_ms: Union[int, timedelta],
        grace_ms: Union[int, timedelta] = 0,
        name: Optional[str] = None,
        on_late: Optional[Callable[..., Optional[bool]]] = None,
    ) -> None:
        super().__init__(dataframe, name, on_late)
        self.inactivity_gap_ms = to_ms(inactivity_gap_ms, "inactivity_gap_ms")
        self.grace_ms = to_ms(grace_ms, "grace_ms")
        if self.inactivity_gap_ms < 1:
            raise ValueError("inactivity_gap_ms cannot be smaller than 1ms")
        if self.grace_ms < 0:
            raise ValueError("grace_ms cannot be smaller than 0ms")

    def _params(self) -> str:
        return f"_{self.inactivity_gap_ms}"

    def _window(
        self, aggregators: dict[str, BaseAggregator], collectors: dict[str, BaseCollector], single: bool, op: Optional[str]
    ) -> TimeWindow:
        non_mergeable = [column for column, aggregator in aggregators.items() if not aggregator.mergeable]
        if non_mergeable:
            raise InvalidOperation(
                f"Aggregations {non_mergeable} cannot be used with session windows because they do not "
                "implement `merge`. Session windows may merge two open sessions into one when a late event "
                "bridges them, which requires combining their aggregation states. Use a mergeable aggregation "
                "(Count, Sum, Mean, Min, Max, First, Last, Earliest, Latest, Collect), pass `merger=` to "
                "`Reduce`, or implement `merge()` on your custom aggregator."
            )
        return super()._window(aggregators, collectors, single, op)

    def _processor(self, aggregation: _process.Aggregation, name: str, by_partition: bool) -> Any:
        return _process.SessionWindowProcessor(
            name, aggregation, self.inactivity_gap_ms, self.grace_ms, self._on_late, by_partition
        )
