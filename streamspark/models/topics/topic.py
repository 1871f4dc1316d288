"""The ``Topic`` definition: a name, serializers and creation settings."""

from __future__ import annotations

import copy
import enum
import logging
import sys
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple, Union, cast

from ..messagecontext import MessageContext
from ..messages import KafkaMessage
from ..rows import Row
from ..serializers import (
    BytesDeserializer,
    BytesSerializer,
    Deserializer,
    DeserializerIsNotProvidedError,
    DeserializerType,
    IgnoreMessage,
    JSONDeserializer,
    JSONSerializer,
    MessageField,
    SerializationContext,
    SerializationError,
    Serializer,
    SerializerIsNotProvidedError,
    SerializerType,
    resolve_deserializer,
    resolve_serializer,
)
from ..serializers.base import reads_context
from ..timestamps import TimestampExtractor, TimestampType
from ..types import Headers, SuccessfulConfluentKafkaMessageProto
from .config import TopicConfig
from .exceptions import TopicConfigurationError
from .utils import merge_headers

if TYPE_CHECKING:
    from ..serializers._avro_arrow import ArrowAvroDecoder, ArrowAvroEncoder

__all__ = ("Topic", "TopicType", "TopicConfig", "TimestampExtractor", "KafkaMessage")

logger = logging.getLogger(__name__)

#: what ``Topic.record_deserializer()`` returns per message: ``(value, key, timestamp_ms)`` records, in
#: a 1-tuple for a plain message, a list for split values, :data:`_IGNORED` for an ignored one
_Records = Sequence[Tuple[Any, Any, int]]
_IGNORED: _Records = ()
#: ``f(key, value, headers) -> (key, value, headers)`` ready for the producer
_SerializeFn = Callable[[Any, Any, Headers], Tuple[Any, Any, Headers]]

# the enum's constructor is slow for a per-record call: look the members up instead
_STAMP_TYPES = {int(t): t for t in TimestampType}


class TopicType(enum.Enum):
    """What a topic is for: the application's own input/output, re-keying, or a state changelog."""

    REGULAR = 1
    REPARTITION = 2
    CHANGELOG = 3


def _serializer(serializer: Optional[SerializerType]) -> Optional[Serializer]:
    return None if serializer is None else resolve_serializer(serializer)


def _deserializer(deserializer: Optional[DeserializerType]) -> Optional[Deserializer]:
    return None if deserializer is None else resolve_deserializer(deserializer)


def _stamp_type(timestamp_type: int) -> TimestampType:
    found = _STAMP_TYPES.get(timestamp_type)
    return TimestampType(timestamp_type) if found is None else found  # raises for an unknown type


class _NotProducibleError(SerializationError, TypeError):
    """A serializer returned something the producer cannot send (a ``TypeError`` there)."""


def _producible(data: Any, field: str, serializer: Any) -> Union[bytes, str]:
    """``data`` as the producer takes it (``bytes`` or ``str``): bytes-like objects are copied to
    ``bytes``; anything else is a :class:`SerializationError` (and a ``TypeError``, as the
    producer raises) naming the serializer."""
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise _NotProducibleError(
        f"The {field} serializer {type(serializer).__name__} returned {type(data).__name__} "
        f"({data!r:.80}); a Kafka {field} must be bytes, str or None: choose a {field}_serializer "
        f'for this {field} type (e.g. "str", "int" or "json")'
    )


