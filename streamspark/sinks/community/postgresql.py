"""``PostgreSQLSink``: rows into PostgreSQL tables, created and widened as records need.

Guarantee: **exactly-once**. Each flush (one Spark task's share of a micro-batch) is one
transaction that also records the flush's delivery token in ``<schema>.streamspark_sink_commits``;
a replayed micro-batch finds its token and writes nothing again.

>>> sink = PostgreSQLSink(host="localhost", port=5432, dbname="app", user="app", password="secret",
...                       table_name="events")
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Union

from ..base._delivery import import_optional
from ..base.batch import SinkBatch
from ..base.item import SinkItem
from ..base.sink import BatchingSink, ClientConnectFailureCallback, ClientConnectSuccessCallback
from ._values import DictValuesOnly, key_text, require_dict

__all__ = ("PostgreSQLSink", "PostgreSQLSinkError")

logger = logging.getLogger(__name__)

TOKENS_TABLE = "streamspark_sink_commits"


class PostgreSQLSinkError(Exception):
    """A write to PostgreSQL failed (the micro-batch fails and is replayed)."""


def _sql_type(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE PRECISION"
    if isinstance(value, str):
        return "TEXT"
    if isinstance(value, datetime):
        return "TIMESTAMPTZ" if value.tzinfo else "TIMESTAMP"
    if isinstance(value, (bytes, bytearray)):
        return "BYTEA"
    if isinstance(value, (dict, list)):
        return "JSONB"
    return None


class PostgreSQLSink(DictValuesOnly, BatchingSink):
    """Write dict records as rows: ``timestamp`` (the Kafka timestamp), ``__key`` and one column
    per value key.

    :param table_name: a table name, or ``callable(SinkItem) -> str`` to route each record.
    :param schema_name: the schema holding the tables (default ``public``).
    :param schema_auto_update: create missing tables and add missing columns, typed from the
        values (bool → BOOLEAN, int → BIGINT, float → DOUBLE PRECISION, str → TEXT,
        dict/list → JSONB, datetime → TIMESTAMP[TZ], bytes → BYTEA). Existing columns are
        never changed. With False the tables must exist.
    :param connection_timeout_seconds: connect timeout.
    :param statement_timeout_seconds: timeout of each statement (DDL included).
    :param kwargs: passed to ``psycopg2.connect``.

    Needs ``pip install "streamspark[postgres]"``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        dbname: str,
        user: str,
        password: str,
        table_name: Union[str, Callable[[SinkItem], str]],
        schema_name: str = "public",
        schema_auto_update: bool = True,
        connection_timeout_seconds: int = 30,
        statement_timeout_seconds: int = 30,
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(on_client_connect_success, on_client_connect_failure)
        # what ``kwargs`` name wins over the parameters above (as ``psycopg2.connect`` would see it)
        self._params = {
            "host": host,
            "port": port,
            "dbname": dbname,
            "user": user,
            "password": password,
            "connect_timeout": connection_timeout_seconds,
            **kwargs,
        }
        self._table_name = table_name
        self._schema = schema_name
        self._auto = schema_auto_update
        self._statement_timeout_ms = int(statement_timeout_seconds * 1000)
        self._client: Any = None
        self._columns: dict[str, set[str]] = {}  # known columns per table (this connection)
        self._ddl_locked = False

    # -- connection -------------------------------------------------------------------------
    def setup(self) -> None:
        psycopg2 = import_optional("psycopg2", "PostgreSQLSink", "postgres")
        try:
            self._client = psycopg2.connect(**self._params)
        except psycopg2.OperationalError as exc:
            raise ConnectionError(
                f"PostgreSQL at {self._params['host']}:{self._params['port']} refused the connection: {str(exc).strip()}"
            ) from None
        with self._client.cursor() as cur:
            cur.execute("SELECT 1")
        self._client.rollback()

    def _connection(self) -> Any:
        if self._client is None or self._client.closed:
            self.setup()
        return self._client

    # -- writing ------------------------------------------------------------------------------
    def write(self, batch: SinkBatch) -> None:
        self._write_batches([batch])

    def flush(self) -> None:
        """Write every pending batch in ONE transaction (with the delivery token)."""
        self._flush_together(self._write_batches)

    def _table_of(self, item: SinkItem) -> str:
        name = self._table_name(item) if callable(self._table_name) else self._table_name
        if not isinstance(name, str) or not name:
            raise ValueError(f"table_name must give a non-empty str, got {name!r}")
        return name

    def _write_batches(self, batches: list[SinkBatch]) -> None:
        psycopg2 = import_optional("psycopg2", "PostgreSQLSink", "postgres")
        from psycopg2 import sql
        from psycopg2.extras import Json, execute_values

        rows: dict[str, list[dict[str, Any]]] = {}
        for batch in batches:
            for item in batch:
                value = require_dict("PostgreSQLSink", item, batch)
                row = {
                    "timestamp": datetime.fromtimestamp(item.timestamp / 1000, tz=timezone.utc).replace(tzinfo=None),
                    "__key": key_text(item.key),
                }
                row.update(value)
                rows.setdefault(self._table_of(item), []).append(row)
        token = self.delivery_token()
        conn = self._connection()
        self._ddl_locked = False  # a new transaction starts
        try:
            with conn.cursor() as cur:
                cur.execute("SET LOCAL statement_timeout = %s", (self._statement_timeout_ms,))
                if token is not None:
                    self._ensure_tokens(cur, sql)
                    cur.execute(
                        sql.SQL("SELECT 1 FROM {} WHERE token = %s").format(sql.Identifier(self._schema, TOKENS_TABLE)), (token,)
                    )
                    if cur.fetchone() is not None:
                        conn.rollback()
                        logger.info("PostgreSQLSink: %s already written (replayed micro-batch); skipping", token)
                        return
                for table, table_rows in rows.items():
                    columns = self._prepare_table(cur, sql, table, table_rows)
                    values = [
                        tuple(Json(r.get(c)) if isinstance(r.get(c), (dict, list)) else r.get(c) for c in columns)
                        for r in table_rows
                    ]
                    execute_values(
                        cur,
                        sql.SQL("INSERT INTO {} ({}) VALUES %s")
                        .format(sql.Identifier(self._schema, table), sql.SQL(", ").join(sql.Identifier(c) for c in columns))
                        .as_string(cur),
                        values,
                        page_size=1000,
                    )
                if token is not None:
                    cur.execute(
                        sql.SQL("INSERT INTO {} (token) VALUES (%s)").format(sql.Identifier(self._schema, TOKENS_TABLE)), (token,)
                    )
            conn.commit()
        except psycopg2.Error as exc:
            self._columns.clear()  # DDL of the failed transaction is gone too
            try:
                conn.rollback()
            except psycopg2.Error:
                pass
            if isinstance(exc, psycopg2.OperationalError):
                raise ConnectionError(f"PostgreSQL write failed: {str(exc).strip()}") from None
            raise PostgreSQLSinkError(f"PostgreSQL write failed: {str(exc).strip()}") from None

    def _ddl_lock(self, cur: Any) -> None:
        """Serialise DDL of concurrent writers (Spark tasks): ``CREATE TABLE IF NOT EXISTS`` and
        ``ADD COLUMN IF NOT EXISTS`` race each other in PostgreSQL. Held until the transaction ends."""
        if not self._ddl_locked:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"streamspark-ddl:{self._schema}",))
            self._ddl_locked = True

    def _ensure_tokens(self, cur: Any, sql: Any) -> None:
        if TOKENS_TABLE in self._columns:
            return
        self._ddl_lock(cur)
        cur.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (token TEXT PRIMARY KEY, written_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            ).format(sql.Identifier(self._schema, TOKENS_TABLE))
        )
        self._columns[TOKENS_TABLE] = {"token"}

    def _prepare_table(self, cur: Any, sql: Any, table: str, rows: list[dict[str, Any]]) -> list[str]:
        """Create the table / add columns when allowed; return the columns to insert."""
        wanted: dict[str, Optional[str]] = {}
        for r in rows:
            for c, v in r.items():
                if wanted.get(c) is None:
                    wanted[c] = _sql_type(v)
        if not self._auto:
            return list(wanted)
        known = self._columns.get(table)
        if known is None:
            self._ddl_lock(cur)
            cur.execute(
                sql.SQL('CREATE TABLE IF NOT EXISTS {} ("timestamp" TIMESTAMP NOT NULL, "__key" TEXT)').format(
                    sql.Identifier(self._schema, table)
                )
            )
            cur.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
                (self._schema, table),
            )
            known = self._columns[table] = {r[0] for r in cur.fetchall()}
        for c, t in wanted.items():
            if c not in known:
                self._ddl_lock(cur)
                cur.execute(
                    sql.SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {}").format(
                        sql.Identifier(self._schema, table), sql.Identifier(c), sql.SQL(t or "TEXT")
                    )
                )
                known.add(c)
        return list(wanted)
