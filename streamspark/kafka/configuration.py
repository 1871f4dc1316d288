"""Kafka connection settings (broker address, SASL, SSL) with masked secrets."""

from __future__ import annotations

from typing import Any, Callable, Literal, Optional

from pydantic import AliasChoices, AliasGenerator, BaseModel, BeforeValidator, ConfigDict, Field, SecretStr
from typing_extensions import Annotated

__all__ = ("ConnectionConfig",)


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


#: ``sasl.mechanisms`` is librdkafka's own (plural) spelling of ``sasl.mechanism``
_MECHANISM = AliasChoices("sasl_mechanism", "sasl_mechanisms")


def _to_librdkafka(name: str) -> str:
    if name == "oauth_cb":  # confluent-kafka's own key for the token callback
        return name
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
    # names in any letter case, as librdkafka takes them
    security_protocol: Annotated[Optional[Literal["plaintext", "ssl", "sasl_plaintext", "sasl_ssl"]], BeforeValidator(_lower)] = (
        None
    )
    client_id: Optional[str] = None
    sasl_mechanism: Annotated[
        Optional[Literal["GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]],
        Field(validation_alias=_MECHANISM),
        BeforeValidator(_upper),
    ] = None
    sasl_username: Optional[str] = None
    sasl_password: Optional[SecretStr] = None
    sasl_kerberos_kinit_cmd: Optional[str] = None
    sasl_kerberos_keytab: Optional[str] = None
    sasl_kerberos_min_time_before_relogin: Optional[int] = None
    sasl_kerberos_service_name: Optional[str] = None
    sasl_kerberos_principal: Optional[str] = None
    #: librdkafka's OAUTHBEARER token callback: ``oauth_cb(config_str) -> (token, expiry_seconds)``;
    #: for Kafka clients built from this config directly (``Application`` refuses it: its tasks
    #: get the settings as text, see ``sasl_oauthbearer_method="oidc"``)
    oauth_cb: Optional[Callable[[str], tuple[str, float]]] = None
    sasl_oauthbearer_config: Optional[str] = None
    enable_sasl_oauthbearer_unsecure_jwt: Optional[bool] = None
    sasl_oauthbearer_method: Annotated[Optional[Literal["default", "oidc"]], BeforeValidator(_lower)] = None
    sasl_oauthbearer_client_id: Optional[str] = None
    sasl_oauthbearer_client_secret: Optional[SecretStr] = None
    sasl_oauthbearer_scope: Optional[str] = None
    sasl_oauthbearer_extensions: Optional[str] = None
    sasl_oauthbearer_token_endpoint_url: Optional[str] = None
    ssl_cipher_suites: Optional[str] = None
    ssl_curves_list: Optional[str] = None
    ssl_sigalgs_list: Optional[str] = None
    ssl_ca_location: Optional[str] = None
    ssl_ca_pem: Optional[SecretStr] = None
    ssl_ca_certificate_stores: Optional[str] = None
    ssl_crl_location: Optional[str] = None
    ssl_certificate_location: Optional[str] = None
    ssl_certificate_pem: Optional[SecretStr] = None
    ssl_key_location: Optional[str] = None
    ssl_key_password: Optional[SecretStr] = None
    ssl_key_pem: Optional[SecretStr] = None
    ssl_keystore_location: Optional[str] = None
    ssl_keystore_password: Optional[SecretStr] = None
    ssl_providers: Optional[str] = None
    ssl_engine_location: Optional[str] = None
    ssl_engine_id: Optional[str] = None
    enable_ssl_certificate_verification: Optional[bool] = None
    ssl_endpoint_identification_algorithm: Annotated[Optional[Literal["none", "https"]], BeforeValidator(_lower)] = None

    @classmethod
    def from_librdkafka_dict(cls, config: dict[str, Any], ignore_extras: bool = False) -> "ConnectionConfig":
        """Build from a librdkafka-style dict (``{"bootstrap.servers": ...}``).

        :param ignore_extras: drop keys that are not connection settings instead of raising.
        """
        fields = {name.replace(".", "_"): value for name, value in config.items()}
        if ignore_extras:
            fields = {k: v for k, v in fields.items() if k in cls.model_fields or k in _MECHANISM.choices}
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
