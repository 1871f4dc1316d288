"""Window aggregations: reduce the records of a window into values (aggregators) or keep them (collectors).

>>> from streamspark.dataframe.windows.aggregations import Mean, Count, Collect
>>> m = Mean("temp")
>>> state = m.initialize()
>>> for v in ({"temp": 20}, {"temp": None}, {"temp": 22}):
...     state = m.agg(state, v, 0)
>>> m.result(state)
21.0

Custom aggregators subclass :class:`Aggregator` (or :class:`BaseAggregator`) and implement
``initialize()``, ``agg(old, new, timestamp)`` and ``result(state)``; the state must be
picklable. ``state_suffix`` names the stored state: change it when the aggregator's
parameters change, or the old state would be read with new parameters.
"""

from __future__ import annotations

import abc
from typing import Any, Callable, Generic, Iterable, Optional, TypeVar

__all__ = (
    "BaseAggregator",
    "Aggregator",
    "BaseCollector",
    "Collector",
    "Count",
    "Sum",
    "Mean",
    "Max",
    "Min",
    "Earliest",
    "Latest",
    "First",
    "Last",
    "Reduce",
    "Collect",
)

S = TypeVar("S")
R = TypeVar("R")


class BaseAggregator(abc.ABC, Generic[S]):
    """Reduces the records of a window into one state; ``result`` turns it into the output."""

    @property
    @abc.abstractmethod
    def state_suffix(self) -> str:
        """Part of the state key of this aggregation (with the result column name)."""

    @abc.abstractmethod
    def initialize(self) -> S:
        """The state of an empty window."""

    @abc.abstractmethod
    def agg(self, old: S, new: Any, timestamp: int) -> S:
        """The state after adding record ``new`` (with its timestamp)."""

    @abc.abstractmethod
    def result(self, value: S) -> Any:
        """The output for state ``value``."""

    def merge(self, a: S, b: S) -> S:
        """The state of two sessions merged into one (session windows only): ``a`` is the state
        of the session that starts earlier, ``b`` of the later one.

        :raises NotImplementedError: this aggregator cannot merge (not usable in session windows).
        """
        raise NotImplementedError(f"{type(self).__name__} does not support merging and cannot be used with session windows")

    @property
    def mergeable(self) -> bool:
        """Whether :meth:`merge` is implemented (required by session windows)."""
        return type(self).merge is not BaseAggregator.merge


class Aggregator(BaseAggregator[S]):
    """An aggregator over the whole value, or over ``value[column]`` when ``column`` is given."""

    def __init__(self, column: Optional[str] = None) -> None:
        self.column = column

    @property
    def state_suffix(self) -> str:
        name = type(self).__name__
        return name if self.column is None else f"{name}/{self.column}"

    def _pick(self, value: Any) -> Any:
        return value if self.column is None else value.get(self.column)


class Count(Aggregator[int]):
    """The number of records (with ``column``: of records where it is not None)."""

    def initialize(self) -> int:
        return 0

    def agg(self, old: int, new: Any, timestamp: int) -> int:
        return old if self._pick(new) is None else old + 1

    def result(self, value: int) -> int:
        return value

    def merge(self, a: int, b: int) -> int:
        return a + b


class Sum(Aggregator[Any]):
    """The sum of the values (None values are skipped)."""

    def initialize(self) -> Any:
        return 0

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        picked = self._pick(new)
        return old if picked is None else old + picked

    def result(self, value: Any) -> Any:
        return value

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


class Mean(Aggregator[Any]):
    """The mean of the values (None values are skipped); None for an empty window."""

    def initialize(self) -> Any:
        return (0.0, 0)

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        picked = self._pick(new)
        if picked is None:
            return old
        total, n = old
        return (total + picked, n + 1)

    def result(self, value: Any) -> Optional[float]:
        total, n = value
        return total / n if n else None

    def merge(self, a: Any, b: Any) -> Any:
        return (a[0] + b[0], a[1] + b[1])


class _Extreme(Aggregator[Any]):
    """Keeps the value that ``_wins(new, old)`` prefers (None values are skipped)."""

    def _wins(self, new: Any, old: Any) -> bool:
        raise NotImplementedError

    def initialize(self) -> Any:
        return None

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        picked = self._pick(new)
        if picked is None:
            return old
        return picked if old is None or self._wins(picked, old) else old

    def result(self, value: Any) -> Any:
        return value

    def merge(self, a: Any, b: Any) -> Any:
        if a is None or b is None:
            return b if a is None else a
        return b if self._wins(b, a) else a


