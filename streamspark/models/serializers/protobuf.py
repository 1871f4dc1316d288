"""Protobuf serializers: plain Protobuf bytes, or the Confluent wire format with a registry.

Without a registry the bytes are the message's own encoding; with
``schema_registry_client_config`` they are ``b"\\x00"`` + the 4-byte big-endian schema id + the
message indexes + that encoding, written and read by ``confluent_kafka.schema_registry.protobuf``
(``pip install streamspark[schema-registry]``).

>>> from google.protobuf.struct_pb2 import Value
>>> data = ProtobufSerializer(Value)({"numberValue": 1.5}, None)
>>> ProtobufDeserializer(Value)(data, None)
{'numberValue': 1.5}
"""

from __future__ import annotations

from typing import Any, Optional, Union

from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.message import Message

from .base import Deserializer, SerializationContext, Serializer
from .confluent_registry import ConfluentBacked, as_serialization_error, import_optional, registry_client, where
from .exceptions import SerializationError
from .schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

__all__ = ("ProtobufSerializer", "ProtobufDeserializer")

#: the ``conf`` keys confluent-kafka's Protobuf serializer takes from SchemaRegistrySerializationConfig
_SERIALIZER_CONF = (
    "auto_register_schemas",
    "normalize_schemas",
    "use_latest_version",
    "subject_name_strategy",
    "skip_known_types",
    "reference_subject_name_strategy",
    "use_deprecated_format",
)


def _refuse_deprecated_format(config: Optional[SchemaRegistrySerializationConfig]) -> None:
    """confluent-kafka 2.x no longer writes or reads the pre-1.8 message indexes: refuse them
    when the (de)serializer is made, as Quix Streams does, not at its first record."""
    if config is not None and config.use_deprecated_format:
        raise ValueError("use.deprecated.format is no longer supported")


def _registry_protobuf() -> Any:
    return import_optional("confluent_kafka.schema_registry.protobuf", "schema-registry")


class ProtobufSerializer(ConfluentBacked, Serializer):
    """Serializes dicts (or ``msg_type`` instances, which is faster) to Protobuf bytes.

    :param msg_type: the Protobuf message class.
    :param deterministic: serialize deterministically (map keys in a predictable order).
        Default ``False``.
    :param ignore_unknown_fields: ignore dict keys that are not fields of ``msg_type`` instead of
        raising. Default ``False``.
    :param schema_registry_client_config: when given, write the Confluent wire format through
        confluent-kafka's ``ProtobufSerializer``.
    :param schema_registry_serialization_config: more settings for the registry (needs
        ``schema_registry_client_config``).

    A dict that does not fit ``msg_type`` raises :class:`SerializationError` naming the topic it
    was for (on produce: the output topic).
    """

    def __init__(
        self,
        msg_type: type[Message],
        deterministic: bool = False,
        ignore_unknown_fields: bool = False,
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
        schema_registry_serialization_config: Optional[SchemaRegistrySerializationConfig] = None,
    ) -> None:
        self._use_registry(schema_registry_client_config, schema_registry_serialization_config)
        _refuse_deprecated_format(schema_registry_serialization_config)
        self._msg_type = msg_type
        self._deterministic = deterministic
        self._ignore_unknown_fields = ignore_unknown_fields

    def _message(self, value: Union[Message, Any], ctx: Optional[SerializationContext]) -> Message:
        if isinstance(value, self._msg_type):
            return value
        # anything else goes through ParseDict, which also takes the JSON forms of the well-known
        # types (a string for a Timestamp, a number for a Value or an Int64Value)
        try:
            return ParseDict(value, self._msg_type(), ignore_unknown_fields=self._ignore_unknown_fields)
        except TypeError as exc:
            raise SerializationError(
                f"Value to serialize must be of type `{self._msg_type}` or dict, not `{type(value)}`.{where(ctx)}"
            ) from exc
        except Exception as exc:
            raise as_serialization_error(exc, f"Value does not fit {self._msg_type.__name__}", ctx) from exc

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes:
        message = self._message(value, ctx)
        if self._client_config is not None:
            data: bytes = self._call_confluent(message, ctx, "Protobuf serialization")
            return data
        try:
            return message.SerializeToString(deterministic=self._deterministic)
        except Exception as exc:
            raise as_serialization_error(exc, f"Value does not fit {self._msg_type.__name__}", ctx) from exc

    def _build_confluent(self) -> Any:
        assert self._client_config is not None
        conf: dict[str, Any] = {}
        if self._serialization_config is not None:
            conf.update(self._serialization_config.as_dict(include=_SERIALIZER_CONF))
        else:
            conf["use.deprecated.format"] = False
        return _registry_protobuf().ProtobufSerializer(self._msg_type, registry_client(self._client_config), conf=conf)


class ProtobufDeserializer(ConfluentBacked, Deserializer):
    """Deserializes Protobuf bytes into dicts (or ``msg_type`` instances with ``to_dict=False``).

    :param msg_type: the Protobuf message class.
    :param use_integers_for_enums: enum values as their numbers instead of their names.
        Default ``False``.
    :param preserving_proto_field_name: keep the field names of the ``.proto`` file; otherwise
        they are lowerCamelCase. Default ``False``.
    :param to_dict: return a dict (fields without presence tracking are included even when left
        at their defaults, e.g. ``0``, ``""``, ``[]``, the first enum value); ``False`` returns the
        message itself. Default ``True``.
    :param schema_registry_client_config: when given, read the Confluent wire format (magic
        byte, schema id, message indexes) with confluent-kafka's ``ProtobufDeserializer``.
        ``msg_type`` is the schema: the registry is not asked for the writer's schema, as in
        Quix Streams.
    :param schema_registry_serialization_config: more settings (needs
        ``schema_registry_client_config``); reading uses none of them.

    Bytes that do not parse as ``msg_type`` (or, with a registry, a wrong magic byte) raise
    :class:`SerializationError`.
    """

    def __init__(
        self,
        msg_type: type[Message],
        use_integers_for_enums: bool = False,
        preserving_proto_field_name: bool = False,
        to_dict: bool = True,
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
        schema_registry_serialization_config: Optional[SchemaRegistrySerializationConfig] = None,
    ) -> None:
        super().__init__()
        self._use_registry(schema_registry_client_config, schema_registry_serialization_config)
        _refuse_deprecated_format(schema_registry_serialization_config)
        self._msg_type = msg_type
        self._use_integers_for_enums = use_integers_for_enums
        self._preserving_proto_field_name = preserving_proto_field_name
        self._as_dict = to_dict

    def __call__(self, value: bytes, ctx: SerializationContext) -> Any:
        if self._client_config is not None:
            message = self._call_confluent(value, ctx, "Protobuf deserialization")
        else:
            try:
                message = self._msg_type.FromString(value)
            except Exception as exc:
                raise as_serialization_error(exc, f"Value is not a valid {self._msg_type.__name__}", ctx) from exc
        if not self._as_dict:
            return message
        return MessageToDict(
            message,
            always_print_fields_with_no_presence=True,
            use_integers_for_enums=self._use_integers_for_enums,
            preserving_proto_field_name=self._preserving_proto_field_name,
        )

    def _build_confluent(self) -> Any:
        # ``msg_type`` is the schema: the wire format's schema id is skipped, not looked up, so
        # reading needs no registry round trip (and works for ids the registry does not know)
        # (its one setting, use.deprecated.format, is refused when True: see __init__)
        assert self._client_config is not None
        return _registry_protobuf().ProtobufDeserializer(self._msg_type, {"use.deprecated.format": False})
