"""``ParquetFormat``: one Parquet file per batch, the value's top-level keys as columns.

>>> ParquetFormat(compression="zstd").file_extension
'.parquet'
"""

from __future__ import annotations

import io
from typing import Literal, get_args

from ....base.batch import SinkBatch
from ..._values import key_text
from .base import Format

__all__ = ("ParquetFormat", "Compression")

Compression = Literal["none", "snappy", "gzip", "brotli", "lz4", "zstd"]


class ParquetFormat(Format):
    """Parquet: columns ``_timestamp``, ``_key`` and the value's top-level keys (missing → null).

    :param file_extension: default ``.parquet``.
    :param compression: none, snappy, gzip, brotli, lz4 or zstd.
    """

    def __init__(self, file_extension: str = ".parquet", compression: Compression = "snappy") -> None:
        if compression not in get_args(Compression):
            raise ValueError(f"compression must be one of {get_args(Compression)}, got {compression!r}")
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
            rows.append({"_timestamp": item.timestamp, "_key": key_text(item.key), **value})
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        table = pa.Table.from_pylist([{c: row.get(c) for c in columns} for row in rows])
        buf = io.BytesIO()
        pq.write_table(table, buf, compression=self._compression)
        return buf.getvalue()
