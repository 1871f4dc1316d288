from __future__ import annotations

import pytest
from pydantic import ValidationError

from streamspark import ConnectionConfig


def test_secrets_masked_in_repr_plain_in_librdkafka_dict():
    cfg = ConnectionConfig(
        bootstrap_servers="h:9092",
        security_protocol="sasl_ssl",
        sasl_mechanism="PLAIN",
        sasl_username="u",
        sasl_password="p4ss",
        ssl_key_password="kp",
    )
    assert "p4ss" not in repr(cfg) and "kp" not in repr(cfg)
    d = cfg.as_librdkafka_dict()
    assert d == {
        "bootstrap.servers": "h:9092",
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "p4ss",
        "ssl.key.password": "kp",
    }
    assert cfg.as_librdkafka_dict(plaintext_secrets=False)["sasl.password"] == "**********"


def test_from_librdkafka_dict():
    cfg = ConnectionConfig.from_librdkafka_dict(
        {"bootstrap.servers": "h:1", "sasl.username": "u", "linger.ms": 5}, ignore_extras=True
    )
    assert cfg.sasl_username == "u"
    with pytest.raises(ValidationError):
        ConnectionConfig.from_librdkafka_dict({"bootstrap.servers": "h:1", "linger.ms": 5})


def test_names_in_any_letter_case_are_normalised_as_librdkafka_spells_them():
    cfg = ConnectionConfig(
        bootstrap_servers="h:1",
        security_protocol="SASL_SSL",
        sasl_mechanism="scram-sha-256",
        sasl_oauthbearer_method="OIDC",
        ssl_endpoint_identification_algorithm="HTTPS",
    )
    assert cfg.as_librdkafka_dict() == {
        "bootstrap.servers": "h:1",
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.oauthbearer.method": "oidc",
        "ssl.endpoint.identification.algorithm": "https",
    }
    with pytest.raises(ValidationError):
        ConnectionConfig(bootstrap_servers="h:1", security_protocol="tls")


@pytest.mark.parametrize("ignore_extras", [False, True])
def test_librdkafkas_plural_sasl_mechanisms_is_taken(ignore_extras):
    cfg = ConnectionConfig.from_librdkafka_dict({"bootstrap.servers": "h:1", "sasl.mechanisms": "PLAIN"}, ignore_extras)
    assert cfg.sasl_mechanism == "PLAIN"
    assert cfg.as_librdkafka_dict() == {"bootstrap.servers": "h:1", "sasl.mechanism": "PLAIN"}


def test_client_oauth_and_ssl_store_settings_reach_librdkafka_under_their_names():
    def token(config: str) -> tuple[str, float]:
        return "t", 0.0

    cfg = ConnectionConfig(
        bootstrap_servers="h:1",
        client_id="app-1",
        oauth_cb=token,
        sasl_oauthbearer_client_secret="cs",
        ssl_keystore_location="/k.p12",
        ssl_keystore_password="kp",
        enable_ssl_certificate_verification=False,
        sasl_kerberos_min_time_before_relogin=60000,
    )
    assert "cs" not in repr(cfg) and "'kp'" not in repr(cfg)
    assert cfg.as_librdkafka_dict() == {
        "bootstrap.servers": "h:1",
        "client.id": "app-1",
        "oauth_cb": token,
        "sasl.oauthbearer.client.secret": "cs",
        "ssl.keystore.location": "/k.p12",
        "ssl.keystore.password": "kp",
        "enable.ssl.certificate.verification": False,
        "sasl.kerberos.min.time.before.relogin": 60000,
    }


def test_an_application_refuses_an_oauth_callback_and_names_the_way_that_works():
    from streamspark import Application

    cfg = ConnectionConfig(bootstrap_servers="h:1", oauth_cb=lambda config: ("t", 0.0))
    with pytest.raises(ValueError, match="oauth_cb=.*not supported.*sasl_oauthbearer_method='oidc'"):
        Application(broker_address=cfg, loglevel=None)
