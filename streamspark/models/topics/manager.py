"""Keeps track of the application's topics and creates/validates them on start."""

from __future__ import annotations

import logging
from typing import Optional

from ...exceptions import StreamsparkException
from ..serializers import DeserializerType, SerializerType
from ..timestamps import TimestampExtractor
from .admin import TopicAdmin
from .config import TopicConfig
from .topic import Topic, TopicType

__all__ = ("TopicManager", "TopicNotFoundError")

logger = logging.getLogger("streamspark")


class TopicNotFoundError(StreamsparkException):
    """A topic does not exist and ``auto_create_topics`` is off."""


class TopicManager:
    """Registry of the topics an application uses.

    :param topic_admin: the admin client.
    :param consumer_group: the application's consumer group (prefix of internal topics).
    :param auto_create_topics: create missing topics when the application starts.
    """

    default_num_partitions: int = 1
    default_replication_factor: int = 1

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
        self._topics: dict[str, Topic] = {}

    @property
    def topics(self) -> dict[str, Topic]:
        return dict(self._topics)

    def topic_config(
        self,
        num_partitions: Optional[int] = None,
        replication_factor: Optional[int] = None,
        extra_config: Optional[dict[str, str]] = None,
    ) -> TopicConfig:
        return TopicConfig(
            num_partitions=num_partitions or self.default_num_partitions,
            replication_factor=replication_factor or self.default_replication_factor,
            extra_config=extra_config or {},
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
        """Define and register a topic."""
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
        """Register a topic (a later definition of the same name replaces the earlier one)."""
        if topic.create_config is None:
            topic.create_config = self.topic_config()
        self._topics[topic.name] = topic
        return topic

    def create_all_topics(self) -> None:
        self._admin.create_topics(self._topics.values(), timeout=self._timeout, finalize_timeout=self._create_timeout)

    def validate_all_topics(self) -> None:
        """Read what the broker has for every topic; raise if one is missing."""
        found = self._admin.inspect_topics(list(self._topics), timeout=self._timeout)
        for name, config in found.items():
            if config is None:
                raise TopicNotFoundError(
                    f'Topic "{name}" does not exist on the broker; create it or set auto_create_topics=True'
                )
            self._topics[name].broker_config = config

    def ensure_topics(self) -> None:
        """Create missing topics (when allowed) and validate all of them."""
        if self._auto_create_topics:
            self.create_all_topics()
        self.validate_all_topics()
