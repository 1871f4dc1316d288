"""Message models: topics, serializers, timestamps, message context."""

from .messagecontext import MessageContext
from .serializers import *  # noqa: F403
from .serializers import __all__ as _serializers_all
from .timestamps import MessageTimestamp, TimestampType
from .topics import Topic, TopicAdmin, TopicConfig, TopicManager, TopicType
from .types import HeadersTuples, HeaderValue

__all__ = (
    "MessageContext",
    "MessageTimestamp",
    "TimestampType",
    "Topic",
    "TopicAdmin",
    "TopicConfig",
    "TopicManager",
    "TopicType",
    "HeadersTuples",
    "HeaderValue",
    *_serializers_all,
)
