"""Errors of topic definition, creation and validation.

>>> from streamspark.models.topics import Topic
>>> try:
...     Topic("t").broker_config
... except TopicConfigurationError as exc:
...     print(exc)
The broker topic configuration is missing for the topic "t"
"""

from __future__ import annotations

from ...exceptions import StreamsparkException

__all__ = (
    "TopicNotFoundError",
    "TopicConfigurationMismatch",
    "CreateTopicTimeout",
    "CreateTopicFailure",
    "TopicNameLengthExceeded",
    "TopicPermissionError",
    "TopicConfigurationError",
    "TopicPartitionsMismatch",
)


class TopicNotFoundError(StreamsparkException):
    """A topic does not exist on the broker (and ``auto_create_topics`` is off)."""


class TopicConfigurationMismatch(StreamsparkException):
    """A topic on the broker differs from what it must be (e.g. a changelog's partition count)."""


class TopicPartitionsMismatch(StreamsparkException):
    """Topics whose records meet in one state (a join, or a stateful step after ``concat``)
    have different partition counts."""


class CreateTopicTimeout(StreamsparkException):
    """The broker did not finish creating topics in time."""


class CreateTopicFailure(StreamsparkException):
    """The broker refused to create a topic."""


class TopicNameLengthExceeded(StreamsparkException):
    """A topic to create has a name longer than the limit (255 characters)."""


class TopicPermissionError(StreamsparkException):
    """The credentials may not read a topic's configuration."""


class TopicConfigurationError(StreamsparkException):
    """A topic's configuration is missing or invalid (e.g. ``broker_config`` read before it is known)."""
