"""Topics: definitions, configuration, administration."""

from .admin import CreateTopicFailure, CreateTopicTimeout, TopicAdmin
from .config import TopicConfig
from .manager import TopicManager, TopicNotFoundError
from .topic import KafkaMessage, Topic, TopicType

__all__ = (
    "Topic",
    "TopicType",
    "TopicConfig",
    "TopicAdmin",
    "TopicManager",
    "TopicNotFoundError",
    "KafkaMessage",
    "CreateTopicFailure",
    "CreateTopicTimeout",
)
