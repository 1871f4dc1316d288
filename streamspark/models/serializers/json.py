"""JSON serializers (orjson), with optional JSON-Schema validation (Draft 2020-12) and JSON
Schema through a Confluent Schema Registry (``pip install streamspark[schema-registry]``).

The default ``dumps`` writes compact UTF-8 JSON (no spaces, non-ASCII characters as they are)
and, like the reference, takes only ``str`` dict keys and refuses ``datetime`` and dataclass
instances (convert them first, or pass your own ``dumps``).

>>> JSONSerializer()({"a": [1, "é"]}, None)
b'{"a":[1,"\xc3\xa9"]}'
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

import orjson

from ...utils.json import DUMPS_OPTIONS, dumps
from .base import Deserializer, SerializationContext, Serializer, context_free
from .confluent_registry import ConfluentBacked, import_optional, registry_client, where
from .exceptions import SerializationError

if TYPE_CHECKING:
    from .schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

__all__ = ("JSONSerializer", "JSONDeserializer", "default_dumps", "default_loads")

#: the default ``loads`` of JSONDeserializer: orjson's own function (``utils.json.loads`` wraps it
#: with the reference's parameter name; the per-message path calls orjson directly)
default_loads = orjson.loads

#: the default ``dumps`` of :class:`JSONSerializer`: compact JSON bytes, ``str`` keys only
#: (``utils.json.dumps``, as in the reference)
default_dumps = dumps


#: the ``conf`` keys confluent-kafka's JSON serializer takes from SchemaRegistrySerializationConfig
_SERIALIZER_CONF = ("auto_register_schemas", "normalize_schemas", "use_latest_version", "subject_name_strategy")


def _registry_json_schema() -> Any:
    return import_optional("confluent_kafka.schema_registry.json_schema", "schema-registry")


def _make_validator(schema: Optional[Mapping[str, Any]], validator: Any) -> Any:
    """The validator to use (``validator`` wins over ``schema``), its schema checked now.

    :raises jsonschema.SchemaError: the schema is not a valid JSON Schema.
    """
    if validator is None:
        if not schema:
            return None
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(schema)
    check, checked = getattr(validator, "check_schema", None), getattr(validator, "schema", None)
    if check is not None and checked is not None:
        check(checked)
    return validator


class _Validating:
    """Schema validation shared by both JSON classes; a validator built from ``schema`` is
    rebuilt after unpickling (validators may not pickle), a given one is kept as it is."""

    _schema: Optional[Mapping[str, Any]]
    _validator: Any
    _own_validator: bool

    def _set_validator(self, schema: Optional[Mapping[str, Any]], validator: Any) -> None:
        self._schema = schema
        self._own_validator = validator is None
        self._validator = _make_validator(schema, validator)

    def _validate(self, value: Any, ctx: Optional[SerializationContext]) -> None:
        from jsonschema import ValidationError

        try:
            self._validator.validate(value)
        except ValidationError as exc:
            raise SerializationError(f"JSON schema validation failed{where(ctx)}: {exc}") from exc

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._own_validator:
            state["_validator"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._own_validator:
            self._validator = _make_validator(self._schema, None)


@context_free
class JSONSerializer(ConfluentBacked, _Validating, Serializer):
    """Serializes values to JSON bytes.

    :param dumps: the function turning a value into ``bytes``/``str``
        (default: :func:`default_dumps`, orjson).
    :param schema: a JSON Schema every value must satisfy (Draft 2020-12); an invalid schema
        raises ``jsonschema.SchemaError`` here.
    :param validator: a ``jsonschema`` validator; takes precedence over ``schema``.
    :param schema_registry_client_config: when given, write the Confluent wire format (magic byte
        0, the 4-byte big-endian schema id, the JSON) through confluent-kafka's ``JSONSerializer``,
        registering/looking up ``schema`` in the registry (``schema`` is then required unless
        ``use_latest_version`` is set).
    :param schema_registry_serialization_config: more settings for the registry (needs
        ``schema_registry_client_config``).

    >>> JSONSerializer()({"a": 1}, None)
    b'{"a":1}'
    """

    def __init__(
        self,
        dumps: Callable[[Any], bytes | str] = default_dumps,
        schema: Optional[Mapping[str, Any]] = None,
        validator: Any = None,
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
        schema_registry_serialization_config: Optional[SchemaRegistrySerializationConfig] = None,
    ) -> None:
        self._use_registry(schema_registry_client_config, schema_registry_serialization_config)
        if (
            schema_registry_client_config is not None
            and not schema
            and not (schema_registry_serialization_config is not None and schema_registry_serialization_config.use_latest_version)
        ):
            raise ValueError("JSONSerializer with a Schema Registry needs a schema (or use_latest_version=True)")
        self._dumps = dumps
        self._set_validator(schema, validator)

    def __call__(self, value: Any, ctx: SerializationContext) -> bytes | str:
        if self._validator is not None:
            self._validate(value, ctx)
        if self._client_config is not None:
            data: bytes = self._call_confluent(value, ctx, "JSON serialization")
            return data
        try:
            return self._dumps(value)
        except (TypeError, ValueError) as exc:
            raise self.not_serializable(exc, ctx) from exc

    @staticmethod
    def not_serializable(exc: Exception, ctx: Optional[SerializationContext] = None) -> SerializationError:
        """The error for a value that ``dumps`` refused (also raised by the topic's direct path);
        with ``ctx`` it names the topic.

        >>> str(JSONSerializer.not_serializable(TypeError("set"), SerializationContext("out")))
        'Value is not JSON-serializable (topic "out", value): set'
        """
        return SerializationError(f"Value is not JSON-serializable{where(ctx)}: {exc}")

    def plain_dumps(self) -> Optional[Callable[[Any], bytes | str]]:
        """The bare ``dumps`` when this serializer does nothing else (no schema, ``__call__`` not
        overridden): the engine then calls it directly, once per output, and turns its
        ``TypeError``/``ValueError`` into :meth:`not_serializable`'s error. The default dumps is
        orjson's own function with its options bound (no wrapper frame)."""
        if type(self).__call__ is not JSONSerializer.__call__ or self._validator is not None or self.needs_context:
            return None
        if self._dumps is default_dumps:
            return functools.partial(orjson.dumps, option=DUMPS_OPTIONS)
        return self._dumps

    def _build_confluent(self) -> Any:
        assert self._client_config is not None
        conf: dict[str, Any] = {}
        if self._serialization_config is not None:
            conf.update(self._serialization_config.as_dict(include=_SERIALIZER_CONF))
        return _registry_json_schema().JSONSerializer(
            json.dumps(self._schema) if self._schema else None,
            registry_client(self._client_config),
            conf=conf,
            json_encode=self._dumps,
        )


@context_free
class JSONDeserializer(ConfluentBacked, _Validating, Deserializer):
    """Deserializes JSON bytes, optionally validating against a JSON Schema.

    :param loads: the function parsing ``bytes`` (orjson by default).
    :param schema: a JSON Schema every value must satisfy (Draft 2020-12); an invalid schema
        raises ``jsonschema.SchemaError`` here.
    :param validator: a ``jsonschema`` validator; takes precedence over ``schema``.
    :param schema_registry_client_config: when given, read the Confluent wire format through
        confluent-kafka's ``JSONDeserializer``: the writer's schema is fetched by the id in each
        message and the value validated against it (or against ``schema`` when given).

    Invalid JSON and values failing the schema raise :class:`SerializationError`; with a
    registry, so do a wrong magic byte and a schema id the registry does not know.

    >>> JSONDeserializer()(b'{"a": 1}', None)
    {'a': 1}
    """

    def __init__(
        self,
        loads: Callable[[bytes | bytearray], Any] = default_loads,
        schema: Optional[Mapping[str, Any]] = None,
        validator: Any = None,
        schema_registry_client_config: Optional[SchemaRegistryClientConfig] = None,
    ) -> None:
        super().__init__()
        self._loads = loads
        self._set_validator(schema, validator)
        self._use_registry(schema_registry_client_config)

    def plain_loads(self) -> Optional[Callable[[bytes | bytearray], Any]]:
        """The bare ``loads`` when this deserializer does nothing else (no schema, ``__call__`` not
        overridden): the engine then calls it directly, once per message, and turns its
        ``TypeError``/``ValueError`` into :meth:`not_deserializable`'s error."""
        if type(self).__call__ is JSONDeserializer.__call__ and self._validator is None and not self.needs_context:
            return self._loads
        return None

    @staticmethod
    def not_deserializable(exc: Exception) -> SerializationError:
        """The error for bytes that ``loads`` refused (also raised by the engine's direct path)."""
        return SerializationError(f"Value is not valid JSON: {exc}")

    def __call__(self, value: bytes, ctx: SerializationContext) -> Any:
        if self._client_config is not None:
            data = self._call_confluent(value, ctx, "JSON deserialization")
        else:
            try:
                data = self._loads(value)
            except (TypeError, ValueError) as exc:
                raise self.not_deserializable(exc) from exc
        if self._validator is not None:
            self._validate(data, ctx)
        return data

    def _build_confluent(self) -> Any:
        assert self._client_config is not None
        return _registry_json_schema().JSONDeserializer(
            json.dumps(self._schema) if self._schema else None,
            schema_registry_client=registry_client(self._client_config),
            json_decode=self._loads,
        )
