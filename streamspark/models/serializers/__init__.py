"""Serializers and deserializers, selectable by name (``"json"``, ``"str"``, ...) or instance."""

from __future__ import annotations

from typing import Union

from .base import Deserializer, SerializationContext, Serializer
from .exceptions import (
    DeserializationError,
    IgnoreMessage,
    SerializationError,
    SerializerIsNotProvidedError,
)
from .json import JSONDeserializer, JSONSerializer
from .simple_types import (
    BytesDeserializer,
    BytesSerializer,
    DoubleDeserializer,
    DoubleSerializer,
    IntegerDeserializer,
    IntegerSerializer,
    StringDeserializer,
    StringSerializer,
)

__all__ = (
    "Serializer",
    "Deserializer",
    "SerializationContext",
    "SerializationError",
    "DeserializationError",
    "SerializerIsNotProvidedError",
    "IgnoreMessage",
    "JSONSerializer",
    "JSONDeserializer",
    "BytesSerializer",
    "BytesDeserializer",
    "StringSerializer",
    "StringDeserializer",
    "IntegerSerializer",
    "IntegerDeserializer",
    "DoubleSerializer",
    "DoubleDeserializer",
    "SerializerType",
    "DeserializerType",
    "resolve_serializer",
    "resolve_deserializer",
)

SerializerType = Union[str, Serializer]
DeserializerType = Union[str, Deserializer]

_SERIALIZERS = {
    "json": JSONSerializer,
    "bytes": BytesSerializer,
    "str": StringSerializer,
    "string": StringSerializer,
    "int": IntegerSerializer,
    "integer": IntegerSerializer,
    "double": DoubleSerializer,
    "float": DoubleSerializer,
}
_DESERIALIZERS = {
    "json": JSONDeserializer,
    "bytes": BytesDeserializer,
    "str": StringDeserializer,
    "string": StringDeserializer,
    "int": IntegerDeserializer,
    "integer": IntegerDeserializer,
    "double": DoubleDeserializer,
    "float": DoubleDeserializer,
}


def resolve_serializer(serializer: SerializerType) -> Serializer:
    """Return a serializer instance for a name or pass an instance through.

    >>> type(resolve_serializer("json")).__name__
    'JSONSerializer'
    """
    if isinstance(serializer, Serializer):
        return serializer
    try:
        return _SERIALIZERS[serializer]()
    except KeyError:
        raise SerializerIsNotProvidedError(
            f"Unknown serializer {serializer!r}; use one of {sorted(_SERIALIZERS)} or a Serializer instance"
        ) from None


def resolve_deserializer(deserializer: DeserializerType) -> Deserializer:
    """Return a deserializer instance for a name or pass an instance through."""
    if isinstance(deserializer, Deserializer):
        return deserializer
    try:
        return _DESERIALIZERS[deserializer]()
    except KeyError:
        raise SerializerIsNotProvidedError(
            f"Unknown deserializer {deserializer!r}; use one of {sorted(_DESERIALIZERS)} or a Deserializer instance"
        ) from None
