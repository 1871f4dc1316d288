"""``KafkaReplicatorSource``: copy a topic of another Kafka cluster into the application's.

>>> from streamspark import Application
>>> app = Application(broker_address="127.0.0.1:9092", consumer_group="g")
>>> source = KafkaReplicatorSource("orders-eu", app.config, topic="orders", broker_address="10.0.0.5:9092")
>>> source.source_consumer_group, source.target_consumer_group, source.auto_offset_reset
('source-orders-eu', 'source-orders-eu-offsets', 'latest')
>>> sdf = app.dataframe(source=source)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Optional, Union

from confluent_kafka import OFFSET_INVALID, KafkaException, Message, TopicPartition

from ....error_callbacks import ConsumerErrorCallback, default_on_consumer_error
from ....exceptions import BrokerUnreachableError
from ....kafka.configuration import ConnectionConfig
from ....kafka.consumer import AutoOffsetReset, BaseConsumer, Consumer
from ....kafka.producer import broker_config
from ....models.serializers import DeserializerType
from ....models.topics import Topic, TopicAdmin, TopicConfig
from ...base.exceptions import SourceInputError
from ...base.producer import SourceProducer
from ...base.source import ClientConnectFailureCallback, ClientConnectSuccessCallback, Source
from .checkpoint import Checkpoint

if TYPE_CHECKING:
    from ....app import ApplicationConfig

__all__ = ("KafkaReplicatorSource",)

logger = logging.getLogger(__name__)

#: settings of the source topic its default destination topic takes over (besides partitions
#: and replication)
COPIED_TOPIC_SETTINGS = ("cleanup.policy", "retention.ms", "retention.bytes")


def _address(broker_address: Union[str, ConnectionConfig]) -> str:
    return broker_address.bootstrap_servers if isinstance(broker_address, ConnectionConfig) else broker_address


class KafkaReplicatorSource(Source):
    """Replicate a topic of another Kafka cluster into the application's cluster.

    Each message is copied as it is -- key, value, headers and timestamp as bytes -- to the
    same partition of the destination topic. The default destination topic, ``source__<name>``,
    is created with the source topic's partition count, replication factor and cleanup and
    retention settings; the dataframe deserializes it with ``value_deserializer`` and
    ``key_deserializer``.

    - **Offsets.** The source cluster's consumer group ``source-<name>`` only shares out the
      partitions: nothing is committed there. The replicated offsets are committed on the
      application's cluster, in the group ``source-<name>-offsets``, once the messages before
      them were delivered -- at the application's ``commit_interval``, or every
      ``commit_every`` messages. A restarted source resumes there; a partition without a
      committed offset starts at ``auto_offset_reset``.
    - **Exactly-once** (``processing_guarantee="exactly-once"`` on the application): the
      messages and their offsets are committed in one Kafka transaction, so a
      ``read_committed`` reader (the application's pipeline) sees each message once, even
      after a kill -9. The transactional id, ``streamspark-replicator-<name>`` unless
      ``transactional_id`` is given, is stable: a restarted source fences the one it replaces
      and aborts its open transaction. Give each instance its own ``transactional_id`` when
      several instances with the same name run under exactly-once.
    - **Several instances** with the same name share the source cluster's consumer group, so
      each replicates some of the partitions; on a rebalance, what was replicated from the
      revoked partitions is committed first.
    - **Errors.** A source topic that does not exist, or a source cluster that does not answer
      within the application's ``request_timeout``, stops the source at its start with
      :class:`~streamspark.sources.SourceInputError` naming the source, the topic and the
      cluster (and :meth:`default_topic`, called by ``app.dataframe(source=...)``, raises it
      for an unreachable cluster).

    :param name: the source's unique name: it names the default topic and the consumer groups.
    :param app_config: the application's configuration (``app.config``): its broker, consumer
        group, commit settings and processing guarantee.
    :param topic: the topic to replicate.
    :param broker_address: the source cluster: ``"host:port"`` or a ``ConnectionConfig``.
    :param auto_offset_reset: where a partition without a replicated offset starts:
        ``"earliest"``, ``"latest"`` (default) or ``"error"``; None: the application's setting.
    :param consumer_extra_config: more librdkafka settings for the source cluster's clients.
    :param consumer_poll_timeout: seconds a poll of the source cluster waits (None or 0: the
        application's ``consumer_poll_timeout``).
    :param shutdown_timeout: seconds the application waits for the source to stop.
    :param on_consumer_error: ``f(exc, message, logger) -> bool`` for a failed poll of the
        source cluster: True skips the error, otherwise the source stops with it.
    :param value_deserializer: the destination topic's value deserializer (default ``"json"``).
    :param key_deserializer: the destination topic's key deserializer (default ``"bytes"``).
    :param on_client_connect_success: called once the clients are set up and the topics checked.
    :param on_client_connect_failure: called with the exception when that failed; it must
        handle or re-raise it.
    :param transactional_id: the ``transactional.id`` under exactly-once (default
        ``streamspark-replicator-<name>``).
    """

    def __init__(
        self,
        name: str,
        app_config: "ApplicationConfig",
        topic: str,
        broker_address: Union[str, ConnectionConfig],
        auto_offset_reset: Optional[AutoOffsetReset] = "latest",
        consumer_extra_config: Optional[dict] = None,
        consumer_poll_timeout: Optional[float] = None,
        shutdown_timeout: float = 10,
        on_consumer_error: ConsumerErrorCallback = default_on_consumer_error,
        value_deserializer: DeserializerType = "json",
        key_deserializer: DeserializerType = "bytes",
        on_client_connect_success: Optional[ClientConnectSuccessCallback] = None,
        on_client_connect_failure: Optional[ClientConnectFailureCallback] = None,
        *,
        transactional_id: Optional[str] = None,
    ) -> None:
        super().__init__(
            name=name,
            shutdown_timeout=shutdown_timeout,
            on_client_connect_success=on_client_connect_success,
            on_client_connect_failure=on_client_connect_failure,
        )
        from ....app import ApplicationConfig  # the application layer, only where a replicator is built

        if not isinstance(app_config, ApplicationConfig):
            raise TypeError(f"app_config must be the application's configuration (app.config), got {app_config!r}")
        if not topic:
            raise ValueError("topic (the topic to replicate) must be a non-empty name")
        if not broker_address:
            raise ValueError("broker_address (the source cluster) is required")
        if auto_offset_reset is None:
            auto_offset_reset = app_config.auto_offset_reset
        if auto_offset_reset not in ("earliest", "latest", "error"):
            raise ValueError(f'auto_offset_reset must be "earliest", "latest", "error" or None, got {auto_offset_reset!r}')
        self.app_config = app_config
        self.topic = topic
        self.broker_address = broker_address
        self.auto_offset_reset: AutoOffsetReset = auto_offset_reset
        self.consumer_extra_config: dict[str, Any] = dict(consumer_extra_config or {})
        # as the reference: no (or a zero) timeout takes the application's
        self.consumer_poll_timeout: float = consumer_poll_timeout or app_config.consumer_poll_timeout
        self.value_deserializer = value_deserializer
        self.key_deserializer = key_deserializer
        self.transactional_id = transactional_id or f"streamspark-replicator-{name}"
        self._on_consumer_error = on_consumer_error
        self._checkpoint: Optional[Checkpoint] = None
        self._failed = False
        self._source_cluster_consumer: Optional[Consumer] = None
        self._target_cluster_consumer: Optional[BaseConsumer] = None

    # --- names and settings ------------------------------------------------------------
    @property
    def source_consumer_group(self) -> str:
        """The consumer group on the source cluster (it shares out the partitions)."""
        return f"source-{self.name}"

    @property
    def target_consumer_group(self) -> str:
        """The consumer group on the application's cluster holding the replicated offsets
        (after the application's ``consumer_group_prefix`` when it has one)."""
        group = f"source-{self.name}-offsets"
        prefix = self.app_config.consumer_group_prefix
        return f"{prefix}-{group}" if prefix else group

    @property
    def exactly_once(self) -> bool:
        return self.app_config.processing_guarantee == "exactly-once"

    @property
    def checkpoint(self) -> Checkpoint:
        """The open checkpoint (while the source runs)."""
        if self._checkpoint is None:
            raise RuntimeError(f'Source "{self.name}" is not running')
        return self._checkpoint

    def _source_admin(self) -> TopicAdmin:
        return TopicAdmin(self.broker_address, extra_config=self.consumer_extra_config)

    def _inspect_source_topic(self) -> Optional[TopicConfig]:
        """The source topic's configuration (None: it does not exist).

        :raises SourceInputError: the source cluster did not answer.
        """
        timeout = self.app_config.request_timeout
        try:
            return self._source_admin().inspect_topics([self.topic], timeout=timeout)[self.topic]
        except (BrokerUnreachableError, KafkaException) as exc:
            raise SourceInputError(
                self.name, self._where(), f"the source cluster did not answer within {timeout}s ({exc})"
            ) from exc

    def _where(self) -> str:
        return f'topic "{self.topic}" on the source cluster {_address(self.broker_address)}'

    # --- in the source's process -------------------------------------------------------
    def configure(self, topic: Topic, producer: SourceProducer, **kwargs: Any) -> None:
        """Under exactly-once, produce with a transactional producer of our own."""
        if self.exactly_once:
            config = {**broker_config(self.app_config.broker_address), **self.app_config.producer_extra_config}
            producer = SourceProducer(config, transactional_id=self.transactional_id, flush_timeout=self.app_config.flush_timeout)
        super().configure(topic=topic, producer=producer, **kwargs)

    def setup(self) -> None:
        """Check both topics, then subscribe to the source topic."""
        cfg = self.app_config
        logger.info(
            'Source "%s" replicates topic "%s" of %s (group "%s", auto_offset_reset=%s) into "%s" (offsets in group "%s", %s)',
            self.name,
            self.topic,
            _address(self.broker_address),
            self.source_consumer_group,
            self.auto_offset_reset,
            self.producer_topic.name,
            self.target_consumer_group,
            cfg.processing_guarantee,
        )
        if self.exactly_once:
            # fences the previous holder of the transactional id and ends its open transaction
            # before the committed offsets are read
            self.producer.client
        self._validate_topics()
        self._target_cluster_consumer = BaseConsumer(
            cfg.broker_address,
            self.target_consumer_group,
            cfg.auto_offset_reset,
            auto_commit_enable=False,
            extra_config=cfg.consumer_extra_config,
        )
        self._source_cluster_consumer = Consumer(
            self.broker_address,
            self.source_consumer_group,
            self.auto_offset_reset,
            auto_commit_enable=False,
            extra_config=self.consumer_extra_config,
        )
        self._source_cluster_consumer.subscribe(
            [self.topic],
            on_assign=self.on_assign,
            on_revoke=self.on_revoke,
            on_lost=self.on_lost,
        )

    def _validate_topics(self) -> None:
        source_config = self._inspect_source_topic()
        if source_config is None:
            raise SourceInputError(self.name, self._where(), "the topic does not exist")
        destination = self.producer_topic.name
        admin = TopicAdmin(self.app_config.broker_address, extra_config=self.app_config.consumer_extra_config)
        destination_config = admin.inspect_topics([destination], timeout=self.app_config.request_timeout)[destination]
        if destination_config is None:
            raise ValueError(f'Source "{self.name}": the destination topic "{destination}" does not exist')
        if source_config.num_partitions > destination_config.num_partitions:
            raise ValueError(
                f'Source "{self.name}": the source topic "{self.topic}" has {source_config.num_partitions} partitions, '
                f'more than the {destination_config.num_partitions} of the destination topic "{destination}"'
            )
        if source_config.num_partitions < destination_config.num_partitions:
            logger.warning(
                'Source "%s": the destination topic "%s" has more partitions than the source topic "%s"',
                self.name,
                destination,
                self.topic,
            )

    def run(self) -> None:
        """Replicate until stopped: each message to the same partition, committing at each
        checkpoint's expiry."""
        if self._source_cluster_consumer is None:
            raise RuntimeError(f'Source "{self.name}" has no consumer of the source cluster: its setup() failed')
        self._checkpoint = self._new_checkpoint()
        while self.running:
            self.producer.poll(0)
            message = self.poll_source()
            if message is not None:
                self.produce_message(message)
            self.commit_checkpoint()

    def poll_source(self) -> Optional[Message]:
        """One message of the source topic (None on timeout or a skipped error)."""
        assert self._source_cluster_consumer is not None
        try:
            message = self._source_cluster_consumer.poll(self.consumer_poll_timeout)
        except Exception as exc:
            if self._on_consumer_error(exc, None, logger):
                return None
            raise
        if message is None:
            return None
        error = message.error()
        if error is not None:
            failure = KafkaException(error)
            if self._on_consumer_error(failure, message, logger):
                return None
            raise failure
        return message

    def produce_message(self, message: Message) -> None:
        """Copy ``message`` to the same partition of the destination topic and record its offset."""
        partition, offset = message.partition(), message.offset()
        assert partition is not None and offset is not None
        self.checkpoint.store_offset(message.topic() or self.topic, partition, offset)
        _, timestamp = message.timestamp()
        headers = message.headers()  # a consumed message's headers are a list of (name, value)
        self.produce(
            value=message.value(),
            key=message.key(),
            headers=list(headers.items()) if isinstance(headers, dict) else headers,
            partition=partition,
            timestamp=timestamp if timestamp is not None and timestamp >= 0 else None,
        )

    def commit_checkpoint(self, force: bool = False) -> None:
        """Commit the checkpoint once it expired (or now, with ``force``), then open another.
        An empty checkpoint is closed instead."""
        checkpoint = self.checkpoint
        if not force and not checkpoint.expired():
            return
        if checkpoint.empty():
            checkpoint.close()
        else:
            started = time.monotonic()
            checkpoint.commit()
            logger.debug('Source "%s" committed a checkpoint in %.2fs', self.name, time.monotonic() - started)
        self._checkpoint = self._new_checkpoint()

    def _new_checkpoint(self) -> Checkpoint:
        return Checkpoint(
            producer=self.producer,
            producer_topic=self.producer_topic,
            consumer=self._target_cluster_consumer,
            commit_interval=self.app_config.commit_interval,
            commit_every=self.app_config.commit_every,
            flush_timeout=self.app_config.flush_timeout,
            exactly_once=self.exactly_once,
        )

    def on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Start each assigned partition after its last replicated offset (committed on the
        application's cluster), else at ``auto_offset_reset``."""
        assert self._target_cluster_consumer is not None and self._source_cluster_consumer is not None
        destination = self.producer_topic.name
        committed = self._target_cluster_consumer.committed(
            [TopicPartition(destination, p.partition) for p in partitions],
            timeout=self.app_config.request_timeout,
        )
        offsets = {tp.partition: tp.offset for tp in committed}
        for tp in partitions:
            offset = offsets.get(tp.partition, OFFSET_INVALID)
            tp.offset = offset if offset >= 0 else OFFSET_INVALID
            logger.info(
                'Source "%s" replicates %s[%d] from %s',
                self.name,
                tp.topic,
                tp.partition,
                f"offset {tp.offset}" if tp.offset >= 0 else f"auto_offset_reset={self.auto_offset_reset}",
            )
        self._source_cluster_consumer.assign(partitions)

    def on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Commit what was replicated before the partitions go (or drop it after a failure)."""
        if self._checkpoint is None:
            return
        if self._failed:
            self._checkpoint.close()
        else:
            self.commit_checkpoint(force=True)

    def on_lost(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        """Lost partitions: what was replicated from them is committed with the next checkpoint."""

    def cleanup(self, failed: bool) -> None:
        """Commit (or, after a failure, drop) the open checkpoint, then close the consumers."""
        self._failed = failed
        try:
            if self._checkpoint is not None:
                if failed:
                    self._checkpoint.close()
                else:
                    self.commit_checkpoint(force=True)
        finally:
            for consumer in (self._source_cluster_consumer, self._target_cluster_consumer):
                if consumer is not None:
                    consumer.close()

    # --- in the application's process --------------------------------------------------
    def default_topic(self) -> Topic:
        """``<name>`` (the application prefixes ``source__``), bytes in and out, deserialized
        with ``value_deserializer``/``key_deserializer``; created like the source topic.

        :raises SourceInputError: the source cluster did not answer.
        """
        source_config = self._inspect_source_topic()
        if source_config is None:
            logger.warning(
                'Source "%s": %s does not exist; the source will fail at its start unless it is created', self.name, self._where()
            )
            config = TopicConfig(num_partitions=1, replication_factor=1)
        else:
            config = TopicConfig(
                num_partitions=source_config.num_partitions,
                replication_factor=source_config.replication_factor,
                extra_config={k: v for k, v in source_config.extra_config.items() if k in COPIED_TOPIC_SETTINGS},
            )
        return Topic(
            name=self.name,
            key_serializer="bytes",
            value_serializer="bytes",
            key_deserializer=self.key_deserializer,
            value_deserializer=self.value_deserializer,
            create_config=config,
        )

    def __repr__(self) -> str:
        return self.name
