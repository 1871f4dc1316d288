"""Serializers and deserializers, selectable by name (``"json"``, ``"str"``, ...) or instance."""

from __future__ import annotations

from typing import Any

from .base import Deserializer, DeserializerType, MessageField, SerializationContext, Serializer, SerializerType
from .exceptions import (
    DeserializationError,
    DeserializerIsNotProvidedError,
    IgnoreMessage,
    KeyDeserializationError,
    KeySerializationError,
    SerializationError,
    SerializerIsNotProvidedError,
    ValueDeserializationError,
    ValueSerializationError,
)
from .json import JSONDeserializer, JSONSerializer
from .quix import QuixDeserializer, QuixEventsSerializer, QuixSerializer, QuixTimeseriesSerializer
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
    "MessageField",
    "SerializationError",
    "DeserializationError",
    "KeySerializationError",
    "KeyDeserializationError",
    "ValueSerializationError",
    "ValueDeserializationError",
    "SerializerIsNotProvidedError",
    "DeserializerIsNotProvidedError",
    "IgnoreMessage",
    "JSONSerializer",
    "JSONDeserializer",
    "QuixDeserializer",
    "QuixSerializer",
    "QuixTimeseriesSerializer",
    "QuixEventsSerializer",
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
    "SERIALIZERS",
    "DESERIALIZERS",
    "resolve_serializer",
    "resolve_deserializer",
)

#: serializer classes by name (``"quix_timeseries"`` and ``"quix_events"`` write the Quix formats)
SERIALIZERS: dict[str, type[Serializer]] = {
    "json": JSONSerializer,
    "bytes": BytesSerializer,
    "str": StringSerializer,
    "string": StringSerializer,
    "int": IntegerSerializer,
    "integer": IntegerSerializer,
    "double": DoubleSerializer,
    "quix_timeseries": QuixTimeseriesSerializer,
    "quix_events": QuixEventsSerializer,
}
#: deserializer classes by name (``"quix"`` reads the Quix formats)
DESERIALIZERS: dict[str, type[Deserializer]] = {
    "json": JSONDeserializer,
    "bytes": BytesDeserializer,
    "str": StringDeserializer,
    "string": StringDeserializer,
    "int": IntegerDeserializer,
    "integer": IntegerDeserializer,
    "double": DoubleDeserializer,
    "quix": QuixDeserializer,
}


def resolve_serializer(serializer: SerializerType) -> Serializer:
    """Return a serializer instance for a name or pass an instance through.

    :raises SerializerIsNotProvidedError: (a ``ValueError``) the name is unknown.

    >>> type(resolve_serializer("json")).__name__
    'JSONSerializer'
    """
    if isinstance(serializer, Serializer):
        return serializer
    if not isinstance(serializer, str):  # e.g. the class instead of an instance
        raise SerializerIsNotProvidedError(
            f'Serializer must be either one of {list(SERIALIZERS)} or a subclass of Serializer; got "{serializer}"'
        )
    try:
        return SERIALIZERS[serializer]()
    except (KeyError, TypeError):
        raise SerializerIsNotProvidedError(
            f'Unknown serializer option "{serializer}"; valid options are {list(SERIALIZERS)} (or a Serializer instance)'
        ) from None


def resolve_deserializer(deserializer: DeserializerType) -> Deserializer:
    """Return a deserializer instance for a name or pass an instance through.

    :raises DeserializerIsNotProvidedError: (a ``ValueError``) the name is unknown.
    """
    if isinstance(deserializer, Deserializer):
        return deserializer
    if not isinstance(deserializer, str):  # e.g. the class instead of an instance
        raise DeserializerIsNotProvidedError(
            f'Deserializer must be either one of {list(DESERIALIZERS)} or a subclass of Deserializer; got "{deserializer}"'
        )
    try:
        return DESERIALIZERS[deserializer]()
    except (KeyError, TypeError):
        raise DeserializerIsNotProvidedError(
            f'Unknown deserializer option "{deserializer}"; valid options are {list(DESERIALIZERS)} (or a Deserializer instance)'
        ) from None


#: names importable from here, as in the reference, but loaded on first use: their module needs
#: pydantic, which the Spark tasks importing this package do not otherwise load
LAZY_NAMES = {"SchemaRegistryClientConfig": "schema_registry", "SchemaRegistrySerializationConfig": "schema_registry"}


def __getattr__(name: str) -> Any:
    module = LAZY_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
