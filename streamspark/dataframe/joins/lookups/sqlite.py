"""Lookups in a SQLite database: enrich records with rows selected by a key.

Example (the database file must exist where the pipeline runs: on every Spark worker)::

    lookup = SQLiteLookup(path="devices.db")
    fields = {"device": SQLiteLookupField(table="devices", columns=["model", "site"], on="id")}
    sdf = sdf.join_lookup(lookup, fields, on="device_id")
    # {"device_id": "d1"} -> {"device_id": "d1", "device": {"model": "m1", "site": "s1"}}
"""

from __future__ import annotations

import abc
import dataclasses
import logging
import os
import re
import sqlite3
import threading
import time
import urllib.parse
import uuid
from typing import Any, Literal, Mapping, Optional, Tuple, Union

from .base import BaseField, BaseLookup
from .cache import MISSING, TTLCache
from .exceptions import SQLiteLookupError
from .utils import CacheInfo

__all__ = ("BaseSQLiteLookupField", "SQLiteLookupField", "SQLiteLookupQueryField", "SQLiteLookup")

logger = logging.getLogger(__name__)

_IDENTIFIER = re.compile(r"^\w+$")


def _check_identifier(identifier: Any, what: str) -> None:
    """Table and column names go into the SQL text: only letters, digits and underscores."""
    if not isinstance(identifier, str) or not _IDENTIFIER.match(identifier):
        raise ValueError(f"Invalid SQL identifier for {what}: {identifier!r} (letters, digits and _ only)")


@dataclasses.dataclass(frozen=True)
class BaseSQLiteLookupField(BaseField, abc.ABC):
    """A field of :class:`SQLiteLookup`: the query to run and how to read its rows.

    Subclasses also have ``ttl`` (seconds a result stays cached; ``<= 0``: no cache),
    ``default`` and ``first_match_only``.
    """

    @abc.abstractmethod
    def build_query(self, on: str, value: dict[str, Any]) -> Tuple[str, Union[dict[str, Any], Tuple[str, ...]]]:
        """The SQL text and its parameters.

        :param on: the target key of the record.
        :param value: the message value (for named parameters).
        """

    @abc.abstractmethod
    def result(self, cursor: sqlite3.Cursor) -> Union[dict[str, Any], list[Any]]:
        """What the field's value becomes, read from the executed query's ``cursor``."""


@dataclasses.dataclass(frozen=True)
class SQLiteLookupField(BaseSQLiteLookupField):
    """Select ``columns`` of ``table`` from the rows whose column ``on`` equals the target key.

    A row becomes a dict of the columns; with ``first_match_only`` (the default) the field is
    the first row (``default`` when none matches), otherwise the list of all rows. Table and
    column names are checked to be plain identifiers (no SQL injection through them).

    >>> field = SQLiteLookupField(table="devices", columns=["model", "site"], on="id", order_by="since")
    >>> field.build_query("d1", {})
    ('SELECT model, site FROM devices WHERE id = ? ORDER BY since ASC LIMIT 1', ('d1',))

    :param table: the table to select from.
    :param columns: the columns to select (not ``*``).
    :param on: the column compared with the target key.
    :param order_by: a column to sort the matching rows by (none by default).
    :param order_by_direction: ``"ASC"`` (default) or ``"DESC"``.
    :param ttl: seconds a result stays cached per target key (default 60; ``<= 0``: no cache).
    :param default: the value when no row matches (with ``first_match_only``). Default None.
    :param first_match_only: True: the first row only; False: the list of all rows.
    """

    table: str
    columns: list[str]
    on: str
    order_by: Optional[str] = ""
    order_by_direction: Literal["ASC", "DESC"] = "ASC"
    ttl: float = 60.0
    default: Any = None
    first_match_only: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.columns, str) or not isinstance(self.columns, (list, tuple)):
            raise TypeError(f"columns must be a list of column names, not {type(self.columns).__name__}")
        if not self.columns:
            raise ValueError("columns must name at least one column")
        if "*" in self.columns:
            raise ValueError("Using '*' in columns is not allowed for SQLiteLookupField.")
        _check_identifier(self.table, "table")
        _check_identifier(self.on, "on")
        for column in self.columns:
            _check_identifier(column, "a column")
        if self.order_by:
            _check_identifier(self.order_by, "order_by")
        if str(self.order_by_direction).upper() not in ("ASC", "DESC"):
            raise ValueError(f'order_by_direction must be "ASC" or "DESC", not {self.order_by_direction!r}')

    def build_query(self, on: str, value: dict[str, Any]) -> Tuple[str, Tuple[str, ...]]:
        # the identifiers were checked in __post_init__; the target key is a parameter
        query = f"SELECT {', '.join(self.columns)} FROM {self.table} WHERE {self.on} = ?"
        if self.order_by:
            query += f" ORDER BY {self.order_by} {str(self.order_by_direction).upper()}"
        if self.first_match_only:
            query += " LIMIT 1"
        return query, (on,)

    def result(self, cursor: sqlite3.Cursor) -> Union[dict[str, Any], list[dict[str, Any]]]:
        if self.first_match_only:
            row = cursor.fetchone()
            return dict(zip(self.columns, row)) if row else self.default  # type: ignore[no-any-return]
        return [dict(zip(self.columns, row)) for row in cursor]


