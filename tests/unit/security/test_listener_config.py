"""Listeners as Kafka configures them: names that are no URL schemes, the security protocol map, per-listener keys."""

from __future__ import annotations

import pytest

from wirebroker.config import BrokerConfig, ConfigError, Listener, parse_listener


@pytest.mark.parametrize(("text", "listener"), [
    ("PLAINTEXT://localhost:9092", Listener("PLAINTEXT", "localhost", 9092)),
    ("SASL_SSL://:9093", Listener("SASL_SSL", "", 9093)),
    ("sasl_plaintext://0.0.0.0:0", Listener("SASL_PLAINTEXT", "0.0.0.0", 0)),
    ("SSL://[::1]:9094", Listener("SSL", "::1", 9094)),
])
def test_listeners_parse_as_kafka_parses_them(text, listener):
    assert parse_listener(text, "listeners") == listener


@pytest.mark.parametrize("text", ["PLAINTEXT//localhost:9092", "PLAINTEXT://localhost", "SSL://host:70000"])
def test_malformed_listeners_are_refused_by_key(text):
    with pytest.raises(ConfigError, match="listeners"):
        parse_listener(text, "listeners")


def test_each_listener_gets_its_security_protocol_and_its_own_settings():
    config = BrokerConfig({
        "listeners": "PLAINTEXT://:0,SSL://:0,INTERNAL://:0",
        "listener.security.protocol.map": "INTERNAL:SASL_SSL",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
        "listener.name.internal.plain.sasl.jaas.config": "x required;",
    })
    assert config.security_protocols == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "INTERNAL": "SASL_SSL"}
    assert config.listener_setting("INTERNAL", "sasl.enabled.mechanisms") == ("SCRAM-SHA-512", "PLAIN")
    assert config.listener_setting("SSL", "sasl.enabled.mechanisms") == ("PLAIN",)
    assert config.listener_setting("INTERNAL", "plain.sasl.jaas.config") == "x required;"
    assert config.listener_setting("SSL", "plain.sasl.jaas.config") is None


def test_a_listener_without_a_security_protocol_is_refused():
    with pytest.raises(ConfigError, match="no security protocol for listener INTERNAL"):
        BrokerConfig({"listeners": "INTERNAL://:0"})
