"""How topic and broker configs are described: values as Kafka writes them, sources and synonyms as Kafka lists them."""

from __future__ import annotations

from wirebroker.apis.topic_configs import (
    ConfigSource,
    ConfigType,
    broker_config_entries,
    config_value_string,
    topic_config_entries,
    topic_config_type,
)
from wirebroker.config import BrokerConfig
from wirebroker.log.config import CONFIG_KEYS, INTERNAL_CONFIG_NAMES


def entries(overrides=None, **broker_props):
    broker = BrokerConfig({k.replace("_", "."): v for k, v in broker_props.items()})
    return {e.name: e for e in topic_config_entries(overrides or {}, broker)}


def synonyms(entry):
    return [(s.name, s.value, s.source) for s in entry.describe_synonyms()]


def test_every_public_topic_key_is_described_once_sorted():
    described = list(entries())
    assert described == sorted(k.name for k in CONFIG_KEYS if k.name not in INTERNAL_CONFIG_NAMES)


def test_defaults_come_from_the_broker_synonym_default():
    entry = entries()["cleanup.policy"]
    assert entry.value == "delete"
    assert entry.describe_source() is ConfigSource.DEFAULT_CONFIG
    assert synonyms(entry) == [("log.cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG)]


def test_topic_override_comes_first_and_wins():
    entry = entries({"segment.bytes": "2000000"}, log_segment_bytes="3000000")["segment.bytes"]
    assert entry.value == "2000000"
    assert entry.describe_source() is entry.effective_source() is ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert synonyms(entry) == [
        ("segment.bytes", "2000000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        ("log.segment.bytes", "3000000", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG),
    ]


def test_static_broker_key_is_the_source_of_the_topic_default():
    entry = entries(log_segment_bytes="3000000")["segment.bytes"]
    assert entry.value == "3000000"
    assert entry.describe_source() is ConfigSource.STATIC_BROKER_CONFIG


def test_a_lower_priority_synonym_is_hidden_from_describe_but_not_from_create():
    # Kafka's ConfigHelper drops synonyms until the first one (log.retention.ms), so DescribeConfigs shows none and
    # DEFAULT_CONFIG, while CreateTopics (resolveEffectiveTopicConfig) names the static broker key.
    entry = entries(log_retention_hours="48")["retention.ms"]
    assert entry.value == str(48 * 3600 * 1000)
    assert synonyms(entry) == []
    assert entry.describe_source() is ConfigSource.DEFAULT_CONFIG
    assert entry.effective_source() is ConfigSource.STATIC_BROKER_CONFIG


def test_first_synonym_set_lists_the_lower_ones_after_it():
    entry = entries(log_retention_ms="1000", log_retention_hours="48")["retention.ms"]
    assert entry.value == "1000"
    assert synonyms(entry) == [
        ("log.retention.ms", "1000", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "48", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]


def test_values_are_written_as_kafka_writes_them():
    assert config_value_string(True) == "true"
    assert config_value_string(("compact", "delete")) == "compact,delete"
    assert config_value_string(0.5) == "0.5"
    assert config_value_string(None) is None
    assert entries({"cleanup.policy": "compact, delete"})["cleanup.policy"].value == "compact,delete"


def test_types_follow_kafkas_config_definitions():
    assert topic_config_type("segment.bytes") is ConfigType.INT
    assert topic_config_type("retention.ms") is ConfigType.LONG
    assert topic_config_type("cleanup.policy") is ConfigType.LIST
    assert topic_config_type("min.cleanable.dirty.ratio") is ConfigType.DOUBLE
    assert topic_config_type("preallocate") is ConfigType.BOOLEAN
    assert topic_config_type("compression.type") is ConfigType.STRING
    assert topic_config_type("no.such.key") is ConfigType.UNKNOWN


def test_broker_entries_are_read_only_with_static_and_default_sources():
    described = {e.name: e for e in broker_config_entries(BrokerConfig({"num.partitions": "4"}))}
    assert all(e.read_only for e in described.values())
    assert described["num.partitions"].value == "4"
    assert described["num.partitions"].describe_source() is ConfigSource.STATIC_BROKER_CONFIG
    assert described["delete.topic.enable"].value == "true"
    assert described["delete.topic.enable"].describe_source() is ConfigSource.DEFAULT_CONFIG
    assert described["log.retention.hours"].value == "168"
    assert described["log.retention.ms"].value is None
    assert described["log.retention.hours"].config_type is ConfigType.INT
    assert described["log.retention.bytes"].config_type is ConfigType.LONG
    assert described["listeners"].config_type is ConfigType.LIST
