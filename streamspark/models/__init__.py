"""Message models: topics, serializers, timestamps, message context."""

from typing import Any

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


def __getattr__(name: str) -> Any:
    """The Schema Registry settings, loaded on first use (see ``serializers.LAZY_NAMES``)."""
    from . import serializers

    if name not in serializers.LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(serializers, name)
