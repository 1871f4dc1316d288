"""Schemaless Avro records of one flat schema → one Arrow table, decoded a chunk at a time.

fastavro decodes a record at a time into a dict (about 2 µs a record for a reading of six
fields). :class:`ArrowAvroDecoder` decodes a whole chunk of records field by field with array
operations: every record's position in the chunk moves on together, one field at a time, so
the cost per record is a few array operations' worth, not a Python call.

It covers records whose fields are ``null``, ``boolean``, ``int``, ``long``, ``float``,
``double``, ``string`` or ``bytes``, or a union of ``null`` and one of those (no logical types:
fastavro turns those into ``datetime``, ``Decimal``... values). :meth:`ArrowAvroDecoder.for_schema`
returns None for any other schema.

A chunk decodes only when every record is exactly one record of the schema: valid branches,
booleans and UTF-8, no byte left over and none missing. Otherwise :meth:`~ArrowAvroDecoder.decode`
returns None and the caller decodes record by record, which reports the bad record (or, for a
record with trailing bytes, which fastavro ignores, decodes it as fastavro does). Values equal
fastavro's: ``int``/``long`` as int64, ``float`` as the float64 of the float32, ``string`` as
Arrow strings, a null branch as null.

>>> import fastavro, io
>>> schema = fastavro.parse_schema({"type": "record", "name": "R", "fields": [
...     {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]}]})
>>> def encode(record):
...     buffer = io.BytesIO()
...     fastavro.schemaless_writer(buffer, schema, record)
...     return buffer.getvalue()
>>> decoder = ArrowAvroDecoder.for_schema(schema)
>>> decoder.decode([encode({"id": 1, "name": "a"}), encode({"id": -2, "name": None})]).to_pylist()
[{'id': 1, 'name': 'a'}, {'id': -2, 'name': None}]
>>> decoder.decode([encode({"id": 1, "name": "a"})[:-1]]) is None  # a truncated record
True
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Iterator, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa

__all__ = ("ArrowAvroDecoder", "ArrowAvroEncoder")

#: Avro primitive type → Arrow type of the decoded column
_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int64(),
    "long": pa.int64(),
    "float": pa.float64(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}
#: a varint is at most 10 bytes (64 bits, 7 a byte)
_VARINT_BYTES = 10
_SPREAD = np.arange(8, dtype=np.int64)
#: the most bytes one Arrow (32-bit offset) column of strings holds
_MAX_COLUMN_BYTES = 2**31 - 1


class _Refused(Exception):
    """The chunk is not exactly records of the schema: decode it record by record."""


def _primitive(avro_type: Any) -> Optional[str]:
    """The primitive a field type names (``"long"`` or ``{"type": "long"}``), or None."""
    if isinstance(avro_type, Mapping):
        if set(avro_type) - {"type"}:  # a logical type, or a named/complex type
            return None
        avro_type = avro_type.get("type")
    return avro_type if isinstance(avro_type, str) and avro_type in _PRIMITIVES else None


def _field_plan(avro_type: Any) -> Optional[tuple[str, int]]:
    """``(primitive, index of its branch or -1 when not a union)``; None when not covered."""
    if isinstance(avro_type, list):
        if len(avro_type) != 2:
            return None
        kinds = [_primitive(branch) for branch in avro_type]
        if "null" not in kinds or None in kinds or kinds[0] == kinds[1]:
            return None
        branch = 1 - kinds.index("null")
        return kinds[branch], branch  # type: ignore[return-value]
    kind = _primitive(avro_type)
    return (kind, -1) if kind is not None else None


def _record_plan(parsed: Any) -> Optional[tuple[list[str], list[tuple[str, int]]]]:
    """A flat record schema's field names and :func:`_field_plan` of each field; None for
    another schema, a record without fields, or a field type not covered."""
    if not isinstance(parsed, Mapping) or parsed.get("type") != "record":
        return None
    names, fields = [], []
    for field in parsed.get("fields", ()):
        planned = _field_plan(field.get("type"))
        if planned is None:
            return None
        names.append(field["name"])
        fields.append(planned)
    return (names, fields) if names else None


class ArrowAvroDecoder:
    """Decodes chunks of schemaless Avro records of one flat record schema into Arrow tables."""

    def __init__(self, names: list[str], fields: list[tuple[str, int]]) -> None:
        self.names = names
        self._fields = fields
        self.schema = pa.schema([(name, _PRIMITIVES[kind]) for name, (kind, _) in zip(names, fields)])

    @classmethod
    def for_schema(cls, parsed: Any) -> Optional["ArrowAvroDecoder"]:
        """A decoder for a (fastavro-parsed) record schema, or None when a field has a type it
        does not cover."""
        planned = _record_plan(parsed)
        return cls(*planned) if planned is not None else None

    def decode(self, values: Sequence[Optional[bytes]]) -> Optional[pa.Table]:
        """The records as a table (a row each, the schema's fields as columns), or None when a
        value is not exactly one record of the schema (or is None, a tombstone)."""
        n = len(values)
        if not n:
            return None
        try:
            lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)  # type: ignore[arg-type]
            joined = b"".join(values)  # type: ignore[arg-type]
        except TypeError:
            return None
        ends = np.cumsum(lengths)
        pos = ends - lengths
        # padded, so that reading a fixed-width value at any position stays inside the buffer
        buf = np.frombuffer(joined + bytes(8), dtype=np.uint8)
        columns = []
        try:
            for kind, branch in self._fields:
                if branch < 0:
                    values_read, pos = _read(kind, buf, pos, ends)
                    column = _as_column(values_read, kind, n)
                else:
                    index, pos = _varint(buf, pos, ends)
                    index = _unzigzag(index)
                    if not np.all((index == 0) | (index == 1)):
                        raise _Refused
                    present = index == branch
                    values_at, pos_at = _read(kind, buf, pos[present], ends[present])
                    pos = pos.copy()
                    pos[present] = pos_at
                    column = _with_nulls(values_at, present, kind)
                columns.append(column)
        except _Refused:
            return None
        if not np.array_equal(pos, ends):  # bytes left over in a record
            return None
        return pa.Table.from_arrays(columns, schema=self.schema)

    def decode_records(self, values: Sequence[Optional[bytes]], block: int = 2048) -> Optional[Iterator[dict[str, Any]]]:
        """The records as fastavro's ``schemaless_reader`` returns them (a dict each, the
        schema's fields in order), in order, or None when :meth:`decode` refuses the chunk.

        The chunk is decoded at once; its dicts are built ``block`` records at a time as they
        are taken, so that a large chunk does not keep all of them alive (the garbage
        collector's passes cost more with each live container). About half of fastavro's cost
        a record, most of it building the dicts.

        >>> import fastavro, io
        >>> schema = fastavro.parse_schema({"type": "record", "name": "R", "fields": [
        ...     {"name": "id", "type": "long"}, {"name": "ok", "type": ["null", "boolean"]}]})
        >>> buffer = io.BytesIO()
        >>> fastavro.schemaless_writer(buffer, schema, {"id": 7, "ok": True})
        >>> list(ArrowAvroDecoder.for_schema(schema).decode_records([buffer.getvalue()]))
        [{'id': 7, 'ok': True}]
        """
        table = self.decode(values)
        if table is None:
            return None
        return self.table_records(table, block)

    def table_records(self, table: pa.Table, block: int = 2048) -> Iterator[dict[str, Any]]:
        """The records of a table :meth:`decode` gave, as :meth:`decode_records` gives them."""
        return _records(table, self.names, block)


def _records(table: pa.Table, names: list[str], block: int) -> Iterator[dict[str, Any]]:
    for start in range(0, table.num_rows, block):
        part = table.slice(start, block)
        for row in zip(*(column.to_pylist() for column in part.columns)):
            yield dict(zip(names, row))


def _varint(buf: np.ndarray, pos: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The raw (still zigzagged) varints at ``pos`` as uint64, and the positions after them."""
    byte = buf[pos]
    raw = (byte & 0x7F).astype(np.uint64)
    after = pos + 1
    # the varints not ended yet (a byte with its high bit set), one byte further each round
    going = np.flatnonzero(byte >= 0x80)
    for shift in range(7, 7 * _VARINT_BYTES, 7):
        if not going.size:
            break
        byte = buf[after[going]]
        if shift == 63 and np.any(byte > 1):
            raise _Refused  # a 10th byte carries only the 64th bit
        raw[going] |= (byte & 0x7F).astype(np.uint64) << np.uint64(shift)
        after[going] += 1
        going = going[byte >= 0x80]
    if going.size or np.any(after > ends):
        raise _Refused  # longer than 10 bytes, or past the record's end
    return raw, after


def _unzigzag(raw: np.ndarray) -> np.ndarray:
    return ((raw >> np.uint64(1)) ^ (np.uint64(0) - (raw & np.uint64(1)))).view(np.int64)


def _fixed(buf: np.ndarray, pos: np.ndarray, ends: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    after = pos + width
    if np.any(after > ends):
        raise _Refused
    return buf[pos[:, None] + _SPREAD[:width]], after


def _read(kind: str, buf: np.ndarray, pos: np.ndarray, ends: np.ndarray) -> tuple[Any, np.ndarray]:
    """One field of every record at ``pos``: its values (a numpy array, or a pyarrow array
    for strings and bytes) and the positions after it."""
    if kind in ("int", "long"):
        raw, pos = _varint(buf, pos, ends)
        return _unzigzag(raw), pos
    if kind == "double":
        data, pos = _fixed(buf, pos, ends, 8)
        return data.view("<f8").reshape(-1), pos
    if kind == "float":
        data, pos = _fixed(buf, pos, ends, 4)
        with np.errstate(invalid="ignore"):  # a signalling NaN widens quietly, as in fastavro
            return data.view("<f4").reshape(-1).astype(np.float64), pos
    if kind == "boolean":
        data, pos = _fixed(buf, pos, ends, 1)
        flags = data.reshape(-1)
        if np.any(flags > 1):
            raise _Refused  # fastavro reads any non-zero byte as True: leave it to fastavro
        return flags.astype(bool), pos
    if kind == "null":
        return None, pos
    # string / bytes: a zigzag varint length, then the bytes
    raw, starts = _varint(buf, pos, ends)
    sizes = _unzigzag(raw)
    # compared with the room left, not added to the start: a huge length must not wrap around
    if np.any(sizes < 0) or np.any(sizes > ends - starts):
        raise _Refused
    after = starts + sizes
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    total = int(offsets[-1])
    if total > _MAX_COLUMN_BYTES:
        raise _Refused
    # the bytes of every value, gathered: value i's bytes start at starts[i]
    gather = np.repeat(starts - offsets[:-1], sizes) + np.arange(total, dtype=np.int64)
    data = buf[gather]
    array = pa.Array.from_buffers(
        pa.string() if kind == "string" else pa.binary(),
        len(sizes),
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)],
    )
    if kind == "string":
        try:
            array.validate(full=True)  # UTF-8
        except pa.ArrowInvalid:
            raise _Refused from None
    return array, after


def _with_nulls(values: Any, present: np.ndarray, kind: str) -> pa.Array:
    """A column of ``len(present)`` rows: ``values`` where ``present``, null elsewhere."""
    n = len(present)
    arrow_type = _PRIMITIVES[kind]
    if kind == "null" or not present.any():
        return pa.nulls(n, arrow_type)
    if isinstance(values, pa.Array):
        if present.all():
            return values
        indices = np.full(n, -1, dtype=np.int64)
        indices[present] = np.arange(len(values))
        # take with null indices gives null rows
        return values.take(pa.array(indices, mask=~present))
    full = np.zeros(n, dtype=values.dtype)
    full[present] = values
    return pa.array(full, type=arrow_type, mask=~present)


def _as_column(values: Any, kind: str, n: int) -> pa.Array:
    if values is None:
        return pa.nulls(n)
    if isinstance(values, pa.Array):
        return values
    return pa.array(values, type=_PRIMITIVES[kind])


#: the largest integer a float64 holds exactly (and every smaller one)
_EXACT_INT = 2**53
_GROUPS = np.arange(_VARINT_BYTES, dtype=np.uint64)


class ArrowAvroEncoder:
    """Encodes chunks of dicts as schemaless Avro records of one flat record schema, field by
    field with array operations, giving fastavro's ``schemaless_writer`` bytes for each.

    A chunk is encoded only when every value is a ``dict`` holding every field of the schema
    with a value of exactly the type the field takes (``int`` for ``int``/``long``, ``float``
    or an ``int`` within ±2**53 for ``float``/``double``, ``bool``, ``str``, ``bytes``, None for
    ``null``); extra keys are ignored, as fastavro does without ``strict``. Otherwise
    :meth:`encode` returns None and the caller serializes record by record, which reports the
    bad record (or encodes what fastavro also accepts, such as a ``float`` for an ``int``).

    >>> import fastavro, io
    >>> schema = fastavro.parse_schema({"type": "record", "name": "R", "fields": [
    ...     {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"]}]})
    >>> encoder = ArrowAvroEncoder.for_schema(schema)
    >>> encoder.encode([{"id": 1, "name": "a"}, {"id": -300, "name": None}])
    [b'\\x02\\x02\\x02a', b'\\xd7\\x04\\x00']
    >>> encoder.encode([{"id": "1", "name": None}]) is None  # a str for a long
    True
    """

    def __init__(self, names: list[str], fields: list[tuple[str, int]]) -> None:
        self.names = names
        self._fields = fields

    @classmethod
    def for_schema(cls, parsed: Any) -> Optional["ArrowAvroEncoder"]:
        """An encoder for a (fastavro-parsed) record schema, or None when a field has a type it
        does not cover (the types :class:`ArrowAvroDecoder` covers)."""
        planned = _record_plan(parsed)
        return cls(*planned) if planned is not None else None

    def encode(self, values: Sequence[Any]) -> Optional[list[bytes]]:
        """Each value's encoding, in order; None when the chunk is not exactly values of the
        schema (see the class notes)."""
        n = len(values)
        if not n:
            return []
        for value in values:
            if value.__class__ is not dict:
                return None
        pieces: list[tuple[np.ndarray, np.ndarray]] = []
        try:
            for name, (kind, branch) in zip(self.names, self._fields):
                column = list(map(itemgetter(name), values))
                if branch < 0:
                    pieces += _encoded(column, kind)
                    continue
                present = np.fromiter((item is not None for item in column), dtype=bool, count=n)
                # the union's branch: index ``branch`` for a value, the other one for None
                index = np.where(present, branch, 1 - branch).astype(np.uint64) << np.uint64(1)
                pieces.append((np.ones(n, dtype=np.int64), index.astype(np.uint8)))
                for lengths, data in _encoded([item for item in column if item is not None], kind):
                    spread = np.zeros(n, dtype=np.int64)
                    spread[present] = lengths
                    pieces.append((spread, data))
        except (_Refused, KeyError, OverflowError, TypeError, ValueError, pa.ArrowException):
            return None
        return _assembled(pieces, n)


def _all_of(column: list[Any], *kinds: type) -> set[type]:
    """The types of the column's values, all among ``kinds`` (else refused)."""
    found = set(map(type, column))
    if not found.issubset(kinds):
        raise _Refused
    return found


def _varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The zigzag varints of int64 ``values``: each one's length in bytes, and all the bytes."""
    raw = ((values << np.int64(1)) ^ (values >> np.int64(63))).view(np.uint64)
    lengths = np.ones(len(raw), dtype=np.int64)
    for shift in range(7, 7 * _VARINT_BYTES, 7):
        longer = raw >= (np.uint64(1) << np.uint64(shift))
        if not longer.any():
            break
        lengths += longer
    width = int(lengths.max()) if len(raw) else 1
    if width == 1:  # every value in one byte (lengths, small numbers)
        return lengths, raw.astype(np.uint8)
    groups = (raw[:, None] >> (np.uint64(7) * _GROUPS[:width])) & np.uint64(0x7F)
    positions = _GROUPS[:width].astype(np.int64)[None, :]
    used = positions < lengths[:, None]
    more = positions < (lengths - 1)[:, None]
    data = (groups | (more.astype(np.uint64) << np.uint64(7))).astype(np.uint8)
    return lengths, data[used]


def _encoded(column: list[Any], kind: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The pieces (each record's length in bytes, all the bytes) of one field's values."""
    n = len(column)
    if kind == "null":
        if any(item is not None for item in column):
            raise _Refused
        return [(np.zeros(n, dtype=np.int64), np.zeros(0, dtype=np.uint8))]
    if kind == "boolean":
        _all_of(column, bool)
        return [(np.ones(n, dtype=np.int64), np.array(column, dtype=np.uint8))]
    if kind in ("int", "long"):
        _all_of(column, int)
        values = np.array(column, dtype=np.int64)  # OverflowError past 64 bits
        if kind == "int" and n and (int(values.min()) < -(2**31) or int(values.max()) >= 2**31):
            raise _Refused  # fastavro refuses it in a union (and writes it as a long otherwise)
        return [_varints(values)]
    if kind in ("float", "double"):
        if int in _all_of(column, float, int) and any(item.__class__ is int and abs(item) > _EXACT_INT for item in column):
            raise _Refused
        width, dtype = (8, "<f8") if kind == "double" else (4, "<f4")
        with np.errstate(over="ignore"):  # a double too big for a float becomes inf, as in fastavro
            data = np.array(column, dtype=np.float64).astype(dtype)
        return [(np.full(n, width, dtype=np.int64), data.view(np.uint8))]
    # string / bytes: the length as a varint, then the bytes (UTF-8 for a string)
    _all_of(column, str if kind == "string" else bytes)
    array = pa.array(column, type=pa.large_string() if kind == "string" else pa.large_binary())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[: n + 1]
    sizes = np.diff(offsets)
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]] if n else np.zeros(0, np.uint8)
    return [_varints(sizes), (sizes, data)]


def _assembled(pieces: list[tuple[np.ndarray, np.ndarray]], n: int) -> list[bytes]:
    """The records: piece after piece, each record's share of every piece in turn."""
    sizes = np.zeros(n, dtype=np.int64)
    for lengths, _ in pieces:
        sizes += lengths
    ends = np.cumsum(sizes)
    at = ends - sizes  # where each record's next piece goes
    out = np.empty(int(ends[-1]) if n else 0, dtype=np.uint8)
    for lengths, data in pieces:
        if data.size:
            source_starts = np.cumsum(lengths) - lengths
            out[np.repeat(at - source_starts, lengths) + np.arange(data.size, dtype=np.int64)] = data
        at = at + lengths
    blob = out.tobytes()
    starts = (ends - sizes).tolist()
    return [blob[start:end] for start, end in zip(starts, ends.tolist())]
