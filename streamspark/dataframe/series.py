"""``StreamingSeries``: a lazy expression over one column (or any per-record computation).

``test()`` returns ``(result, key, timestamp, headers)``, as the composed function does:

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("t"))
>>> ((sdf["a"] + sdf["b"]) * 2).test({"a": 1, "b": 2}, b"key", 0)
(6, b'key', 0, None)
>>> (sdf["a"].isnull() | (sdf["b"] > 1)).test({"a": None}, b"key", 0)[0]
True
"""

from __future__ import annotations

import contextvars
import operator
from typing import TYPE_CHECKING, Any, Callable, Container, Iterator, NoReturn, Optional

from ..context import set_message_context
from ..core.stream.expressions import Binary, Column, Constant, Expression, Logic, Not, binary_name
from ..models.messagecontext import MessageContext
from ..models.types import Headers
from .exceptions import ColumnDoesNotExist, InvalidColumnReference, InvalidOperation

if TYPE_CHECKING:
    from ..core.stream import ReturningFn, Stream

__all__ = ("StreamingSeries", "value_function", "series_expression")

#: f(value, key, timestamp, headers) -> scalar
SeriesFunc = Callable[[Any, Any, int, Headers], Any]


def _column_getter(name: Any) -> SeriesFunc:
    def get(v: Any, k: Any, t: int, h: Headers) -> Any:
        try:
            return v[name]
        except KeyError:
            raise ColumnDoesNotExist(f"Column '{name}' does not exist in the message value")
        except TypeError:
            raise InvalidColumnReference(
                f"Cannot access column '{name}'; column referencing expects message value type 'dict', not '{type(v).__name__}'"
            )

    return get


def _from_stream(stream: "Stream") -> SeriesFunc:
    returning = stream.compose_returning()

    def run(v: Any, k: Any, t: int, h: Headers) -> Any:
        return returning(v, k, t, h)[0]

    return run


def _constant(value: Any) -> SeriesFunc:
    def get(v: Any, k: Any, t: int, h: Headers) -> Any:
        return value

    return get


def value_function(series: "StreamingSeries") -> SeriesFunc:
    """The series' ``f(value, key, timestamp, headers) -> result`` (the result alone)."""
    return series._func  # noqa: SLF001


def series_expression(series: "StreamingSeries") -> Optional[Expression]:
    """What the series computes as an expression tree (``streamspark.core.stream.expressions``),
    or None when it runs a function (``.apply``, ``.isin``, a dataframe's steps...).

    >>> from streamspark.dataframe import StreamingDataFrame
    >>> from streamspark.models import Topic
    >>> sdf = StreamingDataFrame(Topic("t"))
    >>> series_expression(sdf["temp"] > 25)
    Binary(op='gt', left=Column(name='temp'), right=Constant(value=25))
    >>> series_expression(sdf["temp"].apply(round)) is None
    True
    """
    return series._expr  # noqa: SLF001


def _operand(other: Any) -> Optional[Expression]:
    """The expression of an operand: a series' tree (None without one), or a constant."""
    if isinstance(other, StreamingSeries):
        return other._expr  # noqa: SLF001
    return Constant(other)


