"""Rows → Arrow tables → Hive-partitioned file plans (pure functions, no I/O).

>>> rows = [({"ts_ms": 1704067200000, "temp": 21.5}, b"sensor-a", 0)]
>>> [(p.path_parts, p.table.num_rows) for p in plan_files(rows, "ts_ms", ["year", "month"])]
[(('year=2024', 'month=01'), 1)]
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence
from urllib.parse import quote

import pyarrow as pa

__all__ = ("HIVE_NULL", "TIME_COLUMNS", "KEY_COLUMN", "detect_unit", "plan_files", "PlannedFile", "conform_table", "plain_schema")

#: the path segment written for a missing partition value (readers map it back to NULL)
HIVE_NULL = "__None__"
#: hive columns derived from the timestamp column
TIME_COLUMNS = ("year", "month", "day", "hour")
#: the column that carries the message key
KEY_COLUMN = "__key"

_UNIT_DIVISOR = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def detect_unit(sample: float) -> str:
    """The unit of an epoch number, by magnitude (as the reference sink does).

    >>> detect_unit(1.7e9), detect_unit(1.7e12), detect_unit(1.7e15), detect_unit(1.7e18)
    ('s', 'ms', 'us', 'ns')
    """
    if sample > 1e17:
        return "ns"
    if sample > 1e14:
        return "us"
    if sample > 1e11:
        return "ms"
    return "s"


def _to_datetime(value: Any, unit: Optional[str], column: str) -> Optional[dt.datetime]:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        divisor = _UNIT_DIVISOR[unit or detect_unit(float(value))]
        if isinstance(value, int):
            seconds, rest = divmod(value, divisor)
            return _EPOCH + dt.timedelta(seconds=seconds, microseconds=rest * 1_000_000 // divisor)
        return _EPOCH + dt.timedelta(seconds=value / divisor)
    if isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            try:
                return _to_datetime(float(value), unit, column)
            except ValueError:
                pass
        else:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
    raise ValueError(
        f"Cannot read timestamp column {column!r}: {value!r} is neither an epoch number "
        "(s/ms/us/ns), an ISO-8601 string nor a datetime"
    )


def _time_parts(when: Optional[dt.datetime]) -> dict[str, Optional[str]]:
    if when is None:
        return dict.fromkeys(TIME_COLUMNS)
    when = when.astimezone(dt.timezone.utc)
    return {"year": str(when.year), "month": f"{when.month:02d}", "day": f"{when.day:02d}", "hour": f"{when.hour:02d}"}


def _segment(column: str, value: Any) -> str:
    if value is None:
        text = HIVE_NULL
    elif isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
    else:
        text = str(value)
    return f"{column}={quote(text, safe=' -_.,+@~!$&()*;')}"


def _empty_dicts_to_none(value: Any) -> Any:
    # Parquet cannot store an empty struct
    if isinstance(value, dict):
        return {k: _empty_dicts_to_none(v) for k, v in value.items()} or None
    return value


@dataclass
class PlannedFile:
    """One file to write: its Hive path segments and its rows."""

    path_parts: tuple[str, ...]
    partition: dict[str, Any]
    table: pa.Table


def _plain_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(_plain_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _plain_type(f.type)) for f in t])
    return t


def plain_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with large string/binary/list types as their plain forms and no field metadata
    (how a catalog's schema compares with the files' schemas)."""
    return pa.schema([pa.field(f.name, _plain_type(f.type)) for f in schema])


def conform_table(table: pa.Table, schema: Optional[pa.Schema]) -> pa.Table:
    """Cast columns to the types of ``schema`` where both have them; all-null new columns become strings.

    Raises ``TypeError`` naming the column when a value cannot take the table's type.
    """
    columns = []
    fields = []
    for field, column in zip(table.schema, table.columns):
        target: Optional[pa.DataType] = None
        if schema is not None and schema.get_field_index(field.name) >= 0:
            target = schema.field(field.name).type
        elif pa.types.is_null(field.type):
            target = pa.string()
        if target is not None and target != field.type:
            try:
                column = column.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise TypeError(
                    f"Column {field.name!r} has type {field.type} in this batch but {target} in the table: {exc}"
                ) from exc
            field = pa.field(field.name, target)
        columns.append(column)
        fields.append(field)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def plan_files(
    rows: Iterable[tuple[dict[str, Any], Any, int]],
    timestamp_column: str,
    hive_columns: Sequence[str],
    schema: Optional[pa.Schema] = None,
    max_rows_per_file: int = 0,
) -> list[PlannedFile]:
    """Group ``(value, key, kafka timestamp)`` rows into files by Hive partition.

    - a value without ``timestamp_column`` gets the Kafka timestamp (ms) there;
    - ``year/month/day/hour`` hive columns are derived from ``timestamp_column`` in UTC (unit
      detected from the batch's first number; ISO strings and datetimes work too) and kept in
      the data as strings, so the table reads correctly through a catalog;
    - other hive columns are taken from the value; a missing value goes to ``__None__``;
    - the key is stored in ``__key``.

    The files come in a stable order (sorted by partition), each with at most
    ``max_rows_per_file`` rows when that is positive.
    """
    time_cols = [c for c in hive_columns if c in TIME_COLUMNS]
    groups: dict[tuple[str, ...], tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    unit: Optional[str] = None
    for value, key, timestamp in rows:
        if not isinstance(value, dict):
            raise TypeError(f"TSDataLakeSink accepts dict values only, got {type(value).__name__}: {value!r:.80}")
        row = {k: _empty_dicts_to_none(v) for k, v in value.items()}
        if timestamp_column not in row:
            row[timestamp_column] = timestamp
        row[KEY_COLUMN] = key
        if time_cols:
            stamp = row[timestamp_column]
            if unit is None and isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                unit = detect_unit(float(stamp))
            parts = _time_parts(_to_datetime(stamp, unit, timestamp_column))
            for col in time_cols:
                row[col] = parts[col]
        partition = {col: row.get(col) for col in hive_columns}
        path = tuple(_segment(col, partition[col]) for col in hive_columns)
        group = groups.get(path)
        if group is None:
            group = groups[path] = (partition, [])
        group[1].append(row)
    planned = []
    for path in sorted(groups):
        partition, group_rows = groups[path]
        step = max_rows_per_file if max_rows_per_file > 0 else len(group_rows)
        for start in range(0, len(group_rows), step):
            try:
                table = pa.Table.from_pylist(group_rows[start:start + step])
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise TypeError(f"Values of partition {'/'.join(path) or '(none)'} have mixed types: {exc}") from exc
            planned.append(PlannedFile(path, partition, conform_table(table, schema)))
    return planned
