"""The one home of state bucketing: which of the ``state_buckets`` buckets holds a key's state.

Stateful pipelines keep the state of all message keys in a fixed number of buckets (one Spark
state entry each). A record is assigned its bucket in Python (the source packing records per
bucket, the pre-shuffle stage of a group_by) or by Spark (the plain path): both must give the
same number, so both forms live here and are checked against each other by the tests.

>>> bucket_of_key(b"sensor-1", 64), bucket_of_key(None, 64)
(19, 0)
>>> bucket_of_partition("readings", 3, 64)
9

Spark sends the rows of a state bucket to the shuffle partition :func:`spark_partition_of`
gives, and a task runs its buckets in ascending order. An *end bucket* (:func:`end_buckets`)
is a bucket number above every state bucket, one per shuffle partition, that holds no state:
it runs last in its partition's task (see ``ProducerFlush``).

>>> spark_partition_of(5, 4), end_buckets(4)
(0, (1099511627782, 1099511627776, 1099511627777, 1099511627778))

How many buckets a checkpoint has is chosen once, by its first stateful run
(:func:`checkpoint_state_buckets`), and recorded in the checkpoint.
"""

from __future__ import annotations

import json
import logging
import zlib
from pathlib import Path
from typing import Any, Optional

from ..state.exceptions import StateError

__all__ = (
    "bucket_of_key",
    "bucket_of_partition",
    "key_bucket_column",
    "partition_bucket_column",
    "spark_partition_of",
    "end_buckets",
    "is_end_bucket",
    "END_BUCKET_BASE",
    "BUCKETS_PER_PARTITION",
    "LEGACY_STATE_BUCKETS",
    "STATE_BUCKETS_FILE",
    "default_state_buckets",
    "checkpoint_state_buckets",
)

logger = logging.getLogger(__name__)

#: buckets per shuffle partition of a new stateful checkpoint on a local master. Spark's Python
#: state API costs about a millisecond per bucket a micro-batch touches, whatever its records:
#: on 2 cores a running count at 5k msg/s (bench/user.py W5-stateful) had a median latency of
#: 427-600 ms with 16 buckets against 794-908 ms with 64 (interleaved runs), and a backlog of
#: 500k records (W2, W3) ran as fast or slightly faster
BUCKETS_PER_PARTITION = 8
#: the buckets of a checkpoint that records none: begun by an earlier version (whose default
#: this was), by a stateless pipeline, or on a master whose shuffle partitions are the cluster's
LEGACY_STATE_BUCKETS = 64
#: the file in a checkpoint that records its bucket count
STATE_BUCKETS_FILE = "streamspark-state.json"

#: the first end bucket number: above any ``state_buckets`` a run may have
END_BUCKET_BASE = 1 << 40

_M32 = 0xFFFFFFFF


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


def _mix_k1(k1: int) -> int:
    k1 = (k1 * 0xCC9E2D51) & _M32
    k1 = ((k1 << 15) | (k1 >> 17)) & _M32
    return (k1 * 0x1B873593) & _M32


def _mix_h1(h1: int, k1: int) -> int:
    h1 ^= k1
    h1 = ((h1 << 13) | (h1 >> 19)) & _M32
    return (h1 * 5 + 0xE6546B64) & _M32


def _spark_hash_long(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` (Murmur3 x86 32-bit, seed 42) of a bigint, as a signed int."""
    value &= 0xFFFFFFFFFFFFFFFF
    h1 = _mix_h1(_mix_h1(seed, _mix_k1(value & _M32)), _mix_k1(value >> 32))
    h1 ^= 8
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def spark_partition_of(bucket: int, partitions: int) -> int:
    """The shuffle partition Spark sends the rows of ``bucket`` (a bigint group key) to:
    ``pmod(hash(bucket), partitions)``, Spark's hash partitioning."""
    return _spark_hash_long(bucket) % partitions


def end_buckets(partitions: int) -> tuple[int, ...]:
    """One end bucket per shuffle partition (index: the partition): the smallest number from
    :data:`END_BUCKET_BASE` up that Spark sends to that partition."""
    found: dict[int, int] = {}
    candidate = END_BUCKET_BASE
    while len(found) < partitions:
        found.setdefault(spark_partition_of(candidate, partitions), candidate)
        candidate += 1
    return tuple(found[p] for p in range(partitions))


def is_end_bucket(bucket: int) -> bool:
    return bucket >= END_BUCKET_BASE


def default_state_buckets(shuffle_partitions: Optional[int]) -> int:
    """The buckets a new stateful checkpoint gets without ``state_buckets``:
    :data:`BUCKETS_PER_PARTITION` per shuffle partition when the session's are known before it
    starts (a local master, or set by the program), else :data:`LEGACY_STATE_BUCKETS`.

    >>> default_state_buckets(2), default_state_buckets(None)
    (16, 64)
    """
    if shuffle_partitions is None:
        return LEGACY_STATE_BUCKETS
    return BUCKETS_PER_PARTITION * max(1, shuffle_partitions)


def checkpoint_state_buckets(checkpoint_dir: Path, requested: Optional[int], default: int, stateful: bool) -> int:
    """The state buckets of a run on the checkpoint in ``checkpoint_dir``.

    ``requested`` (the application's ``state_buckets``) wins when given; a different count from
    the one the state was written with is refused when the state is read. Without it: the count
    the checkpoint records (:data:`STATE_BUCKETS_FILE`); :data:`LEGACY_STATE_BUCKETS` for a
    checkpoint that has micro-batches but no record; ``default`` for a new one, recorded there
    by a ``stateful`` run (a record whose checkpoint has no micro-batch yet is chosen again).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "checkpoint"
    >>> checkpoint_state_buckets(folder, None, 16, stateful=True)
    16
    >>> (folder / "commits").mkdir(); (folder / "commits" / "0").touch()
    >>> checkpoint_state_buckets(folder, None, 32, stateful=True), checkpoint_state_buckets(folder, 8, 32, stateful=True)
    (16, 8)
    >>> legacy = Path(tempfile.mkdtemp()); (legacy / "commits").mkdir(); (legacy / "commits" / "0").touch()
    >>> checkpoint_state_buckets(legacy, None, 16, stateful=True)
    64
    """
    record = checkpoint_dir / STATE_BUCKETS_FILE
    commits = checkpoint_dir / "commits"
    begun = commits.is_dir() and any(commits.iterdir())
    if begun:
        if requested is not None:
            return requested
        if not record.exists():
            return LEGACY_STATE_BUCKETS
        try:
            stored = json.loads(record.read_text(encoding="utf-8"))["state_buckets"]
            if not isinstance(stored, int) or isinstance(stored, bool) or stored < 1:
                raise ValueError(f"not a bucket count: {stored!r}")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StateError(
                f"Cannot read the state bucket count of the checkpoint from {record}: {exc}. "
                "Pass the count the state was written with as Application(state_buckets=...)"
            ) from exc
        return stored
    chosen = requested if requested is not None else default
    if stateful:
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"state_buckets": chosen}) + "\n", encoding="utf-8")
        logger.debug("A new checkpoint keeps its state in %d buckets (%s)", chosen, record)
    return chosen
