"""Serialization errors.

``SerializationError`` and the key/value variants also derive from confluent-kafka's own
classes, so an ``except confluent_kafka.serialization.SerializationError`` catches them too.

>>> from streamspark.models.serializers import IntegerDeserializer
>>> try:
...     IntegerDeserializer()(b"\\x01", None)
... except SerializationError as exc:
...     print("refused:", exc)
refused: unpack requires a buffer of 4 bytes (IntegerDeserializer expects 4 bytes, got 1)
"""

from __future__ import annotations

from confluent_kafka.error import KeyDeserializationError as _KeyDeserializationError
from confluent_kafka.error import KeySerializationError as _KeySerializationError
from confluent_kafka.error import ValueDeserializationError as _ValueDeserializationError
from confluent_kafka.error import ValueSerializationError as _ValueSerializationError
from confluent_kafka.serialization import SerializationError as _SerializationError

from ...exceptions import StreamsparkException

__all__ = (
    "SerializationError",
    "KeyDeserializationError",
    "KeySerializationError",
    "ValueSerializationError",
    "ValueDeserializationError",
    "SerializerIsNotProvidedError",
    "DeserializerIsNotProvidedError",
    "IgnoreMessage",
    "DeserializationError",
)


class SerializationError(StreamsparkException, _SerializationError):
    """A value could not be serialized, or message bytes could not be deserialized."""


class KeyDeserializationError(StreamsparkException, _KeyDeserializationError):
    """A message key could not be deserialized (confluent-kafka's wrapper type)."""


class KeySerializationError(StreamsparkException, _KeySerializationError):
    """A message key could not be serialized (confluent-kafka's wrapper type)."""


class ValueSerializationError(StreamsparkException, _ValueSerializationError):
    """A message value could not be serialized (confluent-kafka's wrapper type)."""


class ValueDeserializationError(StreamsparkException, _ValueDeserializationError):
    """A message value could not be deserialized (confluent-kafka's wrapper type)."""


class SerializerIsNotProvidedError(StreamsparkException, ValueError):
    """A serializer name is unknown, or a topic without a serializer was asked to serialize."""


class DeserializerIsNotProvidedError(StreamsparkException, ValueError):
    """A deserializer name is unknown, or a topic without a deserializer was asked to deserialize."""


class DeserializationError(SerializationError):
    """Kept for code that catches it; the built-in deserializers raise :class:`SerializationError`."""


class IgnoreMessage(StreamsparkException):
    """Raise it from a deserializer to skip the current message silently."""
