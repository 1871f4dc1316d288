"""Parquet files: columns ``_key``, ``_timestamp`` and the value's fields (the ``FileSink`` layout).

>>> import io, pyarrow as pa, pyarrow.parquet as pq
>>> buf = io.BytesIO(); pq.write_table(pa.Table.from_pylist([{"_key": "k", "_timestamp": 5, "a": 1}]), buf)
>>> list(ParquetFormat().deserialize(io.BytesIO(buf.getvalue())))
[{'_key': 'k', '_timestamp': 5, '_value': {'a': 1}}]
"""

from __future__ import annotations

import datetime
import logging
from typing import Any, BinaryIO, Iterator, Optional

from ..compressions import CompressionName
from .base import Format

__all__ = ("ParquetFormat",)

logger = logging.getLogger(__name__)

_BATCH_ROWS = 10_000


def _millis(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return int(value.timestamp() * 1000)
    return value


class ParquetFormat(Format):
    """Read Parquet files, a row group batch at a time.

    Each row becomes ``{"_key", "_timestamp", "_value": {the other columns}}``; a missing
    ``_key``/``_timestamp`` column reads as None, and timestamp columns as milliseconds.
    Parquet files carry their own compression, so ``compression`` is ignored.

    :raises ValueError: (when reading) the data is not a valid Parquet file.
    """

    def __init__(self, compression: Optional[CompressionName] = None) -> None:
        if compression:
            logger.info("Parquet files carry their own compression: compression=%r is ignored", compression)
        super().__init__(None)

    def deserialize(self, filestream: BinaryIO) -> Iterator[dict]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            batches = pq.ParquetFile(filestream).iter_batches(batch_size=_BATCH_ROWS)
            for batch in batches:
                for row in batch.to_pylist():
                    key = row.pop("_key", None)
                    timestamp = _millis(row.pop("_timestamp", None))
                    yield {"_key": key, "_timestamp": timestamp, "_value": row}
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(f"not a valid Parquet file ({exc})") from exc
