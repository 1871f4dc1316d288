"""Avro serializers: plain schemaless Avro (fastavro), or the Confluent wire format with a registry.

Without a registry the bytes are fastavro's schemaless encoding of the record, nothing else;
with ``schema_registry_client_config`` they are ``b"\\x00"`` + the 4-byte big-endian schema id +
that encoding, written and read by ``confluent_kafka.schema_registry.avro``. Needs
``pip install streamspark[avro]`` (and ``[schema-registry]`` for a registry).

>>> schema = {"type": "record", "name": "Reading", "fields": [{"name": "v", "type": "int"}]}
>>> data = AvroSerializer(schema)({"v": 3}, None)
>>> data
b'\\x06'
>>> AvroDeserializer(schema)(data, None)
{'v': 3}
"""

from __future__ import annotations

import io
import json
from typing import Any, Mapping, Optional, Union

from ._avro_arrow import ArrowAvroDecoder, ArrowAvroEncoder
from .base import Deserializer, SerializationContext, Serializer
from .confluent_registry import ConfluentBacked, as_serialization_error, import_optional, registry_client
from .schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

__all__ = ("AvroSerializer", "AvroDeserializer", "ArrowAvroDecoder", "ArrowAvroEncoder")

#: an Avro schema as fastavro takes it: a dict, a list (union) or a type name
Schema = Union[str, list[Any], Mapping[str, Any]]

#: the ``conf`` keys confluent-kafka's Avro serializer takes from SchemaRegistrySerializationConfig
_SERIALIZER_CONF = ("auto_register_schemas", "normalize_schemas", "use_latest_version", "subject_name_strategy")


_FASTAVRO: Any = None


def _fastavro() -> Any:
    """fastavro, imported once (the serializers call it per message)."""
    global _FASTAVRO
    if _FASTAVRO is None:
        _FASTAVRO = import_optional("fastavro", "avro")
    return _FASTAVRO


class AvroSerializer(ConfluentBacked, Serializer):
    """Serializes dicts to Avro (see fastavro's ``schemaless_writer``).

    :param schema: the Avro schema (parsed once, here: an invalid schema raises here).
    :param strict: refuse records whose fields differ from the schema's. Default ``False``.
    :param strict_allow_default: as ``strict``, but a missing field that has a default is fine.
        Default ``False``.
    :param disable_tuple_notation: do not read ``(name, record)`` tuples as a union branch choice.
        Default ``False``.
    :param schema_registry_client_config: when given, write the Confluent wire format through
        confluent-kafka's ``AvroSerializer``, registering/looking up ``schema`` in the registry.
    :param schema_registry_serialization_config: more settings for the registry (needs
        ``schema_registry_client_config``).

    A record that does not match the schema raises :class:`SerializationError` naming the topic
    it was for (on produce: the output topic).
    """

    def __init__(
        self,
        schema: Schema,
        strict: bool = False,
        strict_allow_default: bool = False,
        disable_tuple_notation: bool = False,
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
        schema_registry_serialization_config: Optional[SchemaRegistrySerializationConfig] = None,
    ) -> None:
        self._use_registry(schema_registry_client_config, schema_registry_serialization_config)
        self._schema = schema
        self._parsed = _fastavro().parse_schema(schema)
        self._strict = strict
        self._strict_allow_default = strict_allow_default
        self._disable_tuple_notation = disable_tuple_notation
        self._chunk_encoder: Any = False  # not looked for yet

    def chunk_encoder(self) -> Optional[ArrowAvroEncoder]:
        """An encoder of whole chunks of values into the bytes this serializer gives each of
        them, or None when it writes through a registry, with ``strict``/``strict_allow_default``
        /``disable_tuple_notation``, or with a schema that encoder does not cover (see
        :class:`~._avro_arrow.ArrowAvroEncoder`).

        >>> schema = {"type": "record", "name": "R", "fields": [{"name": "v", "type": "long"}]}
        >>> AvroSerializer(schema).chunk_encoder().encode([{"v": 3}, {"v": -1}])
        [b'\\x06', b'\\x01']
        >>> AvroSerializer(schema, strict=True).chunk_encoder() is None
        True
        """
        if getattr(self, "_chunk_encoder", False) is False:
            # a subclass that changes what a value becomes keeps the per-record path
            plain = (
                type(self).__call__ is AvroSerializer.__call__
                and self._client_config is None
                and not (self._strict or self._strict_allow_default or self._disable_tuple_notation)
            )
            self._chunk_encoder = ArrowAvroEncoder.for_schema(self._parsed) if plain else None
        encoder: Optional[ArrowAvroEncoder] = self._chunk_encoder
        return encoder

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes:
        if self._client_config is not None:
            data: bytes = self._call_confluent(value, ctx, "Avro serialization")
            return data
        buffer = io.BytesIO()
        try:
            if self._strict or self._strict_allow_default or self._disable_tuple_notation:
                _fastavro().schemaless_writer(
                    buffer,
                    self._parsed,
                    value,
                    strict=self._strict,
                    strict_allow_default=self._strict_allow_default,
                    disable_tuple_notation=self._disable_tuple_notation,
                )
            else:  # fastavro's defaults
                _fastavro().schemaless_writer(buffer, self._parsed, value)
        except Exception as exc:
            raise as_serialization_error(exc, "Value does not match the Avro schema", ctx) from exc
        return buffer.getvalue()

    def _build_confluent(self) -> Any:
        assert self._client_config is not None
        avro = import_optional("confluent_kafka.schema_registry.avro", "schema-registry")
        conf: dict[str, Any] = {
            "validate.strict": self._strict,
            "validate.strict.allow.default": self._strict_allow_default,
        }
        if self._serialization_config is not None:
            conf.update(self._serialization_config.as_dict(include=_SERIALIZER_CONF))
        return avro.AvroSerializer(registry_client(self._client_config), json.dumps(self._schema), conf=conf)


