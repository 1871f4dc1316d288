"""The dataframe API."""

from .dataframe import StreamingDataFrame
from .exceptions import GroupByLimitExceeded, InvalidOperation
from .series import StreamingSeries

__all__ = ("StreamingDataFrame", "StreamingSeries", "InvalidOperation", "GroupByLimitExceeded")
