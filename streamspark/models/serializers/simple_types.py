"""Serializers for bytes, str, int and float, byte-compatible with Kafka's simple serdes.

``None`` stays ``None`` both ways (a Kafka null), and every failure is a
:class:`SerializationError`.

>>> IntegerSerializer()(1, None), DoubleSerializer()(1.5, None), StringSerializer()("é", None)
(b'\\x00\\x00\\x00\\x01', b'?\\xf8\\x00\\x00\\x00\\x00\\x00\\x00', b'\\xc3\\xa9')
"""

from __future__ import annotations

import codecs
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

#: 4-byte signed big-endian int (Kafka's IntegerSerializer), 8-byte IEEE-754 big-endian double
_INT = struct.Struct(">i")
_DOUBLE = struct.Struct(">d")


def _described(value: Any) -> str:
    return f"{type(value).__name__}: {value!r:.80}"


class _DecodeError(SerializationError, UnicodeDecodeError):
    """Bytes the codec cannot decode: a ``SerializationError`` and the ``UnicodeDecodeError`` it wraps."""


class _EncodeError(SerializationError, UnicodeEncodeError):
    """Text the codec cannot encode: a ``SerializationError`` and the ``UnicodeEncodeError`` it wraps."""


class _WrongTypeError(SerializationError, TypeError):
    """Message data that is not bytes-like: a ``SerializationError`` and the ``TypeError`` it wraps."""


def _transcode(value: Any, method: str, codec: str, name: str) -> Any:
    """``value.encode(codec)`` or ``value.decode(codec)``; None stays None.

    A codec error is raised as an error that is both a ``SerializationError`` and the
    ``UnicodeDecodeError``/``UnicodeEncodeError`` (same message) the codec raised.
    """
    if value is None:
        return None
    try:
        return getattr(value, method)(codec)
    except AttributeError as exc:
        expected = "str" if method == "encode" else "bytes"
        raise SerializationError(f"{exc} ({name} expects {expected}, got {_described(value)})") from None
    except UnicodeDecodeError as exc:
        raise _DecodeError(exc.encoding, exc.object, exc.start, exc.end, exc.reason) from exc
    except UnicodeEncodeError as exc:
        raise _EncodeError(exc.encoding, exc.object, exc.start, exc.end, exc.reason) from exc
    except UnicodeError as exc:
        raise SerializationError(f"{name} cannot {method} {value!r:.80} as {codec}: {exc}") from exc


def _pack(layout: struct.Struct, value: Any, name: str, what: str) -> Optional[bytes]:
    if value is None:
        return None
    try:
        return layout.pack(value)
    except (struct.error, TypeError, OverflowError) as exc:
        raise SerializationError(f"{name} cannot encode {_described(value)} as {what}: {exc}") from exc


def _unpack(layout: struct.Struct, value: Any, name: str) -> Any:
    if value is None:
        return None
    try:
        return layout.unpack(value)[0]
    except struct.error as exc:
        raise SerializationError(f"{exc} ({name} expects {layout.size} bytes, got {len(value)})") from exc
    except TypeError as exc:
        raise _WrongTypeError(f"{exc} ({name} expects {layout.size} bytes, got {_described(value)})") from exc


@context_free
class BytesSerializer(Serializer):
    """Passes the value through unchanged (the producer takes ``bytes`` and ``str``).

    >>> BytesSerializer()(b"k", None), BytesSerializer()("k", None)
    (b'k', 'k')
    """

    def __call__(self, value: Any, ctx: SerializationContext) -> Any:
        return value


@context_free
class BytesDeserializer(Deserializer):
    """Returns the message bytes unchanged."""

    def __call__(self, value: Any, ctx: SerializationContext) -> Any:
        return value


@context_free
class StringSerializer(Serializer):
    """Encodes a ``str`` with ``codec`` (utf-8 by default).

    :param codec: a Python codec name; an unknown one raises ``LookupError`` here.

    >>> StringSerializer()("hé", None)
    b'h\\xc3\\xa9'
    """

    def __init__(self, codec: str = "utf_8") -> None:
        codecs.lookup(codec)
        self._codec = codec

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[bytes]:
        return _transcode(value, "encode", self._codec, "StringSerializer")


@context_free
class StringDeserializer(Deserializer):
    """Decodes message bytes with ``codec`` (utf-8 by default).

    >>> StringDeserializer()(b"h\\xc3\\xa9", None)
    'hé'
    """

    def __init__(self, codec: str = "utf_8") -> None:
        super().__init__()
        codecs.lookup(codec)
        self._codec = codec

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[str]:
        if value.__class__ is memoryview:
            value = value.tobytes()
        return _transcode(value, "decode", self._codec, "StringDeserializer")


@context_free
class IntegerSerializer(Serializer):
    """Encodes an int as 4 signed big-endian bytes (-2**31 .. 2**31-1).

    >>> IntegerSerializer()(-2, None)
    b'\\xff\\xff\\xff\\xfe'
    """

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[bytes]:
        return _pack(_INT, value, "IntegerSerializer", "a 4-byte int")


@context_free
class IntegerDeserializer(Deserializer):
    """Decodes 4 signed big-endian bytes into an int.

    >>> IntegerDeserializer()(b"\\xff\\xff\\xff\\xfe", None)
    -2
    """

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[int]:
        return _unpack(_INT, value, "IntegerDeserializer")


@context_free
class DoubleSerializer(Serializer):
    """Encodes a float (or int) as 8 big-endian IEEE-754 bytes.

    >>> DoubleSerializer()(-2.0, None)
    b'\\xc0\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
    """

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[bytes]:
        return _pack(_DOUBLE, value, "DoubleSerializer", "a double")


@context_free
class DoubleDeserializer(Deserializer):
    """Decodes 8 big-endian IEEE-754 bytes into a float.

    >>> DoubleDeserializer()(b"\\xc0\\x00\\x00\\x00\\x00\\x00\\x00\\x00", None)
    -2.0
    """

    def __call__(self, value: Any, ctx: SerializationContext) -> Optional[float]:
        return _unpack(_DOUBLE, value, "DoubleDeserializer")
