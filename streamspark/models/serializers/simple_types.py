"""Serializers for bytes, str, int and float."""

from __future__ import annotations

import struct
from typing import Any, Optional

from .base import Deserializer, SerializationContext, Serializer, context_free
from .exceptions import SerializationError

__all__ = (
    "BytesSerializer",
    "BytesDeserializer",
    "StringSerializer",
    "StringDeserializer",
    "IntegerSerializer",
    "IntegerDeserializer",
    "DoubleSerializer",
    "DoubleDeserializer",
)

_INT = struct.Struct(">q")
_DOUBLE = struct.Struct(">d")


@context_free
class BytesSerializer(Serializer):
    """Passes bytes through unchanged."""

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[bytes]:
        if value is None:
            return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise SerializationError(f"BytesSerializer expects bytes, got {type(value).__name__}: {value!r:.80}")


@context_free
class BytesDeserializer(Deserializer):
    """Returns the raw bytes."""

    def __call__(self, value: bytes, ctx: SerializationContext) -> bytes:
        return value


@context_free
class StringSerializer(Serializer):
    """Encodes ``str`` with ``codec`` (utf-8 by default).

    >>> StringSerializer()("hé", None)
    b'h\\xc3\\xa9'
    """

    def __init__(self, codec: str = "utf_8") -> None:
        self._codec = codec

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes:
        if not isinstance(value, str):
            raise SerializationError(f"StringSerializer expects str, got {type(value).__name__}: {value!r:.80}")
        return value.encode(self._codec)


@context_free
class StringDeserializer(Deserializer):
    """Decodes bytes with ``codec``."""

    def __init__(self, codec: str = "utf_8") -> None:
        super().__init__()
        self._codec = codec

    def __call__(self, value: bytes, ctx: SerializationContext) -> str:
        return bytes(value).decode(self._codec)


@context_free
class IntegerSerializer(Serializer):
    """Encodes an int as 8 big-endian bytes (Kafka's LongSerializer layout)."""

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes:
        if not isinstance(value, int) or isinstance(value, bool):
            raise SerializationError(f"IntegerSerializer expects int, got {type(value).__name__}: {value!r:.80}")
        return _INT.pack(value)


@context_free
class IntegerDeserializer(Deserializer):
    """Decodes 8 (or 4) big-endian bytes into an int."""

    def __call__(self, value: bytes, ctx: SerializationContext) -> int:
        if len(value) == 4:
            return int.from_bytes(value, "big", signed=True)
        return _INT.unpack(value)[0]


@context_free
class DoubleSerializer(Serializer):
    """Encodes a float as 8 big-endian IEEE-754 bytes."""

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise SerializationError(f"DoubleSerializer expects float, got {type(value).__name__}: {value!r:.80}")
        return _DOUBLE.pack(float(value))


@context_free
class DoubleDeserializer(Deserializer):
    """Decodes 8 big-endian IEEE-754 bytes into a float."""

    def __call__(self, value: bytes, ctx: SerializationContext) -> float:
        return _DOUBLE.unpack(value)[0]
