"""Errors raised while building a dataframe."""

from __future__ import annotations

from ..exceptions import StreamsparkException

__all__ = ("InvalidOperation", "GroupByLimitExceeded", "DataFrameLocked")


class InvalidOperation(StreamsparkException):
    """The operation cannot be applied (e.g. after ``sink()``)."""


class GroupByLimitExceeded(StreamsparkException):
    """``group_by`` was used more than once on one dataframe."""


class DataFrameLocked(StreamsparkException):
    """The dataframe's root is already registered for its topic."""
