"""Topics: definitions, configuration, administration."""

from .admin import TopicAdmin
from .config import TopicConfig
from .exceptions import (
    CreateTopicFailure,
    CreateTopicTimeout,
    TopicConfigurationError,
    TopicConfigurationMismatch,
    TopicNameLengthExceeded,
    TopicNotFoundError,
    TopicPartitionsMismatch,
    TopicPermissionError,
)
from .manager import TopicManager
from .topic import KafkaMessage, Topic, TopicType
from .utils import merge_headers

__all__ = (
    "Topic",
    "TopicType",
    "TopicConfig",
    "TopicAdmin",
    "TopicManager",
    "KafkaMessage",
    "merge_headers",
    "TopicNotFoundError",
    "TopicConfigurationMismatch",
    "TopicConfigurationError",
    "TopicNameLengthExceeded",
    "TopicPermissionError",
    "TopicPartitionsMismatch",
    "CreateTopicFailure",
    "CreateTopicTimeout",
)
