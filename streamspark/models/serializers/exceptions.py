"""Serialization errors."""

from __future__ import annotations

from ...exceptions import StreamsparkException

__all__ = ("SerializationError", "SerializerIsNotProvidedError", "IgnoreMessage", "DeserializationError")


class SerializationError(StreamsparkException):
    """A value could not be serialized."""


class DeserializationError(StreamsparkException):
    """A message could not be deserialized."""


class SerializerIsNotProvidedError(StreamsparkException):
    """A serializer/deserializer name is unknown."""


class IgnoreMessage(StreamsparkException):
    """Raise it from a deserializer to skip the current message silently."""
