"""File formats of ``FileSink``: JSON Lines (optionally gzip, appendable) and Parquet.

>>> from streamspark.sinks.base import SinkBatch
>>> batch = SinkBatch("t", 0); batch.append(value={"a": 1}, key=b"k", timestamp=5, headers=None, offset=0)
>>> JSONFormat().serialize(batch)
b'{"_timestamp":5,"_key":"k","_value":{"a":1}}\\n'
"""

from __future__ import annotations

import abc
import gzip
import io
from typing import Any, Callable, Optional

import orjson

from ...base.batch import SinkBatch

__all__ = ("Format", "JSONFormat", "ParquetFormat", "InvalidFormatError", "resolve_format")


class InvalidFormatError(Exception):
    """The format is neither a known name nor a ``Format`` instance."""


def _key(key: Any) -> Any:
    return key.decode("utf-8", errors="replace") if isinstance(key, bytes) else key


class Format(abc.ABC):
    """How a batch becomes the bytes of one file."""

    @property
    @abc.abstractmethod
    def file_extension(self) -> str:
        """The extension of the files, with its dot."""

    @property
    def supports_append(self) -> bool:
        """Whether a batch may be appended to an existing file."""
        return False

    @abc.abstractmethod
    def serialize(self, batch: SinkBatch) -> bytes:
        """The bytes of ``batch``."""


class JSONFormat(Format):
    """JSON Lines: one ``{"_timestamp", "_key", "_value"}`` object per record (bytes keys decoded).

    :param file_extension: default ``.jsonl`` (``.gz`` is added when compressing).
    :param compress: gzip the output.
    :param dumps: a custom ``obj -> str`` serializer.
    """

    def __init__(self, file_extension: str = ".jsonl", compress: bool = False,
                 dumps: Optional[Callable[[Any], str]] = None) -> None:
        self._extension = file_extension + (".gz" if compress else "")
        self._compress = compress
        self._dumps = dumps

    @property
    def file_extension(self) -> str:
        return self._extension

    @property
    def supports_append(self) -> bool:
        return True  # JSON lines and gzip members both concatenate

    def serialize(self, batch: SinkBatch) -> bytes:
        lines = []
        for item in batch:
            obj = {"_timestamp": item.timestamp, "_key": _key(item.key), "_value": item.value}
            lines.append(self._dumps(obj).encode() if self._dumps else orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS))
        data = b"\n".join(lines) + b"\n" if lines else b""
        return gzip.compress(data) if self._compress else data


class ParquetFormat(Format):
    """Parquet: columns ``_timestamp``, ``_key`` and the value's top-level keys (missing → null).

    :param compression: none, snappy, gzip, brotli, lz4 or zstd.
    """

    _COMPRESSIONS = ("none", "snappy", "gzip", "brotli", "lz4", "zstd")

    def __init__(self, file_extension: str = ".parquet", compression: str = "snappy") -> None:
        if compression not in self._COMPRESSIONS:
            raise ValueError(f"compression must be one of {self._COMPRESSIONS}, got {compression!r}")
        self._extension = file_extension
        self._compression = compression

    @property
    def file_extension(self) -> str:
        return self._extension

    def serialize(self, batch: SinkBatch) -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = []
        for item in batch:
            value = item.value if isinstance(item.value, dict) else {"_value": item.value}
            rows.append({"_timestamp": item.timestamp, "_key": _key(item.key), **value})
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows])
        buf = io.BytesIO()
        pq.write_table(table, buf, compression=self._compression)
        return buf.getvalue()


def resolve_format(fmt: Any) -> Format:
    if isinstance(fmt, Format):
        return fmt
    if fmt == "json":
        return JSONFormat()
    if fmt == "parquet":
        return ParquetFormat()
    raise InvalidFormatError(f'format must be "json", "parquet" or a Format instance, got {fmt!r}')
