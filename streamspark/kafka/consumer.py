"""Kafka consumer wrappers: the committed offset is the *next* offset to read.

>>> consumer = BaseConsumer("127.0.0.1:9092", "group", "earliest")  # no connection yet
>>> consumer.close()
>>> consumer.poll(0)
Traceback (most recent call last):
...
RuntimeError: The consumer is closed
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Literal, Optional, Union

import confluent_kafka
from confluent_kafka import KafkaError, Message, TopicPartition

from ..exceptions import PartitionAssignmentError, QuixException
from .configuration import ConnectionConfig
from .exceptions import KafkaConsumerException
from .producer import broker_config

__all__ = ("BaseConsumer", "Consumer", "AutoOffsetReset", "RebalancingCallback", "raise_for_msg_error")

logger = logging.getLogger(__name__)

#: Where a consumer group without a committed offset starts: ``"error"`` raises instead.
AutoOffsetReset = Literal["earliest", "latest", "error"]
#: ``callback(consumer, partitions)``, called from ``poll()`` on a rebalance.
RebalancingCallback = Callable[[confluent_kafka.Consumer, list[TopicPartition]], None]


def _default_error_cb(error: KafkaError) -> None:
    """Log a client-level error (librdkafka retries most of them by itself)."""
    logger.error('Kafka consumer error: %s (code="%s")', error.str(), error.name())


def _assignment_errors(callback: RebalancingCallback) -> RebalancingCallback:
    """``callback`` raising :class:`PartitionAssignmentError` (from its own exception) instead
    of whatever else it raises, as the reference's rebalance callbacks do; ``poll()`` raises it."""

    @functools.wraps(callback)
    def wrapper(consumer: confluent_kafka.Consumer, partitions: list[TopicPartition]) -> None:
        try:
            callback(consumer, partitions)
        except QuixException:
            raise
        except Exception as exc:
            raise PartitionAssignmentError("Error during partition assignment") from exc

    return wrapper


def raise_for_msg_error(msg: Message) -> Message:
    """``msg`` itself, or :class:`KafkaConsumerException` when it carries an error.

    :raises KafkaConsumerException: ``msg.error()`` is set.
    """
    if msg.error():
        raise KafkaConsumerException(error=msg.error())
    return msg


def _timeout(timeout: Optional[float]) -> float:
    return -1 if timeout is None else timeout


