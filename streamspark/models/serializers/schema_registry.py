"""Confluent Schema Registry settings, shared by the Avro, Protobuf and JSON serializers.

Give a :class:`SchemaRegistryClientConfig` to a serializer and it writes (or reads) the
Confluent wire format: a zero magic byte, the 4-byte big-endian schema id of the registry, then
the Avro/Protobuf/JSON payload. The registry client comes from ``confluent_kafka.schema_registry``
(``pip install streamspark[schema-registry]``); a ``mock://`` URL uses confluent-kafka's own
in-memory registry, shared by every serializer of the process that names the same URL.

>>> config = SchemaRegistryClientConfig(url="http://localhost:8081", basic_auth_user_info="u:p")
>>> sorted(config.as_dict())
['basic.auth.user.info', 'url']
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable, Collection, Optional

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from .confluent_registry import import_optional

__all__ = ("SchemaRegistryClientConfig", "SchemaRegistrySerializationConfig")

#: Callable(SerializationContext, record name) -> subject name
SubjectNameStrategy = Callable[..., str]
#: Callable(SerializationContext, SchemaReference) -> subject name
ReferenceSubjectNameStrategy = Callable[..., str]


def _registry_module() -> ModuleType:
    return import_optional("confluent_kafka.schema_registry", "schema-registry")


def _topic_subject_name_strategy() -> SubjectNameStrategy:
    strategy: SubjectNameStrategy = _registry_module().topic_subject_name_strategy
    return strategy


def _reference_subject_name_strategy() -> ReferenceSubjectNameStrategy:
    strategy: ReferenceSubjectNameStrategy = _registry_module().reference_subject_name_strategy
    return strategy


class _DottedSettings(BaseSettings):
    """pydantic settings whose :meth:`as_dict` gives confluent-kafka's dotted configuration keys.

    As with any ``pydantic_settings.BaseSettings``, a field not given as an argument is read from
    the environment variable of its name (``URL``, ``SSL_CA_LOCATION`` ...)."""

    def as_dict(self, plaintext_secrets: bool = False, include: Optional[Collection[str]] = None) -> dict[str, Any]:
        """The values that are set, under their dotted names (``ssl_ca_location`` ->
        ``ssl.ca.location``); secrets stay masked unless ``plaintext_secrets``.

        :param include: only these fields.
        """
        values: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None or (include is not None and name not in include):
                continue
            if isinstance(value, SecretStr) and plaintext_secrets:
                value = value.get_secret_value()
            values[name.replace("_", ".")] = value
        return values

    def __str__(self) -> str:
        return str(self.as_dict())


class SchemaRegistryClientConfig(_DottedSettings):
    """How to reach a Schema Registry.

    :ivar url: the Schema Registry URL (``mock://name`` for confluent-kafka's in-memory registry).
    :ivar ssl_ca_location: path to the CA certificate file that verifies the registry's key.
    :ivar ssl_key_location: path to the client's private key (PEM); ``ssl_certificate_location``
        must be set too.
    :ivar ssl_certificate_location: path to the client's public key (PEM); may be set alone when
        the PEM also holds the private key.
    :ivar basic_auth_user_info: HTTP credentials as ``username:password`` (by default taken from
        the URL when it has them).

    >>> SchemaRegistryClientConfig(url="mock://demo").as_dict()
    {'url': 'mock://demo'}
    >>> SchemaRegistryClientConfig(url="http://sr", basic_auth_user_info="u:p").as_dict(plaintext_secrets=True)
    {'url': 'http://sr', 'basic.auth.user.info': 'u:p'}
    """

    url: str
    ssl_ca_location: Optional[str] = None
    ssl_key_location: Optional[str] = None
    ssl_certificate_location: Optional[str] = None
    basic_auth_user_info: Optional[SecretStr] = None


class SchemaRegistrySerializationConfig(_DottedSettings):
    """How a serializer talks to the Schema Registry (needs a :class:`SchemaRegistryClientConfig`).

    :ivar auto_register_schemas: register the serializer's schema under its subject when it is not
        there yet (default True).
    :ivar normalize_schemas: normalize schemas before registering or looking them up.
    :ivar use_latest_version: serialize with the subject's latest schema version (no check that
        it is backwards compatible with the value).
    :ivar subject_name_strategy: ``Callable(SerializationContext, str) -> str`` building subject
        names (default ``confluent_kafka.schema_registry.topic_subject_name_strategy``).
    :ivar skip_known_types: skip known types when resolving Protobuf schema dependencies.
    :ivar reference_subject_name_strategy: subject names of schema references (default
        ``confluent_kafka.schema_registry.reference_subject_name_strategy``).
    :ivar use_deprecated_format: Protobuf only: write message indexes without zig-zag encoding,
        for consumers on confluent-kafka-python older than 1.8.

    Building one needs ``pip install streamspark[schema-registry]`` (the default strategies are
    confluent-kafka's functions).

    >>> SchemaRegistrySerializationConfig().as_dict(include={"use_latest_version"})
    {'use.latest.version': False}
    """

    auto_register_schemas: bool = True
    normalize_schemas: bool = False
    use_latest_version: bool = False
    subject_name_strategy: SubjectNameStrategy = Field(default_factory=_topic_subject_name_strategy)
    skip_known_types: bool = False
    reference_subject_name_strategy: ReferenceSubjectNameStrategy = Field(default_factory=_reference_subject_name_strategy)
    use_deprecated_format: bool = False
