"""The ``Topic`` definition: a name, serializers and creation settings."""

from __future__ import annotations

import enum
from typing import Any, Iterable, List, Optional, Tuple

from ..messagecontext import MessageContext
from ..serializers import (
    DeserializerType,
    IgnoreMessage,
    SerializationContext,
    SerializerType,
    resolve_deserializer,
    resolve_serializer,
)
from ..timestamps import TimestampExtractor, TimestampType
from ..types import Headers
from .config import TopicConfig

__all__ = ("Topic", "TopicType", "KafkaMessage")


class TopicType(enum.Enum):
    REGULAR = 1
    REPARTITION = 2
    CHANGELOG = 3


class KafkaMessage:
    """A serialized message ready to produce."""

    __slots__ = ("key", "value", "headers", "timestamp")

    def __init__(self, key: Any, value: Any, headers: Headers = None, timestamp: Optional[int] = None) -> None:
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp


class Topic:
    """A Kafka topic as the application sees it.

    Build it with ``app.topic(...)`` so the application can create and validate it.

    :param name: the topic name.
    :param create_config: partitions/replication used when the topic is created.
    :param value_deserializer: name (``"json"``, ``"str"``, ``"int"``, ``"double"``, ``"bytes"``) or instance.
    :param timestamp_extractor: ``f(value, headers, timestamp_ms, timestamp_type) -> ms``.

    >>> t = Topic("readings", value_deserializer="json")
    >>> t.deserialize(b'{"t": 1}', b"k", None, 5, 1)
    [({'t': 1}, b'k', 5)]
    """

    def __init__(
        self,
        name: str,
        topic_type: TopicType = TopicType.REGULAR,
        create_config: Optional[TopicConfig] = None,
        value_deserializer: Optional[DeserializerType] = "json",
        key_deserializer: Optional[DeserializerType] = "bytes",
        value_serializer: Optional[SerializerType] = "json",
        key_serializer: Optional[SerializerType] = "bytes",
        timestamp_extractor: Optional[TimestampExtractor] = None,
        quix_name: str = "",
    ) -> None:
        if not name:
            raise ValueError("Topic name must be a non-empty string")
        self.name = name
        self.topic_type = topic_type
        self.create_config = create_config
        self.broker_config: Optional[TopicConfig] = None
        self.quix_name = quix_name or name
        self._value_deserializer = resolve_deserializer(value_deserializer or "bytes")
        self._key_deserializer = resolve_deserializer(key_deserializer or "bytes")
        self._value_serializer = resolve_serializer(value_serializer or "bytes")
        self._key_serializer = resolve_serializer(key_serializer or "bytes")
        self._timestamp_extractor = timestamp_extractor

    def __repr__(self) -> str:
        return f'<Topic name="{self.name}">'

    @property
    def value_deserializer(self) -> Any:
        return self._value_deserializer

    @property
    def key_serializer(self) -> Any:
        return self._key_serializer

    @property
    def value_serializer(self) -> Any:
        return self._value_serializer

    # --- consuming -------------------------------------------------------------------------
    def deserialize(
        self,
        value: Optional[bytes],
        key: Optional[bytes],
        headers: Headers,
        timestamp_ms: int,
        timestamp_type: int,
    ) -> List[Tuple[Any, Any, int]]:
        """Deserialize one raw message into ``[(value, key, timestamp_ms), ...]``.

        Returns an empty list when a deserializer raises :class:`IgnoreMessage`, and several
        items when the value deserializer has ``split_values``. Other errors propagate.
        """
        try:
            if key is None:
                dkey = None
            else:
                dkey = self._key_deserializer(key, SerializationContext(self.name, "key", headers))
            if value is None:
                values: Iterable[Any] = [None]
            else:
                ctx = SerializationContext(self.name, "value", headers)
                out = self._value_deserializer(value, ctx)
                values = out if self._value_deserializer.split_values else [out]
        except IgnoreMessage:
            return []
        extractor = self._timestamp_extractor
        rows = []
        for v in values:
            ts = timestamp_ms
            if extractor is not None:
                ts = extractor(v, headers, timestamp_ms, TimestampType(timestamp_type))
            rows.append((v, dkey, ts))
        return rows

    def row_deserialize(self, message: Any) -> Any:
        """Deserialize a confluent-kafka ``Message`` (reference compatibility helper).

        Returns ``None`` for ignored messages, a ``(value, key, timestamp)`` tuple, or a list of
        them for split values.
        """
        ts_type, ts = message.timestamp()
        rows = self.deserialize(message.value(), message.key(), message.headers(), ts, ts_type)
        if not rows:
            return None
        return rows if len(rows) > 1 else rows[0]

    # --- producing -------------------------------------------------------------------------
    def serialize(
        self,
        key: Any = None,
        value: Any = None,
        headers: Headers = None,
        timestamp_ms: Optional[int] = None,
    ) -> KafkaMessage:
        """Serialize a key/value pair for producing; the serializers' extra headers are added."""
        extra = self._value_serializer.extra_headers
        if extra:
            merged = dict(headers or [])
            merged.update(extra)
            headers = list(merged.items())
        skey = None if key is None else self._key_serializer(key, SerializationContext(self.name, "key", headers))
        svalue = None if value is None else self._value_serializer(value, SerializationContext(self.name, "value", headers))
        return KafkaMessage(key=skey, value=svalue, headers=headers, timestamp=timestamp_ms)

    def row_serialize(self, row: Any, key: Any) -> KafkaMessage:
        """Serialize a processed row (reference compatibility helper)."""
        return self.serialize(key=key, value=row.value, headers=row.headers, timestamp_ms=row.timestamp)

    def context(self, partition: int = 0, offset: int = 0, key: Any = None, timestamp: Optional[int] = None) -> MessageContext:
        return MessageContext(key=key, topic=self.name, partition=partition, offset=offset, timestamp=timestamp)
