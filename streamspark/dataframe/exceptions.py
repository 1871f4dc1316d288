"""Errors raised while building a dataframe or evaluating its column expressions.

>>> from streamspark.dataframe import StreamingDataFrame
>>> from streamspark.models import Topic
>>> sdf = StreamingDataFrame(Topic("t"))
>>> try:
...     sdf["x"].test({"y": 1}, b"key", 0)
... except ColumnDoesNotExist as exc:
...     print(exc)
Column 'x' does not exist in the message value
"""

from __future__ import annotations

from ..core.stream.exceptions import InvalidOperation
from ..exceptions import StreamsparkException

__all__ = (
    "InvalidOperation",
    "ColumnDoesNotExist",
    "InvalidColumnReference",
    "GroupByNestingLimit",
    "GroupByDuplicate",
    "GroupByLimitExceeded",
    "StreamingDataFrameDuplicate",
    "DataFrameLocked",
)


class ColumnDoesNotExist(StreamsparkException):
    """A column referenced with ``sdf["name"]`` is missing from the message value."""


class InvalidColumnReference(StreamsparkException):
    """A column was referenced with ``sdf["name"]`` on a value that is not a dict."""


class GroupByLimitExceeded(StreamsparkException):
    """A ``group_by`` was refused: the base of :class:`GroupByNestingLimit` and :class:`GroupByDuplicate`."""


class GroupByNestingLimit(GroupByLimitExceeded):
    """``group_by`` on a dataframe that a ``group_by`` produced (nested re-keying is not allowed)."""


class GroupByDuplicate(GroupByLimitExceeded):
    """A second ``group_by`` with the same name (or column) from the same stream."""


class StreamingDataFrameDuplicate(StreamsparkException):
    """A second root dataframe for a topic that already has one."""


#: The older name of :class:`StreamingDataFrameDuplicate`.
DataFrameLocked = StreamingDataFrameDuplicate
