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


class _Group:
    """The rows of one Hive partition while they are collected: values as given, with the
    message keys and each row's timestamp (the value's, or the Kafka timestamp when the value
    has none)."""

    __slots__ = ("path", "partition", "values", "keys", "stamps", "filled")

    def __init__(self, path: tuple[str, ...], partition: dict[str, Any]) -> None:
        self.path = path
        self.partition = partition
        self.values: list[dict[str, Any]] = []
        self.keys: list[Any] = []
        self.stamps: list[Any] = []
        #: some value had no timestamp column (it gets the Kafka timestamp)
        self.filled = False


_MISSING = object()
_SECONDS_PER_HOUR = 3600


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
    - the key is stored in ``__key``;
    - a file's columns are every field of its values (first seen first; a value without a
      field has NULL there), then the timestamp column, ``__key`` and the time columns where
      the values do not have them.

    The files come in a stable order (sorted by partition), each with at most
    ``max_rows_per_file`` rows when that is positive.
    """
    time_cols = [c for c in hive_columns if c in TIME_COLUMNS]
    # with only time columns, a partition follows from an integer timestamp's hour: worked out
    # once per hour instead of once per row
    by_hour_only = bool(time_cols) and len(time_cols) == len(hive_columns)
    hour_groups: dict[int, _Group] = {}
    groups: dict[tuple[str, ...], _Group] = {}
    unit: Optional[str] = None
    hour_divisor = 0
    for value, key, timestamp in rows:
        if not isinstance(value, dict):
            raise TypeError(f"TSDataLakeSink accepts dict values only, got {type(value).__name__}: {value!r:.80}")
        stamp = value.get(timestamp_column, _MISSING)
        if stamp is _MISSING:
            stamp = timestamp
            filled = True
        else:
            filled = False
            if isinstance(stamp, dict):
                stamp = _empty_dicts_to_none(stamp)
        group: Optional[_Group] = None
        parts: dict[str, Optional[str]] = {}
        if time_cols:
            if unit is None and isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                unit = detect_unit(float(stamp))
                hour_divisor = _UNIT_DIVISOR[unit] * _SECONDS_PER_HOUR
            if by_hour_only and type(stamp) is int:
                hour = stamp // hour_divisor
                group = hour_groups.get(hour)
                if group is None:
                    group = hour_groups[hour] = _group_of(
                        groups,
                        hive_columns,
                        _time_parts(_to_datetime(stamp, unit, timestamp_column)),
                        value,
                        key,
                        stamp,
                        timestamp_column,
                    )
            else:
                parts = _time_parts(_to_datetime(stamp, unit, timestamp_column))
        if group is None:
            group = _group_of(groups, hive_columns, parts, value, key, stamp, timestamp_column)
        group.values.append(value)
        group.keys.append(key)
        group.stamps.append(stamp)
        if filled:
            group.filled = True
    planned = []
    for path in sorted(groups):
        group = groups[path]
        table = conform_table(_group_table(group, timestamp_column, time_cols), schema)
        step = max_rows_per_file if max_rows_per_file > 0 else table.num_rows
        for start in range(0, table.num_rows, step):
            planned.append(PlannedFile(path, group.partition, table.slice(start, step)))
    return planned


def _group_of(
    groups: dict[tuple[str, ...], _Group],
    hive_columns: Sequence[str],
    parts: dict[str, Optional[str]],
    value: dict[str, Any],
    key: Any,
    stamp: Any,
    timestamp_column: str,
) -> _Group:
    """The group of the Hive partition of a row (made on first use)."""
    partition: dict[str, Any] = {}
    for col in hive_columns:
        if col in parts:
            partition[col] = parts[col]
        elif col == KEY_COLUMN:
            partition[col] = key
        elif col == timestamp_column:
            partition[col] = stamp
        else:
            partition[col] = _empty_dicts_to_none(value.get(col))
    path = tuple(_segment(col, partition[col]) for col in hive_columns)
    group = groups.get(path)
    if group is None:
        group = groups[path] = _Group(path, partition)
    return group


class _NotFlat(Exception):
    """Values the columnar build leaves to the row-by-row one."""


def _group_table(group: _Group, timestamp_column: str, time_cols: Sequence[str]) -> pa.Table:
    """The Arrow table of a group's rows (see :func:`plan_files` for its columns).

    Flat values (no nested dicts or lists) are converted by Arrow in one call
    (:func:`_columnar_table`); anything else, including values Arrow rejects, is built row by
    row (:func:`_row_table`), which also words the errors. Both give the same table.
    """
    try:
        return _columnar_table(group, timestamp_column, time_cols)
    except (_NotFlat, pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return _row_table(group, timestamp_column, time_cols)


def _set_column(table: pa.Table, name: str, column: pa.Array) -> pa.Table:
    index = table.schema.get_field_index(name)
    return table.set_column(index, name, column) if index >= 0 else table.append_column(name, column)


def _columnar_table(group: _Group, timestamp_column: str, time_cols: Sequence[str]) -> pa.Table:
    values = pa.array(group.values)
    if values.type.num_fields == 0 or any(pa.types.is_nested(field.type) for field in values.type):
        raise _NotFlat()
    table = pa.Table.from_struct_array(values)
    if group.filled:
        table = _set_column(table, timestamp_column, pa.array(group.stamps))
    table = _set_column(table, KEY_COLUMN, pa.array(group.keys))
    for col in time_cols:
        table = _set_column(table, col, pa.array([group.partition[col]] * table.num_rows))
    return table


def _row_table(group: _Group, timestamp_column: str, time_cols: Sequence[str]) -> pa.Table:
    names: dict[str, None] = {}
    rows = []
    for value in group.values:
        rows.append({k: _empty_dicts_to_none(v) for k, v in value.items()})
        for name in value:
            if name not in names:
                names[name] = None
    for name in (timestamp_column, KEY_COLUMN, *time_cols):
        names.setdefault(name)
    columns: dict[str, list[Any]] = {name: [row.get(name) for row in rows] for name in names}
    columns[timestamp_column] = group.stamps
    columns[KEY_COLUMN] = group.keys
    for col in time_cols:
        columns[col] = [group.partition[col]] * len(rows)
    try:
        return pa.Table.from_pydict(columns)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise TypeError(f"Values of partition {'/'.join(group.path) or '(none)'} have mixed types: {exc}") from exc
