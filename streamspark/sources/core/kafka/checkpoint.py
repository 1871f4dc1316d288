"""The checkpoint of a :class:`~streamspark.sources.core.kafka.KafkaReplicatorSource`.

A checkpoint gathers the source-cluster offsets of the messages replicated since the last
commit. Committing it first delivers those messages to the application's cluster, then
commits the offsets there, in the consumer group ``source-<name>-offsets`` under the
destination topic's name (partition numbers are the same on both sides). Under exactly-once
the messages and the offsets are one Kafka transaction.

>>> checkpoint = Checkpoint(producer=None, producer_topic=None, consumer=None, commit_interval=5, commit_every=2)
>>> checkpoint.store_offset("orders", 0, 41); checkpoint.empty(), checkpoint.expired()
(False, False)
>>> checkpoint.store_offset("orders", 0, 42); checkpoint.expired()
True
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Optional

from confluent_kafka import KafkaException, TopicPartition

from ....exceptions import StreamsparkException
from ...base.exceptions import CheckpointProducerTimeout

if TYPE_CHECKING:
    from ....kafka.consumer import BaseConsumer
    from ....models.topics import Topic
    from ...base.producer import SourceProducer

__all__ = ("Checkpoint", "CheckpointConsumerCommitError")


class CheckpointConsumerCommitError(StreamsparkException):
    """The replicated offsets could not be committed on the application's cluster."""


class Checkpoint:
    """The replicated messages and their source offsets since the last commit.

    It expires ``commit_interval`` seconds after it was opened, or once it holds
    ``commit_every`` offsets (0: no count limit).

    :param producer: the source's producer (transactional under exactly-once).
    :param producer_topic: the destination topic on the application's cluster.
    :param consumer: a consumer of the application's cluster in the group the offsets are
        committed to (it does not subscribe).
    :param commit_interval: seconds after which the checkpoint expires.
    :param commit_every: offsets after which the checkpoint expires (0: none).
    :param flush_timeout: seconds to wait for delivery and for the commit.
    :param exactly_once: commit the offsets in the producer's transaction.
    """

    def __init__(
        self,
        producer: Optional["SourceProducer"],
        producer_topic: Optional["Topic"],
        consumer: Optional["BaseConsumer"],
        commit_interval: float,
        commit_every: int = 0,
        flush_timeout: float = 10,
        exactly_once: bool = False,
    ) -> None:
        self._producer = producer
        self._producer_topic = producer_topic
        self._consumer = consumer
        self._commit_interval = commit_interval
        self._commit_every = commit_every
        self._flush_timeout = flush_timeout
        self._exactly_once = exactly_once
        self._opened = time.monotonic()
        #: (source topic, partition) -> the last replicated offset
        self._tp_offsets: dict[tuple[str, int], int] = {}
        self._stored = 0

    def store_offset(self, topic: str, partition: int, offset: int) -> None:
        """Record that the message at ``offset`` of ``topic[partition]`` was replicated."""
        self._tp_offsets[(topic, partition)] = offset
        self._stored += 1

    def expired(self) -> bool:
        """True once ``commit_interval`` passed or ``commit_every`` offsets were stored."""
        if time.monotonic() - self._opened >= self._commit_interval:
            return True
        return bool(self._commit_every) and self._stored >= self._commit_every

    def empty(self) -> bool:
        """True when nothing was replicated since the checkpoint was opened."""
        return not self._tp_offsets

    def close(self) -> None:
        """End the checkpoint without committing: under exactly-once, abort the open
        transaction (Kafka transactions are time-boxed; a failed source's messages must not
        become visible)."""
        if self._exactly_once and self._producer is not None:
            self._producer.abort_transaction(self._flush_timeout)

    def commit(self) -> None:
        """Deliver the replicated messages, then commit the offsets after them.

        :raises CheckpointProducerTimeout: messages were still undelivered after ``flush_timeout``.
        :raises CheckpointConsumerCommitError: the offsets could not be committed.
        """
        producer, topic, consumer = self._producer, self._producer_topic, self._consumer
        if producer is None or topic is None or consumer is None:
            raise RuntimeError("This checkpoint has no producer, topic or consumer to commit with")
        remaining = producer.flush(self._flush_timeout)
        if remaining > 0:
            raise CheckpointProducerTimeout(
                f"{remaining} replicated message(s) were not delivered before the flush timeout ({self._flush_timeout}s)"
            )
        offsets = [
            TopicPartition(topic.name, partition, offset + 1) for (_, partition), offset in sorted(self._tp_offsets.items())
        ]
        self._tp_offsets = {}
        try:
            if self._exactly_once:
                producer.client.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), self._flush_timeout)
                producer.commit_transaction(self._flush_timeout)
            else:
                committed = consumer.commit(offsets=offsets, asynchronous=False) or []
                failed = [tp for tp in committed if tp.error is not None]
                if failed:
                    raise CheckpointConsumerCommitError(
                        f'Committing the offsets of topic "{topic.name}" failed: '
                        + ", ".join(f"partition {tp.partition}: {tp.error}" for tp in failed)
                    )
        except KafkaException as exc:
            raise CheckpointConsumerCommitError(
                f'Committing the offsets of topic "{topic.name}" failed: {_describe(exc)}'
            ) from None


def _describe(exc: KafkaException) -> Any:
    error = exc.args[0] if exc.args else exc
    return error.str() if hasattr(error, "str") else error
