"""Serializer and deserializer base classes."""

from __future__ import annotations

import abc
from typing import Any, Callable, Optional, TypeVar, Union

from confluent_kafka.serialization import MessageField
from confluent_kafka.serialization import SerializationContext as _ConfluentContext

from ..types import Headers

__all__ = (
    "SerializationContext",
    "MessageField",
    "Serializer",
    "Deserializer",
    "SerializerType",
    "DeserializerType",
    "context_free",
    "reads_context",
)

_C = TypeVar("_C", bound=type)
#: ``__call__`` functions known never to read their ``ctx`` argument
_CONTEXT_FREE: set[Callable[..., Any]] = set()


def context_free(cls: _C) -> _C:
    """Class decorator: this class's ``__call__`` never reads its ``ctx`` argument.

    The engine then calls it with ``ctx=None`` instead of building a
    :class:`SerializationContext` per message. A subclass that overrides ``__call__`` is not
    covered (it may read ``ctx``) unless it is decorated itself.
    """
    _CONTEXT_FREE.add(cls.__call__)
    return cls


def reads_context(serializer: Any) -> bool:
    """False when ``serializer(value, ctx)`` is known to ignore ``ctx`` (see :func:`context_free`).

    An instance whose ``needs_context`` attribute is true always gets one (e.g. a JSON
    serializer given a Schema Registry: its subject names come from the topic).

    >>> from streamspark.models.serializers import JSONDeserializer
    >>> reads_context(JSONDeserializer())
    False
    """
    if getattr(serializer, "needs_context", False):
        return True
    return type(serializer).__call__ not in _CONTEXT_FREE


class SerializationContext(_ConfluentContext):
    """Where a (de)serializer is being applied: the topic, the field (a :class:`MessageField`,
    key or value) and the headers. A confluent-kafka ``SerializationContext``, so the Schema
    Registry serializers take it as it is.

    >>> ctx = SerializationContext("readings", MessageField.KEY)
    >>> (ctx.topic, str(ctx.field), ctx.headers)
    ('readings', 'key', None)
    """

    def __init__(self, topic: str, field: str = MessageField.VALUE, headers: Headers = None) -> None:
        self.topic = topic
        self.field = field  # type: ignore[assignment]  # a MessageField or its string
        self.headers = headers  # type: ignore[assignment]


class Serializer(abc.ABC):
    """Turns a Python object into bytes. Subclass and implement ``__call__``."""

    @property
    def extra_headers(self) -> dict[str, Any]:
        """Headers added to every message produced with this serializer."""
        return {}

    @abc.abstractmethod
    def __call__(self, value: Any, ctx: SerializationContext) -> bytes | bytearray | str | None: ...


class Deserializer(abc.ABC):
    """Turns message bytes into a Python object. Subclass and implement ``__call__``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    @property
    def split_values(self) -> bool:
        """When True, ``__call__`` returns an iterable and each item becomes one record."""
        return False

    @abc.abstractmethod
    def __call__(self, value: bytes, ctx: SerializationContext) -> Any: ...

    def _to_dict(self, value: Any) -> Optional[Any]:
        return value


#: what a topic takes as a serializer: a name (``"json"``, ``"str"``, ...) or an instance
SerializerType = Union[str, Serializer]
#: what a topic takes as a deserializer: a name or an instance
DeserializerType = Union[str, Deserializer]