class BaseConsumer:
    """A confluent-kafka consumer, created on first use (no network call before that).

    Offsets are not stored automatically (``enable.auto.offset.store=False``, unless
    ``extra_config`` sets it): call :meth:`store_offsets` after processing a message; with
    ``auto_commit_enable`` the stored offsets are committed periodically, else :meth:`commit` them.

    :param broker_address: ``"host:port"`` or a :class:`ConnectionConfig`.
    :param consumer_group: the ``group.id`` (None: ``"streamspark-default"``).
    :param auto_offset_reset: ``"earliest"``, ``"latest"`` or ``"error"``.
    :param auto_commit_enable: commit the stored offsets periodically.
    :param logger: the logger librdkafka's log lines go to.
    :param error_callback: called with client-level errors (default: log them).
    :param on_commit: ``callback(error, partitions)`` with the result of each commit.
    :param extra_config: more librdkafka settings; the arguments above win over them
        (``partition.assignment.strategy`` defaults to ``"range"``, ``enable.auto.offset.store``
        to False).
    """

    def __init__(
        self,
        broker_address: Union[str, ConnectionConfig],
        consumer_group: Optional[str],
        auto_offset_reset: AutoOffsetReset,
        auto_commit_enable: bool = True,
        logger: logging.Logger = logger,
        error_callback: Callable[[KafkaError], None] = _default_error_cb,
        on_commit: Optional[Callable[[Optional[KafkaError], list[TopicPartition]], None]] = None,
        extra_config: Optional[dict[str, Any]] = None,
    ) -> None:
        config: dict[str, Any] = {
            "partition.assignment.strategy": "range",  # co-partitioned topics get the same partitions
            # offsets are stored by store_offsets() unless extra_config asks librdkafka to
            "enable.auto.offset.store": False,
            **(extra_config or {}),
            **broker_config(broker_address),
            "group.id": consumer_group or "streamspark-default",
            "auto.offset.reset": auto_offset_reset,
            "enable.auto.commit": auto_commit_enable,
        }
        if error_callback is not None:
            config["error_cb"] = error_callback
        if on_commit is not None:
            config["on_commit"] = on_commit
        self._config = config
        self._logger = logger
        self._inner: Optional[confluent_kafka.Consumer] = None
        self._closed = False

    @property
    def _consumer(self) -> confluent_kafka.Consumer:
        if self._closed:
            raise RuntimeError("The consumer is closed")
        if self._inner is None:
            self._inner = confluent_kafka.Consumer(self._config, logger=self._logger)
        return self._inner

    def poll(self, timeout: Optional[float] = None) -> Optional[Message]:
        """One message, an error event in a message (check ``message.error()``), or None on timeout.

        Rebalance callbacks run inside this call. ``timeout``: seconds, None or -1 for no limit.
        """
        return self._consumer.poll(_timeout(timeout))

    def consume(self, num_messages: int = 1, timeout: Optional[float] = None) -> list[Message]:
        """Up to ``num_messages`` messages (fewer, or none, on timeout)."""
        return self._consumer.consume(num_messages, _timeout(timeout))

    def unsubscribe(self) -> None:
        """Drop the current subscription."""
        self._consumer.unsubscribe()

    def store_offsets(self, message: Optional[Message] = None, offsets: Optional[list[TopicPartition]] = None) -> None:
        """Store the offset after ``message``, or the given ``offsets``, for the next commit.

        :raises ValueError: both ``message`` and ``offsets`` are given.
        """
        if message is not None and offsets is not None:
            raise ValueError('Parameters "message" and "offsets" are mutually exclusive')
        if message is not None:
            self._consumer.store_offsets(message=message)
        else:
            self._consumer.store_offsets(offsets=offsets)

    def commit(
        self,
        message: Optional[Message] = None,
        offsets: Optional[list[TopicPartition]] = None,
        asynchronous: bool = True,
    ) -> Optional[list[TopicPartition]]:
        """Commit the offset after ``message``, the given ``offsets`` (each the *next* offset to
        read), or else the stored offsets. Synchronously, it returns the committed offsets."""
        kwargs: dict[str, Any] = {"asynchronous": asynchronous}
        if message is not None:
            kwargs["message"] = message
        if offsets is not None:
            kwargs["offsets"] = offsets
        return self._consumer.commit(**kwargs)

    def committed(self, partitions: list[TopicPartition], timeout: Optional[float] = None) -> list[TopicPartition]:
        """The committed offsets of ``partitions``."""
        return self._consumer.committed(partitions, timeout=_timeout(timeout))

    def get_watermark_offsets(
        self, partition: TopicPartition, timeout: Optional[float] = None, cached: bool = False
    ) -> tuple[int, int]:
        """``(low, high)`` offsets of ``partition``; high is the last offset + 1."""
        return self._consumer.get_watermark_offsets(partition, timeout=_timeout(timeout), cached=cached)

    def list_topics(self, topic: Optional[str] = None, timeout: Optional[float] = None) -> Any:
        """Cluster metadata (of ``topic`` only, when given)."""
        return self._consumer.list_topics(topic, timeout=_timeout(timeout))

    def memberid(self) -> Optional[str]:
        """This client's member id in the group (None before it joined)."""
        return self._consumer.memberid()

    def offsets_for_times(self, partitions: list[TopicPartition], timeout: Optional[float] = None) -> list[TopicPartition]:
        """For each partition (its ``offset`` holding a timestamp in ms), the earliest offset
        whose timestamp is at or after it (-1 past the end)."""
        return self._consumer.offsets_for_times(partitions, timeout=_timeout(timeout))

    def pause(self, partitions: list[TopicPartition]) -> None:
        """Stop fetching from ``partitions`` (they stay in :meth:`assignment`)."""
        self._consumer.pause(partitions)

    def resume(self, partitions: list[TopicPartition]) -> None:
        """Fetch from paused ``partitions`` again."""
        self._consumer.resume(partitions)

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """The current position (last consumed offset + 1) of each partition."""
        return self._consumer.position(partitions)

    def seek(self, partition: TopicPartition) -> None:
        """Move an assigned partition to ``partition.offset``."""
        self._consumer.seek(partition)

    def assignment(self) -> list[TopicPartition]:
        """The partitions currently assigned."""
        return self._consumer.assignment()

    def set_sasl_credentials(self, username: str, password: str) -> None:
        """Use these SASL PLAIN/SCRAM credentials from the next authentication on."""
        self._consumer.set_sasl_credentials(username, password)

    def incremental_assign(self, partitions: list[TopicPartition]) -> None:
        """Add ``partitions`` to the assignment."""
        self._consumer.incremental_assign(partitions)

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Replace the assignment with ``partitions`` and start consuming them."""
        self._consumer.assign(partitions)

    def incremental_unassign(self, partitions: list[TopicPartition]) -> None:
        """Remove ``partitions`` from the assignment."""
        self._consumer.incremental_unassign(partitions)

    def unassign(self) -> None:
        """Drop the whole assignment."""
        self._consumer.unassign()

    def close(self) -> None:
        """Leave the group and release the client (commits first when auto-commit is on)."""
        self._closed = True
        if self._inner is not None:
            self._inner.close()
            self._inner = None

    def consumer_group_metadata(self) -> Any:
        """The group metadata a transactional producer sends its offsets with."""
        return self._consumer.consumer_group_metadata()


class Consumer(BaseConsumer):
    """A :class:`BaseConsumer` that subscribes to topics; usable as a context manager (closed on exit).

    >>> with Consumer("127.0.0.1:9092", "group", "earliest") as consumer:  # doctest: +SKIP
    ...     consumer.subscribe(["topic"])
    ...     message = consumer.poll(1.0)
    """

    def subscribe(
        self,
        topics: list[str],
        on_assign: Optional[RebalancingCallback] = None,
        on_revoke: Optional[RebalancingCallback] = None,
        on_lost: Optional[RebalancingCallback] = None,
    ) -> None:
        """Subscribe to ``topics``; the callbacks run inside :meth:`poll` on a rebalance.

        :raises TypeError: ``topics`` is a single string instead of a list of names.
        """
        if isinstance(topics, (str, bytes)):
            raise TypeError(f"subscribe() takes a list of topic names, got the string {topics!r}")
        kwargs: dict[str, Any] = {}
        for name, callback in (("on_assign", on_assign), ("on_revoke", on_revoke), ("on_lost", on_lost)):
            if callback is not None:
                kwargs[name] = _assignment_errors(callback)
        self._consumer.subscribe(list(topics), **kwargs)

    def __enter__(self) -> "Consumer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
