"""``RocksDBOptions``: the per-store RocksDB settings of a Quix Streams program, accepted as they are.

State lives in Spark's state store here (its RocksDB provider), configured through
``spark_conf`` (``spark.sql.streaming.stateStore.rocksdb.*``): an ``Application`` given
``rocksdb_options`` logs that they have no effect and carries on, so a ported program that
builds them still runs unchanged.

>>> from streamspark.state.rocksdb import RocksDBOptions
>>> options = RocksDBOptions(open_max_retries=0, compression_type="zstd")
>>> options.open_max_retries, options.on_corrupted_recreate
(0, False)
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any, Callable, Literal, Optional

from ...utils.json import dumps, loads

__all__ = ("RocksDBOptions", "CompressionType")

#: RocksDB's block compressions, by the names RocksDB's Python bindings use
CompressionType = Literal["none", "snappy", "zlib", "bz2", "lz4", "lz4hc", "zstd"]


@dataclasses.dataclass(frozen=True)
class RocksDBOptions:
    """RocksDB options of a Quix Streams store, kept for compatibility (see the module's note).

    :param dumps: function to dump data to JSON
    :param loads: function to load data from JSON
    :param open_max_retries: how many times to retry opening a database locked by another
        process (0: no retry)
    :param open_retry_backoff: seconds to wait between those retries
    :param on_corrupted_recreate: destroy a corrupted database when changelog topics are on
        (risk of data loss)

    The other fields are RocksDB's own tuning knobs (buffer, cache and WAL sizes, compression,
    fsync) and Quix Streams' TTL sweep settings; Spark's state store takes its own from
    ``spark_conf``.
    """

    write_buffer_size: int = 64 * 1024 * 1024
    target_file_size_base: int = 64 * 1024 * 1024
    max_write_buffer_number: int = 3
    block_cache_size: int = 1024 * 1024 * 1024
    bloom_filter_bits_per_key: int = 10
    enable_pipelined_write: bool = False
    compression_type: CompressionType = "lz4"
    wal_dir: Optional[str] = None
    max_total_wal_size: int = 128 * 1024 * 1024
    db_log_dir: Optional[str] = None
    dumps: Callable[[Any], bytes] = dumps
    loads: Callable[[bytes], Any] = loads
    open_max_retries: int = 10
    open_retry_backoff: float = 3.0
    use_fsync: bool = True
    on_corrupted_recreate: bool = False
    max_evictions_per_flush: int = 150_000
    legacy_records_ttl: Optional[timedelta] = None
    legacy_backfill_chunk_size: int = 150_000
    ttl_changelog_tombstones: bool = True
    ttl_rollback: bool = False
    ttl_force_flip: bool = False
