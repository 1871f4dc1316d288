"""The dataframe API."""

from .dataframe import StreamingDataFrame
from .exceptions import (
    ColumnDoesNotExist,
    GroupByDuplicate,
    GroupByLimitExceeded,
    GroupByNestingLimit,
    InvalidColumnReference,
    InvalidOperation,
    StreamingDataFrameDuplicate,
)
from .series import StreamingSeries

__all__ = (
    "StreamingDataFrame",
    "StreamingSeries",
    "InvalidOperation",
    "ColumnDoesNotExist",
    "InvalidColumnReference",
    "GroupByNestingLimit",
    "GroupByDuplicate",
    "GroupByLimitExceeded",
    "StreamingDataFrameDuplicate",
)
