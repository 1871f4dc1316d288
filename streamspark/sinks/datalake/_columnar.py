"""Raw JSON or Avro chunks → Arrow tables → file plans: the lake sink's fast path.

When a topic's JSON values go straight into the sink (no step between them), a Spark task
hands the sink whole chunks of raw values (``TSDataLakeSink.add_raw_json``). Arrow's JSON reader
decodes a chunk in one call and the rows are grouped by hour with array operations, instead of
decoding each value in Python and planning the files row by row (:func:`._layout.plan_files`).
Schemaless Avro values read with a plain ``AvroDeserializer`` take the same way
(``add_raw_avro``): ``ArrowAvroDecoder`` decodes the chunk (:func:`read_avro_chunk`).

Both paths give the same files. Arrow's reader and orjson (the default ``loads``) differ on a
few inputs (NaN literals, numbers past 64 bits, ISO-looking strings read as timestamps, a
value holding two documents, a ``null`` timestamp), so :func:`read_chunk` refuses any chunk it
cannot vouch for and :func:`plan_chunks` any layout it does not cover; their records then take
the per-record path, which also reports bad input the usual way.

>>> chunk = read_chunk([b'{"ts": 1704067200000, "temp": 21.5}'], [b"k"], [0], "ts")
>>> [(p.path_parts, p.table.num_rows) for p in plan_chunks([chunk], "ts", ["year", "month"])]
[(('year=2024', 'month=01'), 1)]
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ._layout import (
    KEY_COLUMN,
    TIME_COLUMNS,
    PlannedFile,
    _UNIT_DIVISOR,
    _SECONDS_PER_HOUR,
    _segment,
    _set_column,
    _time_parts,
    _to_datetime,
    conform_table,
    detect_unit,
)

if TYPE_CHECKING:
    from ...models.serializers.avro import ArrowAvroDecoder

__all__ = ("JsonChunk", "AvroChunk", "read_chunk", "read_avro_chunk", "plan_chunks")

#: column types whose Arrow inference matches ``pa.array`` over the decoded Python values
_PLAIN_TYPES = (pa.int64(), pa.float64(), pa.string(), pa.bool_(), pa.null())
#: Arrow reads an integer literal past 64 bits as a double (orjson keeps it an int): a double
#: column with a value this large may hold one
_INT64_LIMIT = 2.0**63
#: rows an Avro chunk turns into dicts at a time
_ROWS_AT_ONCE = 1024


class JsonChunk:
    """Raw JSON values (one object each) with their message keys and Kafka timestamps, and
    the Arrow table of the values."""

    __slots__ = ("values", "keys", "stamps", "table")

    def __init__(self, values: Sequence[bytes], keys: Sequence[Any], stamps: Sequence[int], table: pa.Table) -> None:
        self.values = values
        self.keys = keys
        self.stamps = stamps
        self.table = table

    def __len__(self) -> int:
        return len(self.values)

    def rows(self) -> Iterator[tuple[Any, Any, int]]:
        """``(value, key, timestamp)`` of each record, the value decoded as the per-record path
        decodes it."""
        from ...utils.json import loads

        return ((loads(value), key, stamp) for value, key, stamp in zip(self.values, self.keys, self.stamps))

    def subset(self, picked: list[int], stamps: list[int], timestamp_column: str) -> Optional[JsonChunk]:
        """The chunk of the ``picked`` records (with their ``stamps``), its values read again:
        the plain path infers types per partition."""
        return read_chunk([self.values[i] for i in picked], [self.keys[i] for i in picked], stamps, timestamp_column)


class AvroChunk(JsonChunk):
    """Schemaless Avro values decoded into an Arrow table at once (``ArrowAvroDecoder``),
    with their message keys and Kafka timestamps."""

    __slots__ = ()

    def rows(self) -> Iterator[tuple[Any, Any, int]]:
        # the decoder's table gives the dicts AvroDeserializer gives (a slice at a time: the
        # sink may want only the first rows)
        for start in range(0, len(self), _ROWS_AT_ONCE):
            end = start + _ROWS_AT_ONCE
            yield from zip(self.table.slice(start, _ROWS_AT_ONCE).to_pylist(), self.keys[start:end], self.stamps[start:end])

    def subset(self, picked: list[int], stamps: list[int], timestamp_column: str) -> Optional[JsonChunk]:
        table = _plain_table(self.table.take(picked), timestamp_column, all_null_as_null=True)
        if table is None:
            return None
        return AvroChunk([self.values[i] for i in picked], [self.keys[i] for i in picked], stamps, table)


def _read(buf: bytes, strings: Sequence[str] = ()) -> Optional[pa.Table]:
    options = pj.ParseOptions(explicit_schema=pa.schema([(name, pa.string()) for name in strings])) if strings else None
    try:
        return pj.read_json(
            io.BytesIO(buf),
            read_options=pj.ReadOptions(use_threads=False, block_size=len(buf) + 1),
            parse_options=options,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError):
        return None


def read_chunk(
    values: Sequence[Optional[bytes]], keys: Sequence[Any], stamps: Sequence[int], timestamp_column: str
) -> Optional[JsonChunk]:
    """The chunk decoded by Arrow, or None when the result might differ from decoding each value
    with orjson (or a value is not a flat JSON object, or the timestamp column is not an integer
    in every value that has it).

    >>> read_chunk([b'{"a": 1}', b'{"a": NaN}'], [None, None], [0, 0], "ts") is None
    True
    """
    n = len(values)
    if not n:
        return None
    try:
        buf = b"\n".join(values)  # type: ignore[arg-type]
    except TypeError:  # a None value (a tombstone)
        return None
    # one line per value, each an object: a value with a line break, an empty value, a
    # whitespace-padded one or a byte order mark goes the per-record way
    if (
        buf.count(b"\n") != n - 1
        or buf.count(b"\n{") != n - 1
        or buf.count(b"}\n") != n - 1
        or buf[:1] != b"{"
        or buf[-1:] != b"}"
    ):
        return None
    table = _read(buf)
    if table is None:
        return None
    dated = [f.name for f in table.schema if pa.types.is_timestamp(f.type) or pa.types.is_date(f.type)]
    if dated:  # strings that look like dates: the plain path keeps them strings
        names = table.column_names
        table = _read(buf, dated)
        if table is None or table.column_names != sorted(names, key=lambda name: name not in dated):
            return None
        table = table.select(names)  # explicit columns come first: back to the order of the values
    # a value with two documents gives two rows (and every value gives at least one)
    if table.num_rows != n or table.num_columns == 0:
        return None
    if _plain_table(table, timestamp_column) is None:
        return None
    return JsonChunk(values, keys, stamps, table)  # type: ignore[arg-type]


def _plain_table(table: pa.Table, timestamp_column: str, all_null_as_null: bool = False) -> Optional[pa.Table]:
    """``table`` when its columns are of the types this path covers, None otherwise; with
    ``all_null_as_null``, a column of nulls only becomes of the null type first (as ``pa.array``
    types a list of Nones, and Arrow's JSON reader a field that is always null)."""
    if all_null_as_null:
        nulls = [i for i, column in enumerate(table.columns) if column.null_count == len(column) and column.type != pa.null()]
        for i in nulls:
            table = table.set_column(i, table.field(i).name, pa.nulls(table.num_rows))
    for field, column in zip(table.schema, table.columns):
        if field.type not in _PLAIN_TYPES:
            return None  # nested values: the plain path builds them row by row
        if field.type == pa.float64() and column.null_count < len(column):
            # orjson refuses NaN and Infinity literals, Arrow reads them (min_max skips NaN)
            if not pc.all(pc.is_finite(column)).as_py():
                return None
            bounds = pc.min_max(column).as_py()
            if bounds["max"] >= _INT64_LIMIT or bounds["min"] <= -_INT64_LIMIT:
                return None
    index = table.schema.get_field_index(timestamp_column)
    if index >= 0:
        stamp_type = table.schema.field(index).type
        # a value without the column takes the Kafka timestamp, one with null does not: Arrow
        # cannot tell them apart
        if stamp_type != pa.int64() or table.column(index).null_count:
            return None
    return table


def read_avro_chunk(
    values: Sequence[Optional[bytes]],
    keys: Sequence[Any],
    stamps: Sequence[int],
    timestamp_column: str,
    decoder: ArrowAvroDecoder,
) -> Optional[AvroChunk]:
    """The chunk of schemaless Avro values decoded by ``decoder`` in one call, or None when a
    value is not exactly one record of its schema, or the table holds types or values the
    per-record path would build differently (see :func:`_plain_table`).

    >>> from streamspark.models.serializers.avro import AvroDeserializer
    >>> schema = {"type": "record", "name": "R", "fields": [{"name": "ts", "type": "long"}]}
    >>> decoder = AvroDeserializer(schema).arrow_decoder()
    >>> read_avro_chunk([b"\\x02"], [b"k"], [0], "ts", decoder).table.to_pylist()
    [{'ts': 1}]
    """
    if not values:
        return None
    table = decoder.decode(values)
    if table is None:
        return None
    table = _plain_table(table, timestamp_column, all_null_as_null=True)
    if table is None:
        return None
    return AvroChunk(values, keys, stamps, table)  # type: ignore[arg-type]


def _unify(tables: list[pa.Table]) -> Optional[pa.Table]:
    """Concatenate a partition's tables as ``pa.array`` would type the values together:
    integers and doubles make doubles, null columns take the other type, missing columns are
    null; None for other mixes (the plain path reports them)."""
    if len(tables) == 1:
        return tables[0]
    types: dict[str, set[pa.DataType]] = {}
    for table in tables:
        for field in table.schema:
            types.setdefault(field.name, set()).add(field.type)
    target: dict[str, pa.DataType] = {}
    for name, found in types.items():
        found.discard(pa.null())
        if len(found) > 1:
            if found != {pa.int64(), pa.float64()}:
                return None
            target[name] = pa.float64()
        elif found:
            target[name] = found.pop()
    cast = []
    for table in tables:
        schema = pa.schema([pa.field(f.name, target.get(f.name, f.type)) for f in table.schema])
        cast.append(table.cast(schema) if schema != table.schema else table)
    return pa.concat_tables(cast, promote_options="default")


def plan_chunks(
    chunks: Sequence[JsonChunk],
    timestamp_column: str,
    hive_columns: Sequence[str],
    schema: Optional[pa.Schema] = None,
    max_rows_per_file: int = 0,
) -> Optional[list[PlannedFile]]:
    """The files of :func:`._layout.plan_files` for the decoded chunks, or None when the layout
    is one this path does not cover (a hive column that is not a time column) or a partition's
    values mix types the plain path rejects."""
    time_cols = [c for c in hive_columns if c in TIME_COLUMNS]
    if len(time_cols) != len(hive_columns):
        return None
    divisor = 0
    unit: Optional[str] = None
    # per partition path: its partition values and its pieces (table, keys, stamps, filled)
    groups: dict[tuple[str, ...], tuple[dict[str, Any], list[tuple[pa.Table, list[Any], np.ndarray, bool]]]] = {}
    pieces: list[_Piece]
    for chunk in chunks:
        table = chunk.table
        filled = table.schema.get_field_index(timestamp_column) < 0
        try:
            stamps = np.asarray(chunk.stamps if filled else table.column(timestamp_column).to_numpy(), dtype=np.int64)
        except (TypeError, ValueError, OverflowError):
            return None  # a Kafka timestamp that is not an integer
        keys = list(chunk.keys)
        if not time_cols:
            pieces = [((), {}, table, keys, stamps)]
        else:
            if unit is None:
                unit = detect_unit(float(stamps[0]))  # the first stamp, as plan_files does
                divisor = _UNIT_DIVISOR[unit] * _SECONDS_PER_HOUR
            # each hour's partition, worked out once from the hour's start
            hours, row_hour = np.unique(stamps // divisor, return_inverse=True)
            paths: dict[tuple[str, ...], int] = {}
            hour_path = []
            partitions = []
            for hour in hours.tolist():
                path, partition = _partition(hive_columns, hour * divisor, unit, timestamp_column)
                if path not in paths:
                    paths[path] = len(paths)
                    partitions.append((path, partition))
                hour_path.append(paths[path])
            if len(paths) == 1:
                pieces = [(*partitions[0], table, keys, stamps)]
            else:
                pieces = []
                row_path = np.asarray(hour_path)[row_hour]
                for index, (path, partition) in enumerate(partitions):
                    rows = np.flatnonzero(row_path == index)
                    picked = rows.tolist()
                    # types are inferred per partition on the plain path: read its rows again
                    sub = chunk.subset(picked, stamps[rows].tolist(), timestamp_column)
                    if sub is None:
                        return None
                    pieces.append((path, partition, sub.table, list(sub.keys), stamps[rows]))
        for path, partition, part_table, part_keys, part_stamps in pieces:
            entry = groups.get(path)
            if entry is None:
                entry = groups[path] = (partition, [])
            entry[1].append((part_table, part_keys, part_stamps, filled))
    planned = []
    for path in sorted(groups):
        partition, parts = groups[path]
        values = _unify([p[0] for p in parts])
        if values is None:
            return None
        if any(p[3] for p in parts):  # some values had no timestamp: the column holds every row's
            values = _set_column(values, timestamp_column, pa.array(np.concatenate([p[2] for p in parts])))
        values = _set_column(values, KEY_COLUMN, pa.array([k for p in parts for k in p[1]]))
        for col in time_cols:
            values = _set_column(values, col, pa.array([partition[col]] * values.num_rows, pa.string()))
        table = conform_table(values, schema)
        step = max_rows_per_file if max_rows_per_file > 0 else table.num_rows
        for start in range(0, table.num_rows, step):
            planned.append(PlannedFile(path, partition, table.slice(start, step)))
    return planned


_Piece = tuple[tuple[str, ...], dict[str, Any], pa.Table, list[Any], np.ndarray]


def _partition(
    hive_columns: Sequence[str], stamp: int, unit: Optional[str], timestamp_column: str
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The path segments and values of the (time-only) partition of a timestamp."""
    parts = _time_parts(_to_datetime(stamp, unit, timestamp_column))
    partition = {col: parts[col] for col in hive_columns}
    return tuple(_segment(col, partition[col]) for col in hive_columns), partition
