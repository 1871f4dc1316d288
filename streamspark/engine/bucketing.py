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

A bucket's rows are grouped by its *group key*: the bucket number itself, or, in a checkpoint
begun with its shuffle partitions known, a label (:func:`balanced_labels`) that Spark's hash
partitioning sends to partition ``bucket mod partitions``, so that every shuffle partition gets
the same number of buckets (Spark's hash of the plain numbers puts 64 buckets 28 and 36 on 2
partitions, and 32 buckets 5, 6, 7 and 14 on 4). Spark keys a bucket's state by its group key.

>>> [spark_partition_of(label, 4) for label in balanced_labels(8, 4)]
[0, 1, 2, 3, 0, 1, 2, 3]

A checkpoint's bucket count and placement are chosen once, by its first run
(:func:`checkpoint_state_layout`), and recorded in the checkpoint.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import zlib
from pathlib import Path
from typing import Any, NamedTuple, Optional, Sequence

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
    "balanced_labels",
    "bucket_of_group",
    "StateLayout",
    "checkpoint_state_layout",
)

logger = logging.getLogger(__name__)

#: buckets per shuffle partition of a new checkpoint on a local master. Each bucket a
#: micro-batch touches costs a call of Spark's Python state API whatever its records, which
#: favours few buckets; each moves its whole state blob, and large blobs cost more than their
#: size (measured with blobs stored uncompressed, on 2 cores, 1M keys of state: a 20k-record
#: micro-batch took 1.3-1.5 s in 16 buckets, 0.96-1.2 s in 32 or 64). On 2 cores a running
#: count at 5k msg/s (bench/user.py W5-stateful) had a median latency of 490-520 ms with 16
#: buckets, 370-680 ms with 32 and 460-980 ms with 64 (balanced, interleaved runs)
BUCKETS_PER_PARTITION = 16
#: the buckets of a checkpoint begun by an earlier version, which records none (this was its
#: default), and the default of a new one on a master whose shuffle partitions are the cluster's
LEGACY_STATE_BUCKETS = 64
#: the file in a checkpoint that records its state layout. Part of the checkpoint, as Spark's
#: own files are: without it the buckets' state would be looked for under other group keys
STATE_BUCKETS_FILE = "streamspark-state.json"

#: the first end bucket number: above any ``state_buckets`` a run may have
END_BUCKET_BASE = 1 << 40

_M32 = 0xFFFFFFFF


def bucket_of_key(key: Optional[bytes], buckets: int) -> int:
    """The state bucket of a message key: ``crc32(key) mod buckets``, 0 for no key; the same
    number as :func:`key_bucket_column` computes in Spark."""
    return zlib.crc32(key) % buckets if key is not None else 0


def bucket_of_partition(topic: Optional[str], partition: int, buckets: int) -> int:
    """The state bucket of a whole Kafka partition (windows closing by partition): the same
    number as :func:`partition_bucket_column` computes in Spark. With ``topic`` None, the
    bucket of the partition number whatever the topic (a plan with a repartition topic, whose
    topics are co-partitioned: a key's records of every topic share a bucket).

    >>> bucket_of_partition(None, 5, 4), bucket_of_partition(None, 5, 64)
    (1, 5)
    """
    if topic is None:
        return partition % buckets
    return zlib.crc32(f"{topic}:{partition}".encode()) % buckets


def key_bucket_column(buckets: int, key: str = "key", labels: Sequence[int] = ()) -> Any:
    """Spark's form of :func:`bucket_of_key` over the binary column ``key``; with ``labels``,
    the bucket's group key (its label: see :func:`balanced_labels`)."""
    from pyspark.sql import functions as F

    return _labelled(F.coalesce(F.pmod(F.crc32(F.col(key)), F.lit(buckets)), F.lit(0)), labels)


def partition_bucket_column(buckets: int, labels: Sequence[int] = (), by_number: bool = False) -> Any:
    """Spark's form of :func:`bucket_of_partition` over the ``topic`` and ``partition``
    columns (``by_number``: the partition number alone, as with ``topic`` None); with
    ``labels``, the bucket's group key."""
    from pyspark.sql import functions as F

    if by_number:
        bucket = F.pmod(F.col("partition"), F.lit(buckets))
    else:
        bucket = F.pmod(F.crc32(F.concat_ws(":", F.col("topic"), F.col("partition").cast("string"))), F.lit(buckets))
    return _labelled(bucket, labels)


