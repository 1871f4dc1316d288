"""``StreamingSeries``: a lazy expression over one column (or any per-record computation).

>>> from streamspark.dataframe import StreamingSeries
>>> s = (StreamingSeries("a") + StreamingSeries("b")) * 2
>>> s.test({"a": 1, "b": 2})
6
>>> (StreamingSeries("a") > 0).test({"a": 3})
True
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Container, Optional

from ..models.types import Headers

__all__ = ("StreamingSeries",)

#: f(value, key, timestamp, headers) -> scalar
SeriesFunc = Callable[[Any, Any, int, Headers], Any]


def _column_getter(name: Any) -> SeriesFunc:
    def get(v: Any, k: Any, t: int, h: Headers) -> Any:
        return v[name]

    return get


class StreamingSeries:
    """A per-record expression; built from ``sdf["col"]`` and combined with operators.

    Operands may be series or constants. ``&`` and ``|`` are logical *and*/*or* of their
    operands (Python's ``and``/``or``), ``~`` is logical *not*.
    """

    __slots__ = ("_func", "_name", "_sdf_id")

    def __init__(self, name: Optional[Any] = None, sdf_id: Optional[int] = None, func: Optional[SeriesFunc] = None) -> None:
        if func is None:
            if name is None:
                raise ValueError("StreamingSeries needs either a column name or a function")
            func = _column_getter(name)
        self._func = func
        self._name = name
        self._sdf_id = sdf_id

    @property
    def name(self) -> Optional[Any]:
        return self._name

    @property
    def sdf_id(self) -> Optional[int]:
        return self._sdf_id

    @classmethod
    def from_apply_callback(cls, func: SeriesFunc, sdf_id: Optional[int] = None) -> "StreamingSeries":
        """Wrap ``func(value, key, timestamp, headers)`` as a series."""
        return cls(sdf_id=sdf_id, func=func)

    def evaluate(self, value: Any, key: Any = None, timestamp: int = 0, headers: Headers = None) -> Any:
        return self._func(value, key, timestamp, headers)

    def compose_returning(self) -> SeriesFunc:
        """Return the compiled ``f(value, key, timestamp, headers) -> result``."""
        return self._func

    def test(self, value: Any, key: Any = b"key", timestamp: int = 0, headers: Headers = None, ctx: Any = None) -> Any:
        """Evaluate the series on one value (no Spark, no broker)."""
        return self._func(value, key, timestamp, headers)

    # --- building ----------------------------------------------------------------------
    def _derive(self, func: SeriesFunc) -> "StreamingSeries":
        return StreamingSeries(sdf_id=self._sdf_id, func=func)

    def apply(self, func: Callable[[Any], Any]) -> "StreamingSeries":
        """Apply ``func`` to the series' result: one value in, one value out."""
        f = self._func

        def applied(v: Any, k: Any, t: int, h: Headers) -> Any:
            return func(f(v, k, t, h))

        return self._derive(applied)

    def _binary(self, other: Any, op: Callable[[Any, Any], Any], reflected: bool = False) -> "StreamingSeries":
        f = self._func
        if isinstance(other, StreamingSeries):
            g = other._func
            if reflected:

                def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                    return op(g(v, k, t, h), f(v, k, t, h))

            else:

                def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                    return op(f(v, k, t, h), g(v, k, t, h))

        elif reflected:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return op(other, f(v, k, t, h))

        else:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return op(f(v, k, t, h), other)

        return self._derive(run)

    def __getitem__(self, item: Any) -> "StreamingSeries":
        return self._binary(item, operator.getitem)

    # arithmetic
    def __add__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.add)

    def __radd__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.add, reflected=True)

    def __sub__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.sub)

    def __rsub__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.sub, reflected=True)

    def __mul__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.mul)

    def __rmul__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.mul, reflected=True)

    def __truediv__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.truediv)

    def __rtruediv__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.truediv, reflected=True)

    def __floordiv__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.floordiv)

    def __rfloordiv__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.floordiv, reflected=True)

    def __mod__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.mod)

    def __rmod__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.mod, reflected=True)

    def __pow__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.pow)

    def __rpow__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.pow, reflected=True)

    def __neg__(self) -> "StreamingSeries":
        return self.apply(operator.neg)

    def __abs__(self) -> "StreamingSeries":
        return self.apply(abs)

    # comparisons
    def __eq__(self, o: Any) -> "StreamingSeries":  # type: ignore[override]
        return self._binary(o, operator.eq)

    def __ne__(self, o: Any) -> "StreamingSeries":  # type: ignore[override]
        return self._binary(o, operator.ne)

    def __lt__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.lt)

    def __le__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.le)

    def __gt__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.gt)

    def __ge__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, operator.ge)

    # logic
    def __and__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, lambda x, y: x and y)

    def __rand__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, lambda x, y: x and y, reflected=True)

    def __or__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, lambda x, y: x or y)

    def __ror__(self, o: Any) -> "StreamingSeries":
        return self._binary(o, lambda x, y: x or y, reflected=True)

    def __invert__(self) -> "StreamingSeries":
        return self.apply(operator.not_)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise TypeError(
            "A StreamingSeries has no truth value; use & | ~ instead of and/or/not, "
            "and compare inside filters (sdf[sdf['a'] > 1])"
        )

    # methods
    def isin(self, other: Container[Any]) -> "StreamingSeries":
        """True when the result is ``in other``."""
        return self._binary(other, lambda x, y: x in y)

    def contains(self, other: Any) -> "StreamingSeries":
        """True when ``other in`` the result."""
        return self._binary(other, operator.contains)

    def is_(self, other: Any) -> "StreamingSeries":
        """Identity check ``result is other``."""
        return self._binary(other, operator.is_)

    def isnot(self, other: Any) -> "StreamingSeries":
        """Identity check ``result is not other``."""
        return self._binary(other, operator.is_not)

    def isnull(self) -> "StreamingSeries":
        """True when the result is None."""
        return self.apply(lambda x: x is None)

    def notnull(self) -> "StreamingSeries":
        """True when the result is not None."""
        return self.apply(lambda x: x is not None)

    def abs(self) -> "StreamingSeries":
        """Absolute value of the result."""
        return self.apply(abs)
