"""Keeps track of the application's topics and creates/validates them on start."""

from __future__ import annotations

import itertools
import logging
from typing import Iterable, Literal, Optional, Sequence

from ..serializers import DeserializerType, SerializerType
from ..timestamps import TimestampExtractor
from .admin import TopicAdmin
from .config import TopicConfig
from .exceptions import TopicConfigurationMismatch, TopicNameLengthExceeded, TopicNotFoundError
from .topic import Topic, TopicType

__all__ = ("TopicManager", "TopicNotFoundError")

logger = logging.getLogger(__name__)


class TopicManager:
    """Registry of the topics an application uses; creates and checks them.

    A regular topic is looked up on the broker when it is defined (created when missing, with
    ``auto_create_topics``), as in the reference; :meth:`ensure_topics`, when the application
    starts, creates what is still missing (the internal topics, topics defined while no broker
    answered) and reads every topic's broker config.

    :param topic_admin: the admin client.
    :param consumer_group: the application's consumer group (part of internal topic names).
    :param timeout: response timeout of the broker calls (seconds).
    :param create_timeout: how long topic creation may take (seconds).
    :param auto_create_topics: create missing topics (else a missing topic is
        ``TopicNotFoundError``).

    >>> manager = TopicManager(TopicAdmin("127.0.0.1:9092"), consumer_group="g")  # doctest: +SKIP
    >>> manager.topic("readings").create_config.num_partitions  # doctest: +SKIP
    1
    """

    default_num_partitions: int = 1
    default_replication_factor: int = 1
    default_extra_config: dict[str, str] = {}

    #: the longest name a topic to create may have
    _max_topic_name_len = 255
    #: the broker settings kept in a topic's ``broker_config.extra_config``
    _extra_config_imports = {"retention.bytes", "retention.ms", "cleanup.policy"}

    def __init__(
        self,
        topic_admin: TopicAdmin,
        consumer_group: str,
        timeout: float = 30,
        create_timeout: float = 60,
        auto_create_topics: bool = True,
    ) -> None:
        self._admin = topic_admin
        self._consumer_group = consumer_group
        self._timeout = timeout
        self._create_timeout = create_timeout
        self._auto_create_topics = auto_create_topics
        #: whether a broker answered this manager's first lookup (None: not asked yet); once
        #: none did, topics are left to :meth:`ensure_topics` without asking again
        self._broker_answers: Optional[bool] = None
        self._regular_topics: dict[str, Topic] = {}
        self._repartition_topics: dict[str, Topic] = {}
        self._changelog_topics: dict[Optional[str], dict[str, Topic]] = {}

    @property
    def topics(self) -> dict[str, Topic]:
        """The regular topics (input and output), by name."""
        return self._regular_topics

    @property
    def repartition_topics(self) -> dict[str, Topic]:
        return self._repartition_topics

    @property
    def changelog_topics(self) -> dict[Optional[str], dict[str, Topic]]:
        """The changelog topics: ``{stream_id: {store_name: Topic}}``."""
        return self._changelog_topics

    @property
    def changelog_topics_list(self) -> list[Topic]:
        return list(itertools.chain.from_iterable(d.values() for d in self._changelog_topics.values()))

    @property
    def non_changelog_topics(self) -> dict[str, Topic]:
        """The regular and repartition topics, by name."""
        return {**self._regular_topics, **self._repartition_topics}

    @property
    def all_topics(self) -> dict[str, Topic]:
        """Every registered topic, by name."""
        return {**self.non_changelog_topics, **{t.name: t for t in self.changelog_topics_list}}

    def topic_config(
        self,
        num_partitions: Optional[int] = None,
        replication_factor: Optional[int] = None,
        extra_config: Optional[dict[str, str]] = None,
    ) -> TopicConfig:
        """A :class:`TopicConfig` with this manager's defaults for what is not given."""
        return TopicConfig(
            num_partitions=num_partitions or self.default_num_partitions,
            replication_factor=replication_factor or self.default_replication_factor,
            extra_config=extra_config or self.default_extra_config.copy(),
        )

    def topic(
        self,
        name: str,
        value_deserializer: Optional[DeserializerType] = "json",
        key_deserializer: Optional[DeserializerType] = "bytes",
        value_serializer: Optional[SerializerType] = "json",
        key_serializer: Optional[SerializerType] = "bytes",
        create_config: Optional[TopicConfig] = None,
        timestamp_extractor: Optional[TimestampExtractor] = None,
    ) -> Topic:
        """Define and register a regular topic (created with the default config unless
        ``create_config`` is given). As in the reference, the topic is looked up on the broker
        at once, created when missing (``auto_create_topics``), and its ``broker_config`` read;
        when no broker answers yet, that is left to :meth:`ensure_topics` (``app.run()``).

        :raises TopicNameLengthExceeded: ``auto_create_topics`` is on and the name is longer
            than a topic to create may be (255 characters).
        :raises TopicNotFoundError: the topic does not exist and ``auto_create_topics`` is off.
        """
        if self._auto_create_topics:
            self._validate_topic_name(name)
        topic = Topic(
            name=name,
            topic_type=TopicType.REGULAR,
            create_config=create_config,
            value_deserializer=value_deserializer,
            key_deserializer=key_deserializer,
            value_serializer=value_serializer,
            key_serializer=key_serializer,
            timestamp_extractor=timestamp_extractor,
        )
        return self.register(topic)

    def register(self, topic: Topic) -> Topic:
        """Register a topic as a regular one (a later definition of the same name replaces the
        earlier one); a topic without ``create_config`` gets the default one. The topic is
        looked up on the broker (and created) as :meth:`topic` does."""
        if topic.create_config is None:
            topic.create_config = self.topic_config()
        self._sync_with_broker(topic)
        self._regular_topics[topic.name] = topic
        return topic

    def _sync_with_broker(self, topic: Topic) -> None:
        """Look ``topic`` up on the broker, create it when missing (``auto_create_topics``)
        and read its broker config; nothing when no broker accepts a connection right away
        (:meth:`ensure_topics` does it then)."""
        from ...exceptions import BrokerUnreachableError

        if self._broker_answers is None:
            reachable = getattr(self._admin, "reachable", None)
            self._broker_answers = reachable is None or bool(reachable())
            if not self._broker_answers:
                logger.debug("No broker accepts a connection yet: topics are looked up when the application runs")
        if not self._broker_answers:
            return
        try:
            self._create_and_read(topic)
        except BrokerUnreachableError as exc:
            # asked once: a broker that does not answer would make each definition wait
            self._broker_answers = False
            logger.warning("Topics are looked up when the application runs: %s", exc)

    def _create_and_read(self, topic: Topic) -> None:
        """Look ``topic`` up on the broker, create it when missing (``auto_create_topics``)
        and read its broker config.

        :raises TopicNotFoundError: it is missing and ``auto_create_topics`` is off.
        :raises BrokerUnreachableError: the broker did not answer.
        """
        found = self._admin.inspect_topics([topic.name], timeout=self._timeout).get(topic.name)
        if found is None:
            if not self._auto_create_topics:
                raise _not_found(topic.name)
            self._validate_topic_name(topic.name)
            self._admin.create_topics([topic], timeout=self._timeout, finalize_timeout=self._create_timeout)
            found = self._admin.inspect_topics([topic.name], timeout=self._timeout).get(topic.name)
        if found is not None:
            self._set_broker_config(topic, found)

    def _set_broker_config(self, topic: Topic, config: TopicConfig) -> None:
        topic.broker_config = TopicConfig(
            num_partitions=config.num_partitions,
            replication_factor=config.replication_factor,
            extra_config={k: v for k, v in config.extra_config.items() if k in self._extra_config_imports},
        )

    def repartition_topic(
        self,
        operation: str,
        stream_id: str,
        config: TopicConfig,
        value_deserializer: Optional[DeserializerType] = "json",
        key_deserializer: Optional[DeserializerType] = "json",
        value_serializer: Optional[SerializerType] = "json",
        key_serializer: Optional[SerializerType] = "json",
    ) -> Topic:
        """Define and register an internal repartition topic,
        ``repartition__{consumer_group}--{stream_id}--{operation}``, created on the broker
        when missing and its broker config read (as the reference does).

        ``app.run()`` defines one for a ``group_by`` that re-keys through a topic (a
        ``group_by`` whose state all comes after it re-keys through Spark's shuffle, without
        one: ``engine/repartition.py``).
        """
        topic = Topic(
            name=self._internal_name("repartition", stream_id, operation),
            topic_type=TopicType.REPARTITION,
            create_config=config,
            value_deserializer=value_deserializer,
            key_deserializer=key_deserializer,
            value_serializer=value_serializer,
            key_serializer=key_serializer,
        )
        self._create_and_read(topic)
        self._repartition_topics[topic.name] = topic
        return topic

    def changelog_topic(self, stream_id: Optional[str], store_name: str, config: TopicConfig) -> Topic:
        """Define and register the compacted changelog topic of a store,
        ``changelog__{consumer_group}--{stream_id}--{store_name}``; :meth:`validate_all_topics`
        then checks that its partition count on the broker is ``config``'s.

        (streamspark keeps state in Spark's checkpointed state store and creates none.)
        """
        config.extra_config.update({"cleanup.policy": "compact"})
        topic = Topic(
            name=self._internal_name("changelog", stream_id, store_name),
            topic_type=TopicType.CHANGELOG,
            create_config=config,
            key_serializer="bytes",
            value_serializer="bytes",
            key_deserializer="bytes",
            value_deserializer="bytes",
        )
        self._changelog_topics.setdefault(stream_id, {})[store_name] = topic
        return topic

    @classmethod
    def derive_topic_config(cls, topics: Iterable[Topic]) -> TopicConfig:
        """The config of an internal topic fed by ``topics`` (their broker configs must be known):
        the most partitions and replicas, and the longest ``retention.ms``/``retention.bytes``
        (-1, unlimited, wins).

        :raises ValueError: no topic given.
        """
        topics = list(topics)
        if not topics:
            raise ValueError("At least one Topic must be passed")
        configs = [t.broker_config for t in topics]

        def longest(setting: str) -> str:
            values = [int(c.extra_config[setting]) for c in configs]
            return str(-1 if -1 in values else max(values))

        return TopicConfig(
            num_partitions=max(c.num_partitions for c in configs if c.num_partitions is not None),
            replication_factor=max(c.replication_factor for c in configs if c.replication_factor is not None),
            extra_config={"retention.bytes": longest("retention.bytes"), "retention.ms": longest("retention.ms")},
        )

    def stream_id_from_topics(self, topics: Sequence[Topic]) -> str:
        """The stream id of a dataframe over ``topics``: their names, sorted, joined with ``--``.

        :raises ValueError: no topic given.
        """
        if not topics:
            raise ValueError("At least one Topic must be passed")
        return "--".join(sorted(t.name for t in topics))

    def _internal_name(self, topic_type: Literal["changelog", "repartition"], topic_name: Optional[str], suffix: str) -> str:
        """``{type}__{consumer_group}--{name}--{suffix}``; an internal ``name`` is nested as
        ``{type}.{name}.{suffix}`` without the group."""
        parts = (
            [self._consumer_group, suffix]
            if topic_name is None
            else [self._consumer_group, self._nested_name(topic_name), suffix]
        )
        return f"{topic_type}__{'--'.join(parts)}"

    def _nested_name(self, topic_name: str) -> str:
        if f"__{self._consumer_group}--" in topic_name:
            return topic_name.replace(f"__{self._consumer_group}", "").replace("--", ".")
        return topic_name

    def _validate_topic_name(self, name: str) -> None:
        if len(name) > self._max_topic_name_len:
            raise TopicNameLengthExceeded(f"'{name}' exceeds the {self._max_topic_name_len} character limit")

    def create_all_topics(self) -> None:
        """Create every registered topic that does not exist yet.

        :raises TopicNameLengthExceeded: a name is longer than 255 characters.
        """
        topics = list(self.all_topics.values())
        for topic in topics:
            self._validate_topic_name(topic.name)
        self._admin.create_topics(topics, timeout=self._timeout, finalize_timeout=self._create_timeout)

    def validate_all_topics(self) -> None:
        """Read what the broker has for every registered topic into its ``broker_config``.

        :raises TopicNotFoundError: a topic does not exist.
        :raises TopicConfigurationMismatch: a changelog topic's partition count differs from
            its ``create_config``'s.
        """
        topics = self.all_topics
        found = self._admin.inspect_topics(list(topics), timeout=self._timeout)
        for name, config in found.items():
            if config is None:
                raise _not_found(name)
            topic = topics[name]
            self._set_broker_config(topic, config)
            expected = topic.create_config.num_partitions if topic.create_config is not None else None
            if topic.is_changelog and expected is not None and config.num_partitions != expected:
                raise TopicConfigurationMismatch(
                    f'Invalid partition count for the changelog topic "{name}": expected {expected}, got {config.num_partitions}'
                )

    def ensure_topics(self) -> None:
        """Create missing topics (when allowed) and validate all of them."""
        if self._auto_create_topics:
            self.create_all_topics()
        self.validate_all_topics()


def _not_found(name: str) -> TopicNotFoundError:
    return TopicNotFoundError(f'Topic "{name}" does not exist on the broker; create it or set auto_create_topics=True')
