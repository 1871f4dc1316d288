"""Errors of the lookups.

>>> import sqlite3
>>> issubclass(SQLiteLookupError, sqlite3.OperationalError)
True
"""

from __future__ import annotations

import sqlite3

from ....exceptions import StreamsparkException

__all__ = ("SQLiteLookupError",)


class SQLiteLookupError(StreamsparkException, sqlite3.OperationalError):
    """A :class:`~.sqlite.SQLiteLookup` could not open or read its database (missing, locked,
    not a database, no such table...). The message names the lookup and the field.

    It is a ``sqlite3.OperationalError``, so code catching SQLite's own error keeps working.
    """