@dataclasses.dataclass(frozen=True)
class SQLiteLookupQueryField(BaseSQLiteLookupField):
    """Run ``query`` with named parameters taken from the message value (``:column``).

    The field is the first row as a tuple (``default`` when there is none) with
    ``first_match_only``, otherwise the list of all rows. The target key of ``join_lookup``
    is not part of the query: it only keys the cache, so with caching the query runs once per
    ``ttl`` for each target key, whatever else the value holds.

    >>> SQLiteLookupQueryField("SELECT model FROM devices WHERE id = :device_id").build_query("d1", {"device_id": "d1"})
    ('SELECT model FROM devices WHERE id = :device_id', {'device_id': 'd1'})

    :param query: the SQL query.
    :param ttl: seconds a result stays cached per target key (default 60; ``<= 0``: no cache).
    :param default: the value when no row matches (with ``first_match_only``). Default None.
    :param first_match_only: True: the first row only; False: the list of all rows.
    """

    query: str = dataclasses.field()
    ttl: float = 60.0
    default: Any = None
    first_match_only: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise ValueError("query must be a non-empty SQL string")

    def build_query(self, on: str, value: dict[str, Any]) -> Tuple[str, dict[str, Any]]:
        return self.query, value

    def result(self, cursor: sqlite3.Cursor) -> Union[dict[str, Any], list[Any]]:
        if self.first_match_only:
            return cursor.fetchone() or self.default  # type: ignore[no-any-return]
        return cursor.fetchall()


class _Connection:
    """One process's connection to a lookup's database and its cache."""

    def __init__(self, cache_size: int) -> None:
        self.pid = os.getpid()
        self.conn: Optional[sqlite3.Connection] = None
        self.cache = TTLCache(cache_size)
        self.lock = threading.Lock()


#: connections of the lookups unpickled in this process (Spark workers), by lookup: a worker
#: unpickles the pipeline for each task, and its lookups keep one connection and one cache
_connections: dict[str, _Connection] = {}
_connections_lock = threading.Lock()


