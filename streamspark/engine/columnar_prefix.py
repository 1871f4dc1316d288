"""A topic's first filters and column assignments, run over a whole decoded chunk at once.

W1's ``sdf = sdf[sdf["temp"] > 25]; sdf["temp_f"] = sdf["temp"] * 9 / 5 + 32`` runs per record
as Python functions. When a chunk of the topic's values is decoded into an Arrow table at once
(the ``avro-chunks`` path), :class:`ColumnarPrefix` evaluates such steps over the table's
columns with numpy instead: the records a filter drops are never built as dicts, and the
others come out with their assigned columns set. The steps after the prefix (``apply``,
outputs, state...) then run per record as always.

The prefix is the topic's chain of steps from its root while each step is a filter on a column
expression (``sdf[series]``) or an assignment of one (``sdf["col"] = series`` or a constant),
with no branch before its end (see :meth:`ColumnarPrefix.of`). Expressions are trees of
``streamspark.core.stream.expressions``.

A chunk is evaluated only where numpy gives exactly what Python gives record by record; the
caller otherwise runs the chunk per record (:meth:`ColumnarPrefix.run` returns None). That is:

- the columns read are ``int``/``long`` (as int64, each within ±2**53, so that converting to a
  float is exact, as Python's is), ``float``/``double`` (float64) or ``boolean``, without nulls,
  and present in the schema;
- constants are ``int`` (within ±2**53), ``float`` or ``bool`` objects;
- ``+ - *`` on two ints give an int within ±2**53 (no overflow), ``/`` has no zero divisor
  (Python raises ZeroDivisionError), booleans take part only in ``==``, ``!=``, ``&``, ``|``
  and ``~``, and ``&``/``|`` combine booleans (Python's ``and``/``or`` of other objects give
  one of the objects, not a boolean).

Float arithmetic is IEEE-754 double in both (overflow gives ``inf`` in both, NaN compares
false in both). Values handed on are Python ``int``, ``float`` and ``bool`` objects.

>>> import pyarrow as pa
>>> from streamspark.core.stream.expressions import Binary, Column, Constant
>>> prefix = ColumnarPrefix((
...     Step(None, Binary("gt", Column("temp"), Constant(25))),
...     Step("temp_f", Binary("add", Binary("mul", Column("temp"), Constant(1.8)), Constant(32))),
... ), last=None)
>>> selection = prefix.run(pa.table({"id": [1, 2, 3], "temp": [20.0, 30.0, 40.0]}))
>>> selection.rows.tolist(), list(selection.records())
([1, 2], [{'id': 2, 'temp': 30.0, 'temp_f': 86.0}, {'id': 3, 'temp': 40.0, 'temp_f': 104.0}])
>>> prefix.run(pa.table({"id": [1], "temp": [None]}, schema=pa.schema([("id", pa.int64()), ("temp", pa.float64())])))
>>> # None: a null where the expression reads (Python would raise): the caller goes per record
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional, Union

import numpy as np
import pyarrow as pa

from ..core.stream.expressions import BINARY_OPERATORS, Binary, Column, Constant, Expression, Logic, Not
from ..core.stream.nodes import FilterNode, StreamNode, UpdateNode

__all__ = ("Step", "ColumnarPrefix", "Selection")

#: integers up to this magnitude convert to float64 exactly
_EXACT = 2**53
#: records turned into dicts at a time (a large chunk does not keep all its dicts alive)
_BLOCK = 2048

_ARITHMETIC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide}
_COMPARISONS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
_KINDS = {pa.int64(): "int", pa.float64(): "float", pa.bool_(): "bool"}


class _Refused(Exception):
    """numpy would not give what Python gives for this chunk: run it per record."""


@dataclass(frozen=True)
class Step:
    """A filter (``column`` None) or the assignment of ``expression`` to ``column``."""

    column: Optional[str]
    expression: Expression


@dataclass
class _Vector:
    """One value per record still selected: ``kind`` ``"int"``, ``"float"`` or ``"bool"``."""

    kind: str
    data: np.ndarray


@dataclass
class _Scalar:
    """The same object for every record (a constant, or what constants computed)."""

    value: Any


_Value = Union[_Vector, _Scalar]


def _scalar_kind(value: Any) -> str:
    """The kind a constant computes as; refused for other objects and for big integers."""
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind is int:
        if abs(value) > _EXACT:
            raise _Refused
        return "int"
    if kind is float:
        return "float"
    raise _Refused


def _kind(value: _Value) -> str:
    return value.kind if isinstance(value, _Vector) else _scalar_kind(value.value)


def _data(value: _Value) -> Any:
    return value.data if isinstance(value, _Vector) else value.value


def _magnitude(data: Any) -> int:
    """The largest absolute value among integers (an array or one int), as a Python int
    (``np.abs`` would wrap -2**63 around to itself)."""
    if isinstance(data, np.ndarray):
        return max(-int(data.min()), int(data.max())) if data.size else 0
    return abs(int(data))


def _exact_ints(data: np.ndarray) -> np.ndarray:
    """``data`` when every integer converts to float64 exactly."""
    if _magnitude(data) > _EXACT:
        raise _Refused
    return data


def _binary(op: str, left: _Value, right: _Value) -> _Value:
    if isinstance(left, _Scalar) and isinstance(right, _Scalar):
        _scalar_kind(left.value), _scalar_kind(right.value)
        try:
            return _Scalar(BINARY_OPERATORS[op](left.value, right.value))
        except Exception as exc:  # e.g. ZeroDivisionError: each record raises it, per record
            raise _Refused from exc
    kinds = (_kind(left), _kind(right))
    a, b = _data(left), _data(right)
    if op in _COMPARISONS:
        if "bool" in kinds and (kinds != ("bool", "bool") or op not in ("eq", "ne")):
            raise _Refused
        return _Vector("bool", _COMPARISONS[op](a, b))
    if "bool" in kinds:
        raise _Refused
    if op == "truediv":
        if np.any(np.asarray(b) == 0):
            raise _Refused
        with np.errstate(all="ignore"):
            return _Vector("float", np.divide(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))
    if kinds == ("int", "int"):
        if op == "mul":
            if _magnitude(a) * _magnitude(b) > _EXACT:
                raise _Refused
        result = _ARITHMETIC[op](a, b)
        return _Vector("int", _exact_ints(np.asarray(result, dtype=np.int64)))
    with np.errstate(all="ignore"):
        result = _ARITHMETIC[op](np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return _Vector("float", result)


def _truth(value: _Value, size: int) -> np.ndarray:
    """Python's truth of each record's value, as a boolean mask."""
    if isinstance(value, _Scalar):
        return np.full(size, bool(value.value))
    if value.kind == "bool":
        return value.data
    return value.data != 0  # NaN is true, as in Python


@dataclass
class Selection:
    """What a chunk's prefix gives: the positions of the records that passed its filters, in
    order, and their values (dicts built on demand by :meth:`records`)."""

    rows: np.ndarray
    table: pa.Table
    assigned: dict[str, _Value]

    def records(self) -> Iterator[dict[str, Any]]:
        """Each selected record's dict: the table's columns in order, then the assigned columns
        not among them in the order they were first assigned (as Python's dicts keep keys)."""
        names = list(self.table.column_names)
        names += [name for name in self.assigned if name not in names]
        positions = {name: i for i, name in enumerate(names)}
        whole = len(self.rows) == self.table.num_rows
        for start in range(0, len(self.rows), _BLOCK):
            rows = self.rows[start : start + _BLOCK]
            part = self.table.slice(start, _BLOCK) if whole else self.table.take(rows)
            columns: list[Any] = [column.to_pylist() for column in part.columns]
            columns += [None] * (len(names) - len(columns))
            for name, value in self.assigned.items():
                if isinstance(value, _Vector):
                    columns[positions[name]] = value.data[start : start + _BLOCK].tolist()
                else:
                    columns[positions[name]] = [value.value] * len(rows)
            for row in zip(*columns):
                yield dict(zip(names, row))


@dataclass(frozen=True)
class ColumnarPrefix:
    """The steps of a topic's prefix, and its last node (the records that pass go on to what
    follows it)."""

    steps: tuple[Step, ...]
    last: Optional[StreamNode]

    @classmethod
    def of(cls, root: StreamNode) -> Optional["ColumnarPrefix"]:
        """The prefix of the tree under ``root`` (None when its first step is not one).

        It goes down the chain of single children while each step is a stateless filter or
        assignment with an expression and has at most one step after it; it stops at the
        first other step or branch.
        """
        steps: list[Step] = []
        node, last = root, None
        while len(node.children) == 1:
            child = node.children[0]
            if child.stream_id is not None or getattr(child, "returning", None) is not None or len(child.children) > 1:
                break
            if isinstance(child, FilterNode) and child.expression is not None:
                steps.append(Step(None, child.expression))
            elif isinstance(child, UpdateNode) and child.assigns is not None:
                steps.append(Step(*child.assigns))
            else:
                break
            node = last = child
        return cls(tuple(steps), last) if steps else None

    def run(self, table: pa.Table) -> Optional[Selection]:
        """The records of ``table`` that pass the prefix, with its assignments; None when the
        chunk must run per record (see the module's notes)."""
        rows = np.arange(table.num_rows)
        state = _Evaluation(table)
        try:
            for step in self.steps:
                value = state.evaluate(step.expression)
                if step.column is None:
                    keep = _truth(value, len(rows))
                    if not keep.all():
                        rows = rows[keep]
                        state.select(keep)
                else:
                    state.assign(step.column, value)
        except _Refused:
            return None
        return Selection(rows, table, state.assigned)


class _Evaluation:
    """The columns of one chunk as a prefix's steps see them: read from the table, or assigned
    by an earlier step, over the records still selected."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.columns: dict[str, _Value] = {}
        self.assigned: dict[str, _Value] = {}
        self.keep: Optional[np.ndarray] = None  # the positions still selected (None: all)

    def column(self, name: str) -> _Value:
        found = self.columns.get(name)
        if found is not None:
            return found
        if name not in self.table.column_names:
            raise _Refused  # Python raises ColumnDoesNotExist for each record
        column = self.table.column(name)
        kind = _KINDS.get(column.type)
        if kind is None or column.null_count:
            raise _Refused
        data = column.to_numpy()
        if self.keep is not None:
            data = data[self.keep]
        if kind == "int":
            _exact_ints(data)
        value = self.columns[name] = _Vector(kind, data)
        return value

    def evaluate(self, expression: Expression) -> _Value:
        if isinstance(expression, Column):
            return self.column(expression.name)
        if isinstance(expression, Constant):
            return _Scalar(expression.value)
        if isinstance(expression, Binary):
            return _binary(expression.op, self.evaluate(expression.left), self.evaluate(expression.right))
        if isinstance(expression, Logic):
            left, right = self.evaluate(expression.left), self.evaluate(expression.right)
            if (_kind(left), _kind(right)) != ("bool", "bool"):
                raise _Refused
            combine = np.logical_and if expression.conjunction else np.logical_or
            result = combine(_data(left), _data(right))
            return _Vector("bool", result) if isinstance(result, np.ndarray) else _Scalar(bool(result))
        if isinstance(expression, Not):
            operand = self.evaluate(expression.operand)
            if isinstance(operand, _Scalar):
                return _Scalar(not operand.value)
            return _Vector("bool", ~_truth(operand, len(operand.data)))
        raise _Refused

    def assign(self, name: str, value: _Value) -> None:
        self.columns[name] = value
        self.assigned[name] = value

    def select(self, keep: np.ndarray) -> None:
        """Keep only the records where ``keep`` is true, in every column computed so far."""
        selected = {
            id(value): _Vector(value.kind, value.data[keep]) for value in self.columns.values() if isinstance(value, _Vector)
        }
        self.columns = {name: selected.get(id(value), value) for name, value in self.columns.items()}
        self.assigned = {name: selected.get(id(value), value) for name, value in self.assigned.items()}
        positions = np.flatnonzero(keep)
        self.keep = positions if self.keep is None else self.keep[positions]
