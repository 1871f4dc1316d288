"""Errors raised while building or compiling a plan.

``InvalidOperation`` is also importable from ``streamspark.dataframe.exceptions`` (the same
class), and ``InvalidTopology`` from ``streamspark.exceptions``.

>>> from streamspark.core.stream import Stream
>>> root = Stream()
>>> try:
...     root.diff(root)
... except InvalidOperation as exc:
...     print(exc)
Cannot assign or filter using the same SDF
"""

from __future__ import annotations

from ...exceptions import InvalidTopology, StreamsparkException

__all__ = ("InvalidTopology", "InvalidOperation")


class InvalidOperation(StreamsparkException, ValueError):
    """The operation cannot be applied to these dataframes or series.

    Raised for ``bool()``/``and``/``or``/``not`` on a dataframe or a series, for series of
    different dataframes combined, for a column set from another dataframe's series, and when
    a dataframe used as a filter or a column source does not branch off the target dataframe
    (see :meth:`~streamspark.core.stream.Stream.diff`). It is a ``ValueError`` too.
    """
