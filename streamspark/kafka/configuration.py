"""Kafka connection settings (broker address, SASL, SSL) with masked secrets."""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import AliasGenerator, BaseModel, ConfigDict, SecretStr

__all__ = ("ConnectionConfig",)


def _to_librdkafka(name: str) -> str:
    return name.replace("__", "@").replace("_", ".").replace("@", "_")


class ConnectionConfig(BaseModel):
    """Connection settings for Kafka clients, in librdkafka's vocabulary.

    Secrets are masked in ``repr`` and plain in :meth:`as_librdkafka_dict`.
    Environment variables are ignored: pass values explicitly.

    >>> cfg = ConnectionConfig(bootstrap_servers="127.0.0.1:9092", sasl_password="s3cret")
    >>> "s3cret" in repr(cfg)
    False
    >>> cfg.as_librdkafka_dict()["sasl.password"]
    's3cret'
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=AliasGenerator(serialization_alias=_to_librdkafka),
    )

    bootstrap_servers: str
    security_protocol: Optional[Literal["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"]] = None
    sasl_mechanism: Optional[Literal["GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]] = None
    sasl_username: Optional[str] = None
    sasl_password: Optional[SecretStr] = None
    sasl_oauthbearer_config: Optional[str] = None
    sasl_kerberos_service_name: Optional[str] = None
    sasl_kerberos_keytab: Optional[str] = None
    sasl_kerberos_principal: Optional[str] = None
    ssl_ca_location: Optional[str] = None
    ssl_ca_pem: Optional[SecretStr] = None
    ssl_certificate_location: Optional[str] = None
    ssl_certificate_pem: Optional[SecretStr] = None
    ssl_key_location: Optional[str] = None
    ssl_key_password: Optional[SecretStr] = None
    ssl_key_pem: Optional[SecretStr] = None
    ssl_endpoint_identification_algorithm: Optional[str] = None

    @classmethod
    def from_librdkafka_dict(cls, config: dict[str, Any], ignore_extras: bool = False) -> "ConnectionConfig":
        """Build from a librdkafka-style dict (``{"bootstrap.servers": ...}``).

        :param ignore_extras: drop keys that are not connection settings instead of raising.
        """
        fields = {name.replace(".", "_"): value for name, value in config.items()}
        if ignore_extras:
            fields = {k: v for k, v in fields.items() if k in cls.model_fields}
        return cls(**fields)

    def as_librdkafka_dict(self, plaintext_secrets: bool = True) -> dict[str, Any]:
        """Return librdkafka settings; secrets are plain text unless ``plaintext_secrets=False``."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value() if plaintext_secrets else str(value)
            out[_to_librdkafka(name)] = value
        return out