def _labelled(bucket: Any, labels: Sequence[int]) -> Any:
    """The Spark column of ``labels[bucket]`` (``bucket`` itself without labels)."""
    from pyspark.sql import functions as F

    if not labels:
        return bucket
    return F.element_at(F.array(*(F.lit(label).cast("bigint") for label in labels)), (bucket + 1).cast("int"))


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
    return _fmix(_mix_h1(_mix_h1(seed, _mix_k1(value & _M32)), _mix_k1(value >> 32)), 8)


def _spark_hash_int(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` of an int (a 32-bit column), as a signed int."""
    return _fmix(_mix_h1(seed, _mix_k1(value & _M32)), 4)


def _fmix(h1: int, length: int) -> int:
    h1 ^= length
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _M32
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _M32
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def spark_partition_of(bucket: int, partitions: int, int_key: bool = False) -> int:
    """The shuffle partition Spark sends the rows of ``bucket`` (a bigint group key, or an int
    one with ``int_key``) to: ``pmod(hash(bucket), partitions)``, Spark's hash partitioning.

    >>> spark_partition_of(1, 7), spark_partition_of(1, 7, int_key=True)
    (5, 2)
    """
    return (_spark_hash_int(bucket) if int_key else _spark_hash_long(bucket)) % partitions


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
    """The buckets a new checkpoint gets without ``state_buckets``:
    :data:`BUCKETS_PER_PARTITION` per shuffle partition of the session (``Application.run``
    passes them on a local master), else :data:`LEGACY_STATE_BUCKETS`.

    >>> default_state_buckets(2), default_state_buckets(None)
    (32, 64)
    """
    if shuffle_partitions is None:
        return LEGACY_STATE_BUCKETS
    return BUCKETS_PER_PARTITION * max(1, shuffle_partitions)


def balanced_labels(buckets: int, partitions: int, int_keys: bool = False) -> tuple[int, ...]:
    """Group keys for buckets ``0 .. buckets-1`` that Spark's hash partitioning spreads evenly
    over ``partitions``: the key of bucket ``i`` is the smallest unused number from 0 up that
    Spark sends to partition ``i mod partitions``. Spark hashes a bigint key (a pipeline
    without a group_by) and an int key (after a group_by) differently: ``int_keys`` for the latter.

    >>> labels = balanced_labels(4, 2)
    >>> labels, [spark_partition_of(b, 2) for b in labels], [spark_partition_of(b, 2) for b in range(4)]
    ((2, 0, 4, 1), [0, 1, 0, 1], [1, 1, 0, 1])
    >>> balanced_labels(3, 1)
    (0, 1, 2)
    """
    if partitions <= 1:
        return tuple(range(buckets))
    free: list[list[int]] = [[] for _ in range(partitions)]
    labels = []
    candidate = 0
    for bucket in range(buckets):
        pool = free[bucket % partitions]
        while not pool:
            free[spark_partition_of(candidate, partitions, int_keys)].append(candidate)
            candidate += 1
        labels.append(pool.pop(0))
    return tuple(labels)


@functools.lru_cache(maxsize=8)
def _bucket_by_label(labels: tuple[int, ...]) -> dict[int, int]:
    return {label: bucket for bucket, label in enumerate(labels)}


def bucket_of_group(group: int, labels: tuple[int, ...]) -> int:
    """The bucket number of a state group key: its index in ``labels``, the key itself without labels.

    >>> bucket_of_group(4, (2, 0, 4, 1)), bucket_of_group(5, ())
    (2, 5)
    """
    if not labels:
        return group
    bucket = _bucket_by_label(labels).get(group)
    if bucket is None:
        raise StateError(
            f"State group key {group} is none of the {len(labels)} bucket labels of the checkpoint's state "
            f"layout ({STATE_BUCKETS_FILE}): restore the checkpoint's own file, or clear the state"
        )
    return bucket


class StateLayout(NamedTuple):
    """How a checkpoint keeps its state: the bucket count, each bucket's group key (empty:
    the bucket number, as checkpoints without a record of their shuffle partitions do), and
    whether a bucket holds whole Kafka partitions (:func:`bucket_of_partition` of the number
    alone) instead of the message keys :func:`bucket_of_key` gives it."""

    buckets: int
    labels: tuple[int, ...] = ()
    by_partition: bool = False


def checkpoint_state_layout(
    checkpoint_dir: Path,
    requested: Optional[int],
    default: int,
    partitions: Optional[int],
    int_keys: bool = False,
    by_partition: bool = False,
) -> StateLayout:
    """The state layout of a run on the checkpoint in ``checkpoint_dir``.

    A new checkpoint (no micro-batch planned in its offset log yet) gets ``requested`` (the
    application's ``state_buckets``) or ``default`` buckets, placed evenly over ``partitions``
    shuffle partitions when known (``int_keys``: see :func:`balanced_labels`), and records
    them, labels included (:data:`STATE_BUCKETS_FILE`), bucketing state by partition number
    with ``by_partition``. A checkpoint with micro-batches keeps its recorded layout (by key
    when the record does not say); a different ``requested`` count is refused with :class:`StateError`
    (the count also numbers a run's exactly-once marker slots, stateless runs included). A
    checkpoint without a record (begun by an earlier version) keeps the bucket numbers as group
    keys, and ``requested`` or :data:`LEGACY_STATE_BUCKETS` buckets; a different count than its
    state was written with is refused when the state is read.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "checkpoint"
    >>> checkpoint_state_layout(folder, None, 4, 2)
    StateLayout(buckets=4, labels=(2, 0, 4, 1), by_partition=False)
    >>> (folder / "offsets").mkdir(); (folder / "offsets" / "0").touch()
    >>> checkpoint_state_layout(folder, None, 32, 8)
    StateLayout(buckets=4, labels=(2, 0, 4, 1), by_partition=False)
    >>> legacy = Path(tempfile.mkdtemp()); (legacy / "offsets").mkdir(); (legacy / "offsets" / "0").touch()
    >>> checkpoint_state_layout(legacy, None, 16, 2)
    StateLayout(buckets=64, labels=(), by_partition=False)
    >>> partitioned = Path(tempfile.mkdtemp())
    >>> checkpoint_state_layout(partitioned, None, 4, 2, by_partition=True).by_partition
    True
    """
    record = checkpoint_dir / STATE_BUCKETS_FILE
    if not _begun(checkpoint_dir):
        chosen = requested if requested is not None else default
        layout = StateLayout(chosen, balanced_labels(chosen, partitions, int_keys) if partitions else (), by_partition)
        _write_record(record, layout, partitions)
        return layout
    if not record.exists():
        return StateLayout(requested if requested is not None else LEGACY_STATE_BUCKETS)
    layout = _read_record(record)
    if requested is not None and requested != layout.buckets:
        raise StateError(
            f"The checkpoint's state was written with state_buckets={layout.buckets}, the application "
            f"now uses {requested}; keep the old value or clear the state (Application.clear_state())"
        )
    return layout


def _begun(checkpoint_dir: Path) -> bool:
    """True once Spark planned a micro-batch in the checkpoint (a replay of it must number its
    buckets and exactly-once slots as the first attempt did)."""
    for log in ("offsets", "commits"):
        folder = checkpoint_dir / log
        if folder.is_dir() and any(name.isdigit() for name in os.listdir(folder)):
            return True
    return False


def _write_record(record: Path, layout: StateLayout, partitions: Optional[int]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(
        {
            "state_buckets": layout.buckets,
            "shuffle_partitions": partitions,
            "labels": list(layout.labels),
            "bucket_by": "partition_number" if layout.by_partition else "key",
        }
    )
    partial = record.with_name(record.name + ".tmp")
    with open(partial, "w", encoding="utf-8") as out:
        out.write(text + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, record)
    logger.debug(
        "State layout: %d buckets over %s shuffle partitions, by %s (%s)",
        layout.buckets,
        partitions,
        "partition" if layout.by_partition else "key",
        record,
    )


def _read_record(record: Path) -> StateLayout:
    """The layout a record holds, checked."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        stored, labels, bucket_by = data["state_buckets"], data.get("labels", []), data.get("bucket_by", "key")
        if not _is_int(stored, least=1):
            raise ValueError(f"not a bucket count: {stored!r}")
        if not isinstance(labels, list) or not all(_is_int(label, least=0) for label in labels):
            raise ValueError(f"not a list of group keys: {labels!r}")
        if labels and (len(labels) != stored or len(set(labels)) != stored or max(labels) >= END_BUCKET_BASE):
            raise ValueError(f"{len(labels)} group keys for {stored} buckets")
        if bucket_by not in ("key", "partition_number"):
            raise ValueError(f"not a way to bucket state: {bucket_by!r}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StateError(
            f"Cannot read the state layout of the checkpoint from {record}: {exc}. The file is part of the "
            "checkpoint: restore it from a copy of the checkpoint, or clear the state (Application.clear_state())"
        ) from exc
    return StateLayout(stored, tuple(labels), bucket_by == "partition_number")


def _is_int(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least