#: fastavro ``schemaless_reader``'s defaults for the options AvroDeserializer passes on
_READER_DEFAULTS = {
    "return_record_name": False,
    "return_record_name_override": False,
    "return_named_type": False,
    "return_named_type_override": False,
    "handle_unicode_errors": "strict",
}


class AvroDeserializer(ConfluentBacked, Deserializer):
    """Deserializes Avro into dicts (see fastavro's ``schemaless_reader``).

    :param schema: the writer's Avro schema; needed unless ``schema_registry_client_config`` is
        given (the registry then supplies the writer's schema by the id in each message).
    :param reader_schema: the schema to read into when it changed since the data was written.
    :param return_record_name: read a union of records as ``(record name, record)`` tuples.
    :param return_record_name_override: with ``return_record_name``, only unions of more than one
        record give tuples.
    :param return_named_type: read a union of named types as ``(type name, value)`` tuples
        (``return_record_name*`` are then ignored).
    :param return_named_type_override: with ``return_named_type``, only unions of more than one
        named type give tuples.
    :param handle_unicode_errors: the ``errors`` argument of ``bytes.decode`` for Avro strings.
    :param schema_registry_client_config: when given, read the Confluent wire format through
        confluent-kafka's ``AvroDeserializer`` (the magic byte and schema id are checked): the
        registry supplies the writer's schema, and ``schema`` (or else ``reader_schema``) is
        the schema read into.

    Bytes that are not valid for the schema (or, with a registry, a wrong magic byte or a schema
    id the registry does not know) raise :class:`SerializationError`.
    """

    def __init__(
        self,
        schema: Optional[Schema] = None,
        reader_schema: Optional[Schema] = None,
        return_record_name: bool = False,
        return_record_name_override: bool = False,
        return_named_type: bool = False,
        return_named_type_override: bool = False,
        handle_unicode_errors: str = "strict",
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
    ) -> None:
        super().__init__()
        self._use_registry(schema_registry_client_config)
        if not schema and schema_registry_client_config is None:
            raise ValueError("Either `schema` or `schema_registry_client_config` must be provided.")
        fastavro = _fastavro()
        self._schema = schema
        self._writer = fastavro.parse_schema(schema) if schema else None
        self._reader_schema = reader_schema
        self._reader = fastavro.parse_schema(reader_schema) if reader_schema is not None else None
        self._options = {
            "return_record_name": return_record_name,
            "return_record_name_override": return_record_name_override,
            "return_named_type": return_named_type,
            "return_named_type_override": return_named_type_override,
            "handle_unicode_errors": handle_unicode_errors,
        }
        #: every option at fastavro's default: the per-message call passes none of them
        self._default_options = self._options == _READER_DEFAULTS
        self._arrow_decoder: Any = False  # not looked for yet

    def arrow_decoder(self) -> Optional[ArrowAvroDecoder]:
        """A decoder of whole chunks of this deserializer's messages into Arrow tables (which
        give the dicts this deserializer gives), or None when it reads through a registry,
        into a ``reader_schema``, with non-default options or a schema that decoder does not
        cover (see :class:`~._avro_arrow.ArrowAvroDecoder`).

        >>> schema = {"type": "record", "name": "R", "fields": [{"name": "v", "type": "long"}]}
        >>> AvroDeserializer(schema).arrow_decoder().decode([b"\\x06"]).to_pylist()
        [{'v': 3}]
        >>> AvroDeserializer(schema, return_record_name=True).arrow_decoder() is None
        True
        """
        if self._arrow_decoder is False:
            # a subclass that changes what a message becomes keeps the per-record path
            plain = (
                type(self).__call__ is AvroDeserializer.__call__
                and self._client_config is None
                and self._reader is None
                and self._default_options
            )
            self._arrow_decoder = ArrowAvroDecoder.for_schema(self._writer) if plain else None
        decoder: Optional[ArrowAvroDecoder] = self._arrow_decoder
        return decoder

    def __call__(self, value: bytes, ctx: SerializationContext) -> Any:
        if self._client_config is not None:
            return self._call_confluent(value, ctx, "Avro deserialization")
        try:
            if self._default_options:
                return _fastavro().schemaless_reader(io.BytesIO(value), self._writer, self._reader)
            return _fastavro().schemaless_reader(io.BytesIO(value), self._writer, self._reader, **self._options)
        except Exception as exc:
            raise as_serialization_error(exc, "Value is not valid Avro for the schema", ctx) from exc

    def _build_confluent(self) -> Any:
        assert self._client_config is not None
        avro = import_optional("confluent_kafka.schema_registry.avro", "schema-registry")
        # as the reference does: ``schema`` is the schema to read into (the writer's comes from
        # the registry); ``reader_schema`` serves when ``schema`` is not given
        reader = self._schema if self._schema else self._reader_schema
        return avro.AvroDeserializer(
            registry_client(self._client_config),
            json.dumps(reader) if reader is not None else None,
            return_record_name=bool(self._options["return_record_name"]),
        )