class SQLiteLookup(BaseLookup[Union[SQLiteLookupField, SQLiteLookupQueryField]]):
    """Enrich records with data of a SQLite database, read-only, with a per-field LRU cache.

    The database is opened read-only here (a file that cannot be opened raises
    :class:`~.exceptions.SQLiteLookupError`, a ``sqlite3.OperationalError``, as in Quix Streams),
    then on the first record a process handles (one connection per Spark worker process, kept
    across micro-batches), so the file must exist at ``path`` where the application is built
    and on every worker; a relative path is taken from the directory the application runs in. Results are
    cached per field name and target key for the field's ``ttl``, up to ``cache_size`` entries
    per process.

    A database that is missing, locked (for longer than ``timeout``), not a database or
    without the table raises :class:`~.exceptions.SQLiteLookupError` naming the lookup and
    the field, through the pipeline's processing-error path (``on_processing_error`` may
    skip the record).

    Example::

        lookup = SQLiteLookup(path="/path/to/db.sqlite")
        fields = {"my_field": SQLiteLookupField(table="my_table", columns=["col2"], on="primary_key_col")}
        sdf = sdf.join_lookup(lookup, fields)

    :param path: the SQLite database file.
    :param cache_size: most cached results (all fields together). Default 1000.
    :param timeout: seconds a query waits for a locked database before failing. Default 5.
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"], cache_size: int = 1000, *, timeout: float = 5.0) -> None:
        if not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be an int >= 0, not {cache_size!r}")
        self.db_path = os.fspath(path)
        self._uri = "file:" + urllib.parse.quote(os.path.abspath(self.db_path)) + "?mode=ro"
        self._cache_size = cache_size
        self._timeout = timeout
        self._token = uuid.uuid4().hex
        self._local = _Connection(cache_size)
        self._open().close()  # as in Quix Streams, a database that cannot be opened fails here

    def __repr__(self) -> str:
        return f"SQLiteLookup(path={self.db_path!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_local"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        with _connections_lock:
            local = _connections.get(self._token)
            if local is None:
                local = _connections[self._token] = _Connection(self._cache_size)
        self._local = local

    def _open(self) -> sqlite3.Connection:
        """A read-only connection to the database, or :class:`SQLiteLookupError`."""
        try:
            return sqlite3.connect(self._uri, uri=True, timeout=self._timeout, check_same_thread=False)
        except sqlite3.Error as exc:
            raise SQLiteLookupError(f"{self!r} cannot open its database {os.path.abspath(self.db_path)!r}: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        local = self._local
        if local.pid != os.getpid():  # forked: a connection must not cross a fork
            local.pid, local.conn = os.getpid(), None
        if local.conn is None:
            local.conn = self._open()
            logger.debug("%r opened its database (cache size %d)", self, self._cache_size)
        return local.conn

    def _query(self, name: str, field: BaseSQLiteLookupField, on: str, value: dict[str, Any]) -> Any:
        query, parameters = field.build_query(on, value)
        try:
            return field.result(self._connection().execute(query, parameters))
        except sqlite3.Error as exc:
            if isinstance(exc, SQLiteLookupError):
                raise
            if isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError:
                locked = f" (waited {self._timeout:g}s)" if "locked" in str(exc) else ""
                raise SQLiteLookupError(f"{self!r}, field {name!r}: {exc}{locked}") from exc
            exc.add_note(f"raised by {self!r}, field {name!r}")
            raise

    def join(
        self,
        fields: Mapping[str, Union[SQLiteLookupField, SQLiteLookupQueryField]],
        on: str,
        value: dict[str, Any],
        key: Any,
        timestamp: int,
        headers: Any,
    ) -> None:
        """Set each field of ``fields`` in ``value``: from the cache when its result for ``on``
        is younger than the field's ``ttl``, else from the database.

        :param fields: field names and their :class:`BaseSQLiteLookupField`.
        :param on: the target key (the ``WHERE`` value of :class:`SQLiteLookupField`; the cache key).
        :param value: the message value, updated in place.
        :param key: the message key.
        :param timestamp: the message timestamp.
        :param headers: the message headers.
        """
        local = self._local
        now = time.monotonic()
        with local.lock:
            for name, field in fields.items():
                if not isinstance(field, BaseSQLiteLookupField):
                    raise TypeError(f"{self!r} takes SQLite lookup fields; field {name!r} is a {type(field).__name__}")
                ttl = getattr(field, "ttl", 0.0)
                if ttl <= 0:
                    value[name] = self._query(name, field, on, value)
                    continue
                cache_key = (name, on)
                result = local.cache.get(cache_key, ttl, now)
                if result is MISSING:
                    result = self._query(name, field, on, value)
                    local.cache.set(cache_key, result, now)
                value[name] = result

    def cache_info(self) -> CacheInfo:
        """Statistics of this process's cache: ``hits``, ``misses``, ``size``, ``maxsize``."""
        return self._local.cache.info()
