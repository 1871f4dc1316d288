"""The ``Topic`` definition: a name, serializers and creation settings."""

from __future__ import annotations

import enum
from typing import Any, Callable, List, Optional, Tuple

from ..messagecontext import MessageContext
from ..serializers import (
    BytesDeserializer,
    BytesSerializer,
    DeserializerType,
    IgnoreMessage,
    JSONDeserializer,
    JSONSerializer,
    SerializationContext,
    SerializerType,
    resolve_deserializer,
    resolve_serializer,
)
from ..serializers.base import reads_context
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

    #: ``deserialize``/``serialize`` specialised for this topic's (de)serializers, built on first use
    _deserialize_fn: Optional[Callable[..., List[Tuple[Any, Any, int]]]] = None
    _serialize_fn: Optional[Callable[[Any, Any, Headers], Tuple[Any, Any, Headers]]] = None

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
        return self._deserializer()(value, key, headers, timestamp_ms, timestamp_type)

    def _deserializer(self) -> Callable[..., List[Tuple[Any, Any, int]]]:
        """The function behind :meth:`deserialize` (the engine calls it per message)."""
        return self._deserialize_fn or self._build_deserialize()

    def _raw_json_values(self) -> bool:
        """True when a message becomes ``(loads(value), raw key, Kafka timestamp)`` with the
        default JSON ``loads`` and nothing more (bytes keys, no split, no timestamp
        extractor): a task may then give a sink the raw values of a whole chunk
        (``BaseSink._add_json``)."""
        from ...utils.json import loads

        vd = self._value_deserializer
        return (
            isinstance(vd, JSONDeserializer) and vd._plain_loads() is loads and not vd.split_values
            and type(self._key_deserializer) is BytesDeserializer and self._timestamp_extractor is None
        )

    def _build_deserialize(self) -> Callable[..., List[Tuple[Any, Any, int]]]:
        """``deserialize`` specialised once for this topic's deserializers (it runs per message).

        Built-in deserializers ignore their context, so none is built for them; the bytes key
        deserializer is the identity.
        """
        name = self.name
        # called with ctx=None when they ignore it (see ``reads_context``)
        kd: Any = self._key_deserializer
        vd: Any = self._value_deserializer
        key_ctx, value_ctx = reads_context(kd), reads_context(vd)
        key_identity = type(kd) is BytesDeserializer
        plain_loads = vd._plain_loads() if isinstance(vd, JSONDeserializer) else None
        split = vd.split_values
        extractor = self._timestamp_extractor
        # the enum's constructor is slow for a per-record call: look the members up instead
        stamp_types = {int(t): t for t in TimestampType}

        def deserialize(
            value: Optional[bytes], key: Optional[bytes], headers: Headers, timestamp_ms: int, timestamp_type: int
        ) -> List[Tuple[Any, Any, int]]:
            out: Any
            try:
                if key is None or key_identity:
                    dkey = key
                else:
                    dkey = kd(key, SerializationContext(name, "key", headers) if key_ctx else None)
                if value is None:
                    out = None
                elif plain_loads is not None:
                    out = plain_loads(value)
                else:
                    out = vd(value, SerializationContext(name, "value", headers) if value_ctx else None)
            except IgnoreMessage:
                return []
            if not split or value is None:
                if extractor is None:
                    return [(out, dkey, timestamp_ms)]
                ttype = stamp_types.get(timestamp_type)
                if ttype is None:
                    ttype = TimestampType(timestamp_type)  # raises for an unknown type, as before
                return [(out, dkey, extractor(out, headers, timestamp_ms, ttype))]
            if extractor is None:
                return [(v, dkey, timestamp_ms) for v in out]
            ttype = stamp_types.get(timestamp_type)
            if ttype is None:
                ttype = TimestampType(timestamp_type)
            return [(v, dkey, extractor(v, headers, timestamp_ms, ttype)) for v in out]

        self._deserialize_fn = deserialize
        return deserialize

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
        skey, svalue, headers = self._serializer()(key, value, headers)
        return KafkaMessage(key=skey, value=svalue, headers=headers, timestamp=timestamp_ms)

    def _serializer(self) -> Callable[[Any, Any, Headers], Tuple[Any, Any, Headers]]:
        """The function behind :meth:`serialize` (the engine calls it per output record)."""
        return self._serialize_fn or self._build_serialize()

    def _build_serialize(self) -> Callable[[Any, Any, Headers], Tuple[Any, Any, Headers]]:
        """``f(key, value, headers) -> (key bytes, value bytes, headers)``, specialised once for
        this topic's serializers (the engine calls it per output record)."""
        name = self.name
        ks: Any = self._key_serializer  # called with ctx=None when they ignore it
        vs: Any = self._value_serializer
        key_ctx, value_ctx = reads_context(ks), reads_context(vs)
        key_bytes = type(ks) is BytesSerializer  # bytes keys pass through as they are
        extra = vs.extra_headers
        plain_dumps = vs._plain_dumps() if isinstance(vs, JSONSerializer) else None

        def serialize(key: Any, value: Any, headers: Headers) -> Tuple[Any, Any, Headers]:
            if extra:
                merged = dict(headers or [])
                merged.update(extra)
                headers = list(merged.items())
            if key is None or (key_bytes and key.__class__ is bytes):
                skey = key
            else:
                skey = ks(key, SerializationContext(name, "key", headers) if key_ctx else None)
            if value is None:
                svalue = None
            elif plain_dumps is not None:
                try:
                    svalue = plain_dumps(value)
                except (TypeError, ValueError) as exc:  # as JSONSerializer.__call__ does
                    raise JSONSerializer.not_serializable(exc) from exc
            else:
                svalue = vs(value, SerializationContext(name, "value", headers) if value_ctx else None)
            return skey, svalue, headers

        self._serialize_fn = serialize
        return serialize

    def __getstate__(self) -> dict[str, Any]:
        # the specialised functions are rebuilt where the topic is used (e.g. in a Spark worker)
        state = self.__dict__.copy()
        state.pop("_deserialize_fn", None)
        state.pop("_serialize_fn", None)
        return state

    def row_serialize(self, row: Any, key: Any) -> KafkaMessage:
        """Serialize a processed row (reference compatibility helper)."""
        return self.serialize(key=key, value=row.value, headers=row.headers, timestamp_ms=row.timestamp)

    def context(self, partition: int = 0, offset: int = 0, key: Any = None, timestamp: Optional[int] = None) -> MessageContext:
        return MessageContext(key=key, topic=self.name, partition=partition, offset=offset, timestamp=timestamp)
