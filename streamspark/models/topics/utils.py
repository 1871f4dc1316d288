"""Header helpers for producing."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ..types import HeadersTuples

__all__ = ("merge_headers",)


def merge_headers(original: Optional[Sequence[Any]], other: Mapping[str, Any]) -> HeadersTuples:
    """Merge Kafka headers: each key of ``other`` replaces the value of the first header with
    that key in ``original`` (in place) or, when there is none, is appended.

    :param original: headers as a list (or tuple) of ``(key, value)`` pairs, or None.
    :param other: headers to merge in, as a mapping.
    :return: ``original`` itself when ``other`` is empty (``[]`` for None), else a new list.
    :raises ValueError: ``original`` is neither a list nor a tuple.

    >>> merge_headers([("a", b"1"), ("b", b"2"), ("a", b"3")], {"a": b"x", "c": b"y"})
    [('a', b'x'), ('b', b'2'), ('a', b'3'), ('c', b'y')]
    >>> merge_headers(None, {})
    []
    """
    if not other:
        return original or []  # type: ignore[return-value]
    if not original:
        return list(other.items())
    if not isinstance(original, (list, tuple)):
        raise ValueError(f"Headers must be a list or a tuple of (key, value) pairs, got {type(original).__name__}")
    pending = dict(other)
    merged = [(key, pending.pop(key) if key in pending else value) for key, value in original]
    merged.extend(pending.items())
    return merged
