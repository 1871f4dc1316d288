"""The one home of state bucketing: which of the ``state_buckets`` buckets holds a key's state.

Stateful pipelines keep the state of all message keys in a fixed number of buckets (one Spark
state entry each). A record is assigned its bucket in Python (the source packing records per
bucket, the pre-shuffle stage of a group_by) or by Spark (the plain path): both must give the
same number, so both forms live here and are checked against each other by the tests.

>>> bucket_of_key(b"sensor-1", 64), bucket_of_key(None, 64)
(19, 0)
>>> bucket_of_partition("readings", 3, 64)
9
"""

from __future__ import annotations

import zlib
from typing import Any, Optional

__all__ = ("bucket_of_key", "bucket_of_partition", "key_bucket_column", "partition_bucket_column")


def bucket_of_key(key: Optional[bytes], buckets: int) -> int:
    """The state bucket of a message key: ``crc32(key) mod buckets``, 0 for no key; the same
    number as :func:`key_bucket_column` computes in Spark."""
    return zlib.crc32(key) % buckets if key is not None else 0


def bucket_of_partition(topic: str, partition: int, buckets: int) -> int:
    """The state bucket of a whole Kafka partition (windows closing by partition): the same
    number as :func:`partition_bucket_column` computes in Spark."""
    return zlib.crc32(f"{topic}:{partition}".encode()) % buckets


def key_bucket_column(buckets: int, key: str = "key") -> Any:
    """Spark's form of :func:`bucket_of_key` over the binary column ``key``."""
    from pyspark.sql import functions as F

    return F.coalesce(F.pmod(F.crc32(F.col(key)), F.lit(buckets)), F.lit(0))


def partition_bucket_column(buckets: int) -> Any:
    """Spark's form of :func:`bucket_of_partition` over the ``topic`` and ``partition`` columns."""
    from pyspark.sql import functions as F

    return F.pmod(F.crc32(F.concat_ws(":", F.col("topic"), F.col("partition").cast("string"))), F.lit(buckets))
