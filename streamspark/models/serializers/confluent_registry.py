"""The confluent-kafka Schema Registry clients behind the Avro, Protobuf and JSON serializers.

Kept apart from :mod:`.schema_registry` (pydantic settings) so that importing the JSON
serializers, which every Spark worker does, stays light: the registry libraries load on first use.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional

from .base import SerializationContext
from .exceptions import SerializationError

if TYPE_CHECKING:
    from .schema_registry import SchemaRegistryClientConfig, SchemaRegistrySerializationConfig

__all__ = ("ConfluentBacked", "import_optional", "registry_client", "registry_context", "as_serialization_error", "where")


def import_optional(module: str, extra: str) -> ModuleType:
    """Import an optional client library, or raise ``ImportError`` naming the extra to install.

    >>> import_optional("json", "avro").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is needed here but cannot be imported ({exc}); install it with `pip install streamspark[{extra}]`"
        ) from exc


_CLIENTS: dict[tuple[Any, ...], Any] = {}
_CLIENTS_LOCK = threading.Lock()


def registry_client(config: SchemaRegistryClientConfig) -> Any:
    """The process's Schema Registry client for ``config`` (one per distinct configuration, so
    serializers share the client's schema caches, and ``mock://`` registries their contents).

    :raises ImportError: ``streamspark[schema-registry]`` is not installed.
    """
    conf = config.as_dict(plaintext_secrets=True)
    key = tuple(sorted(conf.items()))
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            registry = import_optional("confluent_kafka.schema_registry", "schema-registry")
            client = registry.SchemaRegistryClient.new_client(conf)
            _CLIENTS[key] = client
    return client


def registry_context(ctx: Optional[SerializationContext], owner: str) -> Any:
    """confluent-kafka's ``SerializationContext`` for ours (registry subjects need the topic).

    :raises SerializationError: ``ctx`` is missing (the topic is unknown).
    """
    if ctx is None:
        raise SerializationError(f"{owner} with a Schema Registry needs a SerializationContext (the topic)")
    from confluent_kafka.serialization import SerializationContext as ConfluentContext

    field: Any = ctx.field  # confluent-kafka's MessageField values are these same strings
    return ConfluentContext(ctx.topic, field, ctx.headers)


def where(ctx: Optional[SerializationContext]) -> str:
    """`` (topic "<name>", key|value)`` for error messages, or nothing without a context.

    >>> where(SerializationContext("readings"))
    ' (topic "readings", value)'
    """
    return "" if ctx is None else f' (topic "{ctx.topic}", {ctx.field})'


def as_serialization_error(exc: Exception, what: str, ctx: Optional[SerializationContext] = None) -> SerializationError:
    """``exc`` as a :class:`SerializationError` (kept as it is when it already is one); with
    ``ctx`` the message names the topic and the field (on produce: the output topic).

    >>> str(as_serialization_error(ValueError("bad"), "Avro value"))
    'Avro value: bad'
    >>> str(as_serialization_error(ValueError("bad"), "Avro value", SerializationContext("out")))
    'Avro value (topic "out", value): bad'
    """
    if isinstance(exc, SerializationError):
        return exc
    return SerializationError(f"{what}{where(ctx)}: {str(exc) or type(exc).__name__}")


class ConfluentBacked:
    """Mixin of the serializers that hand over to a confluent-kafka registry (de)serializer.

    The confluent-kafka object is built on first use by ``_build_confluent`` and is not pickled
    (Spark ships serializers to its workers; each builds its own)."""

    _confluent: Any = None
    _client_config: Optional[SchemaRegistryClientConfig] = None

    @property
    def needs_context(self) -> bool:
        """True with a registry: subject names come from the topic (see ``base.reads_context``)."""
        return self._client_config is not None

    _serialization_config: Optional[SchemaRegistrySerializationConfig] = None

    def _use_registry(
        self,
        client_config: Optional[SchemaRegistryClientConfig],
        serialization_config: Optional[SchemaRegistrySerializationConfig] = None,
    ) -> None:
        """Keep the registry settings (none: no registry).

        :raises ValueError: a serialization config without a client config.
        """
        if serialization_config is not None and client_config is None:
            raise ValueError("schema_registry_serialization_config needs schema_registry_client_config")
        self._client_config = client_config
        self._serialization_config = serialization_config

    def _build_confluent(self) -> Any:
        raise NotImplementedError

    def _call_confluent(self, value: Any, ctx: Optional[SerializationContext], what: str) -> Any:
        """``value`` through the confluent-kafka (de)serializer; every failure (bad record, wrong
        magic byte, unknown schema id, registry unreachable) as a :class:`SerializationError`."""
        confluent_ctx = registry_context(ctx, type(self).__name__)
        try:
            if self._confluent is None:
                self._confluent = self._build_confluent()
            return self._confluent(value, confluent_ctx)
        except Exception as exc:
            raise as_serialization_error(exc, f"{what} through the Schema Registry failed", ctx) from exc

    def __getstate__(self) -> dict[str, Any]:
        inherited: Any = super().__getstate__()  # type: ignore[misc]
        state = dict(inherited) if inherited else dict(self.__dict__)
        state.pop("_confluent", None)
        return state