class StreamingSeries:
    """A per-record expression; built from ``sdf["col"]`` and combined with operators.

    Operands may be series or constants. ``&`` and ``|`` are the logical *and*/*or* of their
    operands with Python's short-circuit (the right side is not evaluated when the left one
    decides), ``~`` is logical *not*. ``and``/``or``/``not`` and ``bool()`` raise
    :class:`~streamspark.dataframe.exceptions.InvalidOperation`, and so does combining series
    of different dataframes. ``sdf["col"]`` raises ``ColumnDoesNotExist`` for a missing column
    and ``InvalidColumnReference`` when the value is not a dict.

    :param sdf_id: ``id()`` of the dataframe the series belongs to.
    :param name: the column to read.
    :param stream: a :class:`~streamspark.core.stream.Stream` of apply steps to run instead.
    """

    __slots__ = ("_func", "_name", "_sdf_id", "_expr")

    def __init__(self, sdf_id: Optional[int] = None, name: Optional[str] = None, stream: Optional["Stream"] = None) -> None:
        self._expr: Optional[Expression] = None
        if stream is not None:
            self._func = _from_stream(stream)
        elif name:
            self._func = _column_getter(name)
            self._expr = Column(name)
        else:
            raise ValueError('Either "name" or "stream" must be passed')
        self._name = name
        self._sdf_id = sdf_id

    @property
    def name(self) -> Optional[str]:
        """The column name of a series made by ``sdf["name"]`` (None for derived series)."""
        return self._name

    @property
    def sdf_id(self) -> Optional[int]:
        return self._sdf_id

    @classmethod
    def from_apply_callback(cls, func: SeriesFunc, sdf_id: Optional[int]) -> "StreamingSeries":
        """Wrap ``func(value, key, timestamp, headers)`` as a series of the dataframe ``sdf_id``.

        >>> StreamingSeries.from_apply_callback(lambda v, k, t, h: k, sdf_id=None).test({}, b"k", 0)
        (b'k', b'k', 0, None)
        """
        series = cls.__new__(cls)
        series._func = func  # noqa: SLF001
        series._name = None  # noqa: SLF001
        series._sdf_id = sdf_id  # noqa: SLF001
        series._expr = None  # noqa: SLF001
        return series

    def evaluate(self, value: Any, key: Any = None, timestamp: int = 0, headers: Headers = None) -> Any:
        """The result of the series for one record (the result alone)."""
        return self._func(value, key, timestamp, headers)

    def compose_returning(self) -> "ReturningFn":
        """``f(value, key, timestamp, headers) -> (result, key, timestamp, headers)``."""
        f = self._func

        def returning(value: Any, key: Any, timestamp: int, headers: Headers) -> tuple[Any, Any, int, Headers]:
            return f(value, key, timestamp, headers), key, timestamp, headers

        return returning

    def test(
        self,
        value: Any,
        key: Any,
        timestamp: int,
        headers: Optional[Any] = None,
        ctx: Optional[MessageContext] = None,
    ) -> Any:
        """Evaluate the series on one record (no Spark, no broker).

        Returns ``(result, key, timestamp, headers)``. ``ctx`` is the ``MessageContext`` that
        ``message_context()`` returns meanwhile.
        """
        context = contextvars.copy_context()
        context.run(set_message_context, ctx)
        return context.run(self.compose_returning(), value, key, timestamp, headers)

    # --- building ----------------------------------------------------------------------
    def _derive(self, func: SeriesFunc, expression: Optional[Expression] = None) -> "StreamingSeries":
        series = StreamingSeries.from_apply_callback(func, self._sdf_id)
        series._expr = expression  # noqa: SLF001
        return series

    def _validate_other_series(self, other: Any) -> None:
        if isinstance(other, StreamingSeries) and other._sdf_id != self._sdf_id:  # noqa: SLF001
            raise InvalidOperation("All column operations must originate from one `StreamingDataFrame`")

    def apply(self, func: Callable[[Any], Any]) -> "StreamingSeries":
        """Apply ``func`` to the series' result: one value in, one value out."""
        f = self._func

        def applied(v: Any, k: Any, t: int, h: Headers) -> Any:
            return func(f(v, k, t, h))

        return self._derive(applied)

    def _binary(self, other: Any, op: Callable[[Any, Any], Any], reflected: bool = False) -> "StreamingSeries":
        self._validate_other_series(other)
        f = self._func
        if isinstance(other, StreamingSeries):
            g = other._func  # noqa: SLF001

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return op(f(v, k, t, h), g(v, k, t, h))

        elif reflected:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return op(other, f(v, k, t, h))

        else:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return op(f(v, k, t, h), other)

        name, mine, theirs = binary_name(op), self._expr, _operand(other)
        expression: Optional[Expression] = None
        if name is not None and mine is not None and theirs is not None:
            expression = Binary(name, theirs, mine) if reflected else Binary(name, mine, theirs)
        return self._derive(run, expression)

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

    # logic: short-circuit like Python's ``and``/``or``
    def _logic(self, o: Any, conjunction: bool, reflected: bool = False) -> "StreamingSeries":
        self._validate_other_series(o)
        first = self._func
        second = o._func if isinstance(o, StreamingSeries) else _constant(o)  # noqa: SLF001
        left, right = self._expr, _operand(o)
        if reflected:
            first, second = second, first
            left, right = right, left
        if conjunction:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return first(v, k, t, h) and second(v, k, t, h)

        else:

            def run(v: Any, k: Any, t: int, h: Headers) -> Any:
                return first(v, k, t, h) or second(v, k, t, h)

        expression = Logic(conjunction, left, right) if left is not None and right is not None else None
        return self._derive(run, expression)

    def __and__(self, o: Any) -> "StreamingSeries":
        """Logical *and* (not bitwise, even for numbers); the right side runs only when the left is truthy."""
        return self._logic(o, conjunction=True)

    def __rand__(self, o: Any) -> "StreamingSeries":
        return self._logic(o, conjunction=True, reflected=True)

    def __or__(self, o: Any) -> "StreamingSeries":
        """Logical *or* (not bitwise, even for numbers); the right side runs only when the left is falsy."""
        return self._logic(o, conjunction=False)

    def __ror__(self, o: Any) -> "StreamingSeries":
        return self._logic(o, conjunction=False, reflected=True)

    def __invert__(self) -> "StreamingSeries":
        """Logical *not* (not bitwise, even for numbers)."""
        negated = self.apply(operator.not_)
        negated._expr = Not(self._expr) if self._expr is not None else None  # noqa: SLF001
        return negated

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> NoReturn:
        raise InvalidOperation(
            f"Cannot assess truth level of a {type(self).__name__} using 'bool()' or any operations that "
            "rely on it; use '&' or '|' for logical and/or comparisons"
        )

    def __iter__(self) -> Iterator[Any]:
        raise InvalidOperation(f"A {type(self).__name__} cannot be iterated; use .apply() or .contains()")

    # methods
    def isin(self, other: Container[Any]) -> "StreamingSeries":
        """True when the result is ``in other`` (a container or a series)."""
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
        return self._binary(None, operator.is_)

    def notnull(self) -> "StreamingSeries":
        """True when the result is not None."""
        return self._binary(None, operator.is_not)

    def abs(self) -> "StreamingSeries":
        """Absolute value of the result."""
        return self.apply(abs)
