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
