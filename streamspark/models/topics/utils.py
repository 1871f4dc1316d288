"""Header helpers for producing."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from ..types import HeadersTuples

__all__ = ("merge_headers",)


def merge_headers(original: Optional[Sequence[Any]], other: Mapping[str, Any]) -> HeadersTuples:
    """Merge Kafka headers: the headers of ``original`` whose key ``other`` has are dropped
    (every one of them, so no stale duplicate survives), the others keep their order, and
    ``other``'s headers follow.

    :param original: headers as a list (or tuple) of ``(key, value)`` pairs, or None.
    :param other: headers to merge in, as a mapping.
    :return: ``original`` itself when ``other`` is empty (``[]`` for None), else a new list.
    :raises ValueError: ``original`` is neither a list nor a tuple.

    >>> merge_headers([("a", b"1"), ("b", b"2"), ("a", b"3")], {"a": b"x", "c": b"y"})
    [('b', b'2'), ('a', b'x'), ('c', b'y')]
    >>> merge_headers(None, {})
    []
    """
    if not other:
        return original or []  # type: ignore[return-value]
    if not original:
        return list(other.items())
    if not isinstance(original, (list, tuple)):
        raise ValueError(f"Headers must be either a list or tuple of (key, value) pairs, got {type(original).__name__}")
    merged = [(key, value) for key, value in original if key not in other]
    merged.extend(other.items())
    return merged