class Topic:
    """A Kafka topic as the application sees it.

    Build it with ``app.topic(...)`` so the application can create and validate it.

    :param name: the topic name.
    :param topic_type: ``TopicType.REGULAR`` (default), ``REPARTITION`` or ``CHANGELOG``.
    :param create_config: partitions/replication used when the topic is created.
    :param value_deserializer: name (``"json"``, ``"str"``, ``"int"``, ``"double"``, ``"bytes"``)
        or instance; ``None`` means none (deserializing a value then raises
        :class:`DeserializerIsNotProvidedError`). Likewise the other three.
    :param timestamp_extractor: ``f(value, headers, timestamp_ms, timestamp_type) -> ms``.
    :param quix_name: the topic's name in Quix Cloud (defaults to ``name``).

    >>> t = Topic("readings", key_serializer="str")
    >>> msg = t.serialize(key="k", value={"t": 1})
    >>> msg.key, msg.value
    (b'k', b'{"t":1}')
    """

    #: ``record_deserializer()``/``record_serializer()`` specialised for this topic's (de)serializers, built on first use
    _deserialize_fn: Optional[Callable[..., _Records]] = None
    _serialize_fn: Optional[_SerializeFn] = None

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
        self.quix_name = quix_name or name
        self._create_config = copy.deepcopy(create_config)
        self._broker_config: Optional[TopicConfig] = None
        self._value_deserializer = _deserializer(value_deserializer)
        self._key_deserializer = _deserializer(key_deserializer)
        self._value_serializer = _serializer(value_serializer)
        self._key_serializer = _serializer(key_serializer)
        self._timestamp_extractor = timestamp_extractor

    def __clone__(self, name: str, create_config: Optional[TopicConfig] = None) -> "Topic":
        """The same topic definition under another name (and creation config)."""
        return self.__class__(
            name=name,
            topic_type=self.topic_type,
            create_config=create_config or self._create_config,
            value_deserializer=self._value_deserializer,
            key_deserializer=self._key_deserializer,
            value_serializer=self._value_serializer,
            key_serializer=self._key_serializer,
            timestamp_extractor=self._timestamp_extractor,
            quix_name=self.quix_name,
        )

    def __repr__(self) -> str:
        return f'<{type(self).__name__} name="{self.name}">'

    @property
    def create_config(self) -> Optional[TopicConfig]:
        """The config the topic is created with when it does not exist."""
        return self._create_config

    @create_config.setter
    def create_config(self, config: Optional[TopicConfig]) -> None:
        self._create_config = config

    @property
    def broker_config(self) -> TopicConfig:
        """The topic's config as read from the broker (known once the application checked it).

        :raises TopicConfigurationError: it has not been read from the broker.
        """
        if self._broker_config is None:
            raise TopicConfigurationError(f'The broker topic configuration is missing for the topic "{self.name}"')
        return self._broker_config

    @broker_config.setter
    def broker_config(self, config: TopicConfig) -> None:
        self._broker_config = copy.deepcopy(config)

    @property
    def is_regular(self) -> bool:
        return self.topic_type == TopicType.REGULAR

    @property
    def is_repartition(self) -> bool:
        return self.topic_type == TopicType.REPARTITION

    @property
    def is_changelog(self) -> bool:
        return self.topic_type == TopicType.CHANGELOG

    @property
    def key_deserializer(self) -> Optional[Deserializer]:
        return self._key_deserializer

    @property
    def value_deserializer(self) -> Optional[Deserializer]:
        return self._value_deserializer

    @property
    def key_serializer(self) -> Optional[Serializer]:
        return self._key_serializer

    @property
    def value_serializer(self) -> Optional[Serializer]:
        return self._value_serializer

    # --- consuming -------------------------------------------------------------------------
    def _check_deserializers(self) -> None:
        if self._key_deserializer is None:
            raise DeserializerIsNotProvidedError(f'Key deserializer is not provided for topic "{self.name}"')
        if self._value_deserializer is None:
            raise DeserializerIsNotProvidedError(f'Value deserializer is not provided for topic "{self.name}"')

    def row_deserialize(self, message: SuccessfulConfluentKafkaMessageProto) -> Union[Row, List[Row], None]:
        """Deserialize a consumed message (a confluent-kafka ``Message`` or alike) into a Row.

        A ``None`` key or value stays ``None`` (no deserializer call).

        :return: a :class:`Row`; a list of them when the value deserializer has
            ``split_values``; None when a deserializer raised :class:`IgnoreMessage`.
        :raises DeserializerIsNotProvidedError: the topic has no key or value deserializer.
        """
        headers: Any = message.headers()
        timestamp_type, timestamp_ms = message.timestamp()
        records = self.record_deserializer()(message.value(), message.key(), headers, timestamp_ms, timestamp_type)
        if records is _IGNORED:
            logger.debug(
                'Ignore incoming message: partition="%s[%s]" offset="%s"',
                message.topic(),
                message.partition(),
                message.offset(),
            )
            return None
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        size, leader_epoch = len(message), message.leader_epoch()
        rows = [
            Row(
                value=value,
                key=key,
                timestamp=ts,
                headers=headers,
                context=MessageContext(
                    key=key,
                    topic=topic,
                    partition=partition,
                    offset=offset,
                    size=size,
                    timestamp=ts,
                    headers=headers,
                    leader_epoch=leader_epoch,
                ),
            )
            for value, key, ts in records
        ]
        return rows if records.__class__ is list else rows[0]

    def deserialize(self, message: SuccessfulConfluentKafkaMessageProto) -> KafkaMessage:
        """Deserialize the key and value of a consumed message (``None`` stays ``None``).

        Unlike :meth:`row_deserialize` it neither splits values nor catches
        :class:`IgnoreMessage`; the timestamp is the message's own.

        :raises DeserializerIsNotProvidedError: a key/value is present but has no deserializer.
        """
        topic, headers = message.topic(), cast(Headers, message.headers())
        key: Any = message.key()
        value: Any = message.value()
        if key is not None:
            if self._key_deserializer is None:
                raise DeserializerIsNotProvidedError(f'Key deserializer is not provided for topic "{self.name}"')
            key = self._key_deserializer(key, SerializationContext(topic, MessageField.KEY, headers))
        if value is not None:
            if self._value_deserializer is None:
                raise DeserializerIsNotProvidedError(f'Value deserializer is not provided for topic "{self.name}"')
            value = self._value_deserializer(value, SerializationContext(topic, MessageField.VALUE, headers))
        return KafkaMessage(key=key, value=value, headers=headers, timestamp=message.timestamp()[1])

    def record_deserializer(self) -> Callable[..., _Records]:
        """``f(value, key, headers, timestamp_ms, timestamp_type) -> ((value, key, timestamp_ms), ...)``,
        what :meth:`row_deserialize` computes without building rows (the engine calls it per
        message): a 1-tuple for a plain message, a list for split values, an empty tuple for an
        ignored message."""
        return self._deserialize_fn or self._build_deserialize()

    def raw_json_values(self) -> bool:
        """True when a message becomes ``(loads(value), raw key, Kafka timestamp)`` with the
        default JSON ``loads`` and nothing more (bytes keys, no split, no timestamp
        extractor): a task may then give a sink the raw values of a whole chunk
        (``BaseSink.add_raw_json``)."""
        from ..serializers.json import default_loads

        vd = self._value_deserializer
        return (
            isinstance(vd, JSONDeserializer)
            and vd.plain_loads() is default_loads
            and not vd.split_values
            and type(self._key_deserializer) is BytesDeserializer
            and self._timestamp_extractor is None
        )

    def raw_avro_decoder(self) -> Optional["ArrowAvroDecoder"]:
        """The Arrow decoder of chunks of this topic's values when a message becomes
        ``(AvroDeserializer(value), raw key, Kafka timestamp)`` and nothing more (a plain
        schemaless ``AvroDeserializer`` whose schema the decoder covers, bytes keys, no split,
        no timestamp extractor): a task may then give a sink the raw values of a whole chunk
        (``BaseSink.add_raw_avro``). None otherwise."""
        avro = sys.modules.get("streamspark.models.serializers.avro")
        if avro is None:  # not imported: no AvroDeserializer exists (and none is imported here)
            return None
        vd = self._value_deserializer
        if (
            not isinstance(vd, avro.AvroDeserializer)
            or vd.split_values
            or type(self._key_deserializer) is not BytesDeserializer
            or self._timestamp_extractor is not None
        ):
            return None
        return vd.arrow_decoder()

    def chunk_value_encoder(self) -> Optional["ArrowAvroEncoder"]:
        """The encoder of chunks of this topic's output values when a message is produced as
        ``(raw key, AvroSerializer(value), headers)`` and nothing more (a plain schemaless
        ``AvroSerializer`` whose schema the encoder covers, a bytes key serializer, no extra
        headers): a task may then encode a chunk of outputs at once. None otherwise."""
        avro = sys.modules.get("streamspark.models.serializers.avro")
        if avro is None:  # not imported: no AvroSerializer exists (and none is imported here)
            return None
        vs = self._value_serializer
        if not isinstance(vs, avro.AvroSerializer) or type(self._key_serializer) is not BytesSerializer or vs.extra_headers:
            return None
        return vs.chunk_encoder()

    def _build_deserialize(self) -> Callable[..., _Records]:
        """The function behind :meth:`record_deserializer`, specialised once for this topic's
        deserializers (it runs per message).

        Built-in deserializers ignore their context, so none is built for them; the bytes key
        deserializer is the identity; a plain JSON deserializer's ``loads`` is called directly.
        """
        name = self.name
        if self._key_deserializer is None or self._value_deserializer is None:
            check = self._check_deserializers

            def missing(value: Any, key: Any, headers: Headers, timestamp_ms: int, timestamp_type: int) -> _Records:
                check()
                return _IGNORED

            self._deserialize_fn = missing
            return missing
        # called with ctx=None when they ignore it (see ``reads_context``)
        kd: Any = self._key_deserializer
        vd: Any = self._value_deserializer
        key_ctx, value_ctx = reads_context(kd), reads_context(vd)
        key_identity = type(kd) is BytesDeserializer
        plain_loads = vd.plain_loads() if isinstance(vd, JSONDeserializer) else None
        not_json = JSONDeserializer.not_deserializable
        split = vd.split_values
        extractor = self._timestamp_extractor
        ignored = _IGNORED

        def deserialize(
            value: Optional[bytes], key: Optional[bytes], headers: Headers, timestamp_ms: int, timestamp_type: int
        ) -> _Records:
            out: Any
            try:
                if key is None or key_identity:
                    dkey = key
                else:
                    dkey = kd(key, SerializationContext(name, MessageField.KEY, headers) if key_ctx else None)
                if value is None:
                    out = None
                elif plain_loads is not None:
                    try:
                        out = plain_loads(value)
                    except (TypeError, ValueError) as exc:  # as JSONDeserializer.__call__ does
                        raise not_json(exc) from exc
                else:
                    out = vd(value, SerializationContext(name, MessageField.VALUE, headers) if value_ctx else None)
                    if split and out is not None and out.__class__ is not list:
                        out = list(out)  # a lazy iterable may raise IgnoreMessage as it goes
            except IgnoreMessage:
                return ignored
            if not split or out is None:
                if extractor is None:
                    return ((out, dkey, timestamp_ms),)
                return ((out, dkey, extractor(out, headers, timestamp_ms, _stamp_type(timestamp_type))),)
            if extractor is None:
                return [(v, dkey, timestamp_ms) for v in out]
            ttype = _stamp_type(timestamp_type)
            return [(v, dkey, extractor(v, headers, timestamp_ms, ttype)) for v in out]

        self._deserialize_fn = deserialize
        return deserialize

    # --- producing -------------------------------------------------------------------------
    def row_serialize(self, row: Any, key: Any) -> KafkaMessage:
        """Serialize a row's value and ``key`` for producing.

        A ``None`` key stays ``None``; the value always goes through the value serializer (JSON
        writes ``None`` as ``null``); the value serializer's ``extra_headers`` are merged into
        the row's headers (``[]`` when there are none). The message's timestamp is left unset.

        :raises SerializerIsNotProvidedError: the topic has no key or value serializer.
        """
        skey, svalue, headers = self.record_serializer()(key, row.value, row.headers)
        return KafkaMessage(key=skey, value=svalue, headers=headers)

    def serialize(
        self,
        key: Any = None,
        value: Any = None,
        headers: Headers = None,
        timestamp_ms: Optional[int] = None,
    ) -> KafkaMessage:
        """Serialize ``key`` and ``value`` with the topic's serializers (``None`` included:
        JSON writes it as ``null``, the other built-ins keep ``None``); ``headers`` are kept as
        given.

        :raises SerializerIsNotProvidedError: a key/value is given but has no serializer.
        """
        key = self._serialize_field(MessageField.KEY, self._key_serializer, key, headers)
        value = self._serialize_field(MessageField.VALUE, self._value_serializer, value, headers)
        return KafkaMessage(key=key, value=value, headers=headers, timestamp=timestamp_ms)

    def _serialize_field(self, field: str, serializer: Optional[Serializer], data: Any, headers: Headers) -> Any:
        if serializer is None:
            if data is not None:
                raise SerializerIsNotProvidedError(f'{field.capitalize()} serializer is not provided for topic "{self.name}"')
            return None
        out = serializer(data, SerializationContext(self.name, field, headers))
        if out is None or out.__class__ is bytes or out.__class__ is str:
            return out
        return _producible(out, field, serializer)

    def record_serializer(self) -> _SerializeFn:
        """``f(key, value, headers) -> (key, value, headers)`` as :meth:`row_serialize` computes
        them, ready for the producer: key and value are ``bytes``, ``str`` or ``None``, headers a
        list (the engine calls it per output record)."""
        return self._serialize_fn or self._build_serialize()

    def _build_serialize(self) -> _SerializeFn:
        """The function behind :meth:`record_serializer`, specialised once for this topic's
        serializers (built-ins are called without a context, a plain JSON serializer's
        ``dumps`` directly)."""
        name = self.name
        if self._key_serializer is None or self._value_serializer is None:
            field = "Key" if self._key_serializer is None else "Value"
            message = f'{field} serializer is not provided for topic "{name}"'

            def missing(key: Any, value: Any, headers: Headers) -> Tuple[Any, Any, Headers]:
                raise SerializerIsNotProvidedError(message)

            self._serialize_fn = missing
            return missing
        ks: Any = self._key_serializer  # called with ctx=None when they ignore it
        vs: Any = self._value_serializer
        key_ctx, value_ctx = reads_context(ks), reads_context(vs)
        key_identity = type(ks) is BytesSerializer
        extra = vs.extra_headers
        plain_dumps = vs.plain_dumps() if isinstance(vs, JSONSerializer) else None
        not_json = JSONSerializer.not_serializable

        def serialize(key: Any, value: Any, headers: Headers) -> Tuple[Any, Any, Headers]:
            out_headers = merge_headers(headers, extra) if extra else headers or []
            if key is None:
                skey = None
            else:
                skey = (
                    key if key_identity else ks(key, SerializationContext(name, MessageField.KEY, headers) if key_ctx else None)
                )
                if skey.__class__ is not bytes and skey.__class__ is not str and skey is not None:
                    skey = _producible(skey, MessageField.KEY, ks)
            if plain_dumps is not None:
                try:
                    svalue = plain_dumps(value)
                except (TypeError, ValueError) as exc:  # as JSONSerializer.__call__ does
                    raise not_json(exc, SerializationContext(name, MessageField.VALUE, headers)) from exc
            else:
                svalue = vs(value, SerializationContext(name, MessageField.VALUE, headers) if value_ctx else None)
            if svalue.__class__ is not bytes and svalue.__class__ is not str and svalue is not None:
                svalue = _producible(svalue, MessageField.VALUE, vs)
            return skey, svalue, out_headers

        self._serialize_fn = serialize
        return serialize

    def __getstate__(self) -> dict[str, Any]:
        # the specialised functions are rebuilt where the topic is used (e.g. in a Spark worker)
        state = self.__dict__.copy()
        state.pop("_deserialize_fn", None)
        state.pop("_serialize_fn", None)
        return state

    def context(self, partition: int = 0, offset: int = 0, key: Any = None, timestamp: Optional[int] = None) -> MessageContext:
        return MessageContext(key=key, topic=self.name, partition=partition, offset=offset, timestamp=timestamp)
