"""What a column expression computes, kept beside its compiled function.

``sdf["temp"] * 9 / 5 + 32`` compiles into a per-record function (see
:class:`~streamspark.dataframe.series.StreamingSeries`); it also records here *what* it
computes, as a small tree of :class:`Column`, :class:`Constant`, :class:`Binary`,
:class:`Logic` and :class:`Not`. A filter or a column assignment made from such a series
carries the tree on its node (``FilterNode.expression``, ``UpdateNode.assigns``), so that the
engine can run it over a whole chunk of records at once where it gives the same results (see
``streamspark.engine.columnar_prefix``). Series built from functions (``.apply``, ``.isin``...)
have no tree; the per-record function is then the only form.

>>> Binary("gt", Column("temp"), Constant(25))
Binary(op='gt', left=Column(name='temp'), right=Constant(value=25))
>>> sorted(columns_of(Logic(True, Binary("gt", Column("a"), Constant(1)), Not(Column("b")))))
['a', 'b']
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

__all__ = (
    "Column",
    "Constant",
    "Binary",
    "Logic",
    "Not",
    "Expression",
    "BINARY_OPERATORS",
    "binary_name",
    "columns_of",
)


@dataclass(frozen=True)
class Column:
    """The value's item ``name`` (``value[name]``)."""

    name: str


@dataclass(frozen=True)
class Constant:
    """The same object for every record."""

    value: Any


@dataclass(frozen=True)
class Binary:
    """``operator.<op>(left, right)``: an arithmetic operator or a comparison (see
    :data:`BINARY_OPERATORS`)."""

    op: str
    left: "Expression"
    right: "Expression"


@dataclass(frozen=True)
class Logic:
    """Python's ``left and right`` (``conjunction``) or ``left or right``: the right side is
    evaluated only when the left one does not decide."""

    conjunction: bool
    left: "Expression"
    right: "Expression"


@dataclass(frozen=True)
class Not:
    """Python's ``not operand``."""

    operand: "Expression"


Expression = Union[Column, Constant, Binary, Logic, Not]

#: the operators a :class:`Binary` names, by name
BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}

_NAMES = {function: name for name, function in BINARY_OPERATORS.items()}


def binary_name(function: Callable[[Any, Any], Any]) -> Optional[str]:
    """The name of ``function`` in :data:`BINARY_OPERATORS`, or None."""
    return _NAMES.get(function)


def columns_of(expression: Expression) -> set[str]:
    """The columns ``expression`` reads."""
    if isinstance(expression, Column):
        return {expression.name}
    if isinstance(expression, (Binary, Logic)):
        return columns_of(expression.left) | columns_of(expression.right)
    if isinstance(expression, Not):
        return columns_of(expression.operand)
    return set()
