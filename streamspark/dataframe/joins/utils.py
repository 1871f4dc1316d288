"""The built-in ways of merging a left and a right record of a join (``on_merge``).

Each merger takes two dicts (or ``None`` for a side without a match) and returns a new dict;
neither input is changed.

>>> keep_left_merger({"id": 1, "t": 20}, {"t": 5, "model": "m1"})
{'t': 20, 'model': 'm1', 'id': 1}
>>> keep_right_merger({"id": 1, "t": 20}, {"t": 5, "model": "m1"})
{'id': 1, 't': 5, 'model': 'm1'}
>>> raise_merger({"id": 1}, None)
{'id': 1}
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

__all__ = ("keep_left_merger", "keep_right_merger", "raise_merger", "NotADictError")


class NotADictError(TypeError, AttributeError):
    """A built-in merger got a record that is not a dict.

    It is a ``TypeError`` and, as the reference's ``"raise"`` merger fails with one for such
    records, an ``AttributeError`` too.
    """


def _mapping(side: str, record: Optional[Mapping[Any, Any]]) -> Mapping[Any, Any]:
    if record is None:
        return {}
    if not isinstance(record, Mapping):
        raise NotADictError(
            f"The {side} record of the join is a {type(record).__name__}, not a dict: the built-in "
            'on_merge values merge dicts; pass a callable "(left, right) -> merged" for other types'
        )
    return record


def keep_left_merger(left: Optional[Mapping[Any, Any]], right: Optional[Mapping[Any, Any]]) -> dict[Any, Any]:
    """Both records in one new dict; where both have a key, the left record's value wins."""
    if left.__class__ is dict:  # the usual records (plain dicts) skip the type checks
        if right is None:
            return {**left}
        if right.__class__ is dict:
            return {**right, **left}
    return {**_mapping("right", right), **_mapping("left", left)}


def keep_right_merger(left: Optional[Mapping[Any, Any]], right: Optional[Mapping[Any, Any]]) -> dict[Any, Any]:
    """Both records in one new dict; where both have a key, the right record's value wins."""
    if left.__class__ is dict:  # the usual records (plain dicts) skip the type checks
        if right is None:
            return {**left}
        if right.__class__ is dict:
            return {**left, **right}
    return {**_mapping("left", left), **_mapping("right", right)}


def raise_merger(left: Optional[Mapping[Any, Any]], right: Optional[Mapping[Any, Any]]) -> dict[Any, Any]:
    """Both records in one new dict.

    :raises ValueError: both records have some key (the message lists them).
    """
    if left.__class__ is dict and right is None:  # a record without a match: nothing can overlap
        return {**left}
    lhs, rhs = _mapping("left", left), _mapping("right", right)
    overlap = lhs.keys() & rhs.keys()
    if overlap:
        raise ValueError(
            f"Overlapping columns: {', '.join(sorted(map(str, overlap)))}. You need to provide either an "
            "\"on_merge\" value of 'keep-left' or 'keep-right' or a custom merger function."
        )
    return {**lhs, **rhs}