class Max(_Extreme):
    """The largest value (None values are skipped)."""

    def _wins(self, new: Any, old: Any) -> bool:
        return bool(new > old)


class Min(_Extreme):
    """The smallest value (None values are skipped)."""

    def _wins(self, new: Any, old: Any) -> bool:
        return bool(new < old)


class _ByTime(Aggregator[Any]):
    """Keeps ``(value, timestamp)`` of the record ``_wins(timestamp, kept timestamp)`` prefers."""

    def _wins(self, timestamp: int, kept: int) -> bool:
        raise NotImplementedError

    def initialize(self) -> Any:
        return None

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        picked = self._pick(new)
        if picked is None:
            return old
        return (picked, timestamp) if old is None or self._wins(timestamp, old[1]) else old

    def result(self, value: Any) -> Any:
        return None if value is None else value[0]

    def merge(self, a: Any, b: Any) -> Any:
        if a is None or b is None:
            return b if a is None else a
        return b if self._wins(b[1], a[1]) else a


class Earliest(_ByTime):
    """The value with the smallest timestamp (the first one seen among equal timestamps)."""

    def _wins(self, timestamp: int, kept: int) -> bool:
        return timestamp < kept


class Latest(_ByTime):
    """The value with the largest timestamp (the last one seen among equal timestamps)."""

    def _wins(self, timestamp: int, kept: int) -> bool:
        return timestamp >= kept


class First(Aggregator[Any]):
    """The first value in processing order (not by timestamp)."""

    def initialize(self) -> Any:
        return None

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        return self._pick(new) if old is None else old

    def result(self, value: Any) -> Any:
        return value

    def merge(self, a: Any, b: Any) -> Any:
        """Merged sessions keep the earlier session's first value."""
        return b if a is None else a


class Last(Aggregator[Any]):
    """The last non-None value in processing order (not by timestamp)."""

    def initialize(self) -> Any:
        return None

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        picked = self._pick(new)
        return old if picked is None else picked

    def result(self, value: Any) -> Any:
        return value

    def merge(self, a: Any, b: Any) -> Any:
        """Merged sessions keep the later session's last value."""
        return a if b is None else b


class Reduce(Aggregator[Any], Generic[R]):
    """``initializer(first value)`` then ``reducer(state, value)`` for each next value.

    ``merger(a, b)`` combines the states of two merged sessions; session windows need it.
    """

    def __init__(
        self, reducer: Callable[[R, Any], R], initializer: Callable[[Any], R], merger: Optional[Callable[[R, R], R]] = None
    ) -> None:
        super().__init__(None)
        self._reducer = reducer
        self._initializer = initializer
        self._merger = merger

    def initialize(self) -> Any:
        return None

    def agg(self, old: Any, new: Any, timestamp: int) -> Any:
        return self._initializer(new) if old is None else self._reducer(old, new)

    def result(self, value: Any) -> Any:
        return value

    def merge(self, a: Any, b: Any) -> Any:
        if self._merger is None:
            raise NotImplementedError(
                "Reduce does not support merging and cannot be used with session windows unless a `merger=` function is provided"
            )
        return self._merger(a, b)

    @property
    def mergeable(self) -> bool:
        return self._merger is not None


I = TypeVar("I")


class BaseCollector(abc.ABC, Generic[I]):
    """Keeps the records of a window as they are; ``result`` gets them when the window closes.

    Collected items come in timestamp order (processing order among equal timestamps) for
    time windows, and in processing order for count windows. Collectors work with
    ``.final()`` only.
    """

    @property
    @abc.abstractmethod
    def column(self) -> Optional[str]:
        """The column to keep, or None for the whole value."""

    @abc.abstractmethod
    def result(self, items: Iterable[I]) -> Any:
        """The output for the collected items."""


class Collector(BaseCollector[I]):
    def __init__(self, column: Optional[str] = None) -> None:
        self._column = column

    @property
    def column(self) -> Optional[str]:
        return self._column


class Collect(Collector[Any]):
    """All values of the window (or their ``column``) as a list."""

    def result(self, items: Iterable[Any]) -> list[Any]:
        return list(items)
