"""Message models: topics, serializers, timestamps, message context."""

from typing import Any

from .messagecontext import MessageContext
from .rows import Row
from .serializers import *  # noqa: F403
from .serializers import __all__ as _serializers_all
from .timestamps import MessageTimestamp, TimestampExtractor, TimestampType
from .topics import Topic, TopicAdmin, TopicConfig, TopicManager, TopicType
from .types import (
    Headers,
    HeadersMapping,
    HeadersTuple,
    HeadersTuples,
    HeadersValue,
    HeaderValue,
    KafkaHeaders,
    MessageKey,
    MessageValue,
)

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
    "Headers",
    "HeadersMapping",
    "HeadersTuple",
    "HeadersValue",
    "KafkaHeaders",
    "MessageKey",
    "MessageValue",
    "Row",
    "TimestampExtractor",
    *_serializers_all,
)


def __getattr__(name: str) -> Any:
    """The Schema Registry settings, loaded on first use (see ``serializers.LAZY_NAMES``)."""
    from . import serializers

    if name not in serializers.LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(serializers, name)
