"""Exactly-once Kafka outputs: one Kafka transaction per unit of work, fenced and deduplicated.

A *unit* is one Spark task of a stateless (or pre-shuffle) stage, or one key bucket of the
stateful stage. Each unit writes its outputs in a Kafka transaction whose ``transactional.id``
is stable for its slot, so a replacement fences a crashed predecessor. With the outputs the
transaction commits a *marker*: the consumer-group offset ``batch_id + 1`` of the unit's slot
(a partition of the internal marker topic), via ``send_offsets_to_transaction``. When Spark
replays a micro-batch after a crash, a unit whose marker already says "done" still runs (so
state is rebuilt exactly once from Spark's previous state version) but produces nothing.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from ._producers import DeliveryReports, new_task_producer
from .task_identity import current_task

__all__ = ("EosConfig", "TransactionUnit", "marker_topic_name", "marker_slots", "checkpoint_identity", "CHECKPOINT_ID_FILE")

logger = logging.getLogger(__name__)

# Per Python worker process: the transactional producer of each transactional.id with the Spark
# task attempt that created it (and its delivery reports), and one marker consumer per group.
_producers: dict[str, tuple[int, Any, DeliveryReports]] = {}
_consumers: dict[str, Any] = {}


def marker_topic_name(consumer_group: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in consumer_group)
    return f"__streamspark-eos--{safe}"[:249]


#: the file in a Spark checkpoint folder that names the checkpoint for the exactly-once markers
CHECKPOINT_ID_FILE = "streamspark-eos-id"


def checkpoint_identity(checkpoint_dir: Path) -> str:
    """The identity of the checkpoint in ``checkpoint_dir`` for the exactly-once markers, made
    (and written into the folder) on its first exactly-once run.

    A marker says "the outputs of micro-batch N were committed". Batch ids start again at 0 when
    the checkpoint is deleted (``clear_state()``) or another ``state_dir`` is used under the
    same consumer group, so markers of an earlier checkpoint must not count: each checkpoint
    gets its own. A checkpoint that already has micro-batches but no identity file was started
    by an earlier version, whose markers are in the group without an identity (``""``).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "checkpoint"
    >>> first = checkpoint_identity(folder)
    >>> len(first), checkpoint_identity(folder) == first
    (16, True)
    >>> legacy = Path(tempfile.mkdtemp()); (legacy / "commits").mkdir(); (legacy / "commits" / "0").touch()
    >>> checkpoint_identity(legacy)
    ''
    """
    path = checkpoint_dir / CHECKPOINT_ID_FILE
    if path.exists():
        return path.read_text().strip()
    commits = checkpoint_dir / "commits"
    identity = "" if commits.is_dir() and any(commits.iterdir()) else uuid.uuid4().hex[:16]
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(identity + "\n")
    return identity


def marker_slots(buckets: int, input_partitions: int) -> int:
    """Partitions of the marker topic: one per key bucket plus room for every task split."""
    return buckets + max(64, input_partitions * 8)


class EosConfig:
    """What the workers need for exactly-once (picklable)."""

    def __init__(
        self,
        consumer_group: str,
        marker_topic: str,
        buckets: int,
        slots: int,
        transaction_timeout_ms: int = 300_000,
        checkpoint_id: str = "",
    ) -> None:
        """:param checkpoint_id: the identity of the Spark checkpoint the markers belong to
        (:func:`checkpoint_identity`): micro-batch ids start again at 0 in a new checkpoint, so
        its markers live in a consumer group of their own. Empty: the group of checkpoints
        started before checkpoints had an identity."""
        self.consumer_group = consumer_group
        self.marker_group = f"{consumer_group}--eos" + (f"--{checkpoint_id}" if checkpoint_id else "")
        self.marker_topic = marker_topic
        self.buckets = buckets
        self.slots = slots
        self.transaction_timeout_ms = transaction_timeout_ms

    def task_slot(self, spark_partition: int) -> int:
        slot = self.buckets + spark_partition
        if slot >= self.slots:
            raise RuntimeError(
                f"Spark partition {spark_partition} has no exactly-once marker slot ({self.slots} slots); "
                "restart the application so the marker topic is resized"
            )
        return slot


class TransactionUnit:
    """The transaction of one unit of work (see the module docstring)."""

    def __init__(self, eos: EosConfig, base_config: dict[str, Any], transactional_id: str, slot: int, batch_id: int) -> None:
        from confluent_kafka import Consumer, TopicPartition

        self.eos = eos
        self.slot = slot
        self.batch_id = batch_id
        self.begun = False
        consumer = _consumers.get(eos.marker_group)
        if consumer is None:
            consumer = _consumers[eos.marker_group] = Consumer(
                {**base_config, "group.id": eos.marker_group, "enable.auto.commit": False}
            )
        self._consumer = consumer
        committed = consumer.committed([TopicPartition(eos.marker_topic, slot)], timeout=30)[0].offset
        #: True when this unit's outputs of this batch were already committed by an earlier attempt
        self.done = committed is not None and committed >= batch_id + 1
        if self.done:
            logger.info("Batch %d, slot %d: outputs already committed before a restart; not producing again", batch_id, slot)
        # A new task attempt gets a new producer: its init_transactions() fences every earlier
        # holder of this transactional.id (another worker process may have had this slot in an
        # earlier micro-batch), so a cached producer is only reused within one task attempt.
        attempt = task.attempt if (task := current_task()) is not None else -1
        cached = _producers.get(transactional_id)
        if cached is None or cached[0] != attempt:
            producer, reports = new_task_producer(
                {
                    **base_config,
                    "transactional.id": transactional_id,
                    "transaction.timeout.ms": eos.transaction_timeout_ms,
                }
            )
            producer.init_transactions(60)  # fences a crashed predecessor with the same id
            cached = _producers[transactional_id] = (attempt, producer, reports)
        self.producer = cached[1]
        #: failed deliveries of this unit's producer (see ``_producers``)
        self.reports: DeliveryReports = cached[2]

    def begin(self) -> None:
        if not self.begun:
            self.producer.begin_transaction()
            self.begun = True

    def commit(self) -> None:
        """Commit the outputs together with this unit's marker."""
        from confluent_kafka import TopicPartition

        if not self.begun:
            return
        marker = [TopicPartition(self.eos.marker_topic, self.slot, self.batch_id + 1)]
        self.producer.send_offsets_to_transaction(marker, self._consumer.consumer_group_metadata(), 60)
        self.producer.commit_transaction(120)
        self.begun = False

    def abort(self) -> None:
        if self.begun:
            try:
                self.producer.abort_transaction(60)
            except Exception as exc:  # the next init/begin fences or aborts it anyway
                logger.warning("Could not abort a Kafka transaction: %s", exc)
            self.begun = False
