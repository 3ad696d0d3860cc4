"""How topic and broker configurations are described to clients (Kafka's ConfigHelper and KafkaConfigSchema).

DescribeConfigs and CreateTopics (v5+) both answer with a topic's every config key, its effective value and where
that value comes from. A value comes from, in order: the topic's own override (DYNAMIC_TOPIC_CONFIG), a broker key
set in the broker's properties or `--override` (STATIC_BROKER_CONFIG), else the default (DEFAULT_CONFIG). This
broker has no dynamic broker configs, so DYNAMIC_BROKER_CONFIG and DYNAMIC_DEFAULT_BROKER_CONFIG never appear.

`ConfigEntry.synonyms` lists every place that sets the key, highest priority first: the topic override, then the
broker keys of Kafka's ServerTopicConfigSynonyms that are set statically, then those that have a default, each
group in the synonym table's order. The two APIs read it differently, as Kafka does:
- DescribeConfigs (`describe_synonyms`) keeps the broker part only from the first entry named like the topic key's
  first broker synonym on (Kafka's `dropWhile(s => s.name != name)` in ConfigHelper.configSynonyms): with
  `log.retention.hours` set but not `log.retention.ms`, retention.ms shows no synonym and source DEFAULT_CONFIG.
- CreateTopics (`effective_source`) names the first synonym that is set (KafkaConfigSchema.resolveEffectiveTopicConfig).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from wirebroker.config import BROKER_KEYS, BrokerConfig
from wirebroker.log import config as log_config
from wirebroker.log.config import (
    CONFIG_KEYS,
    INTERNAL_CONFIG_NAMES,
    TOPIC_CONFIG_SYNONYMS_ALL,
    ConfigKey,
    LogConfig,
)


class ConfigSource(enum.IntEnum):
    """DescribeConfigsResponse.ConfigSource ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class ConfigType(enum.IntEnum):
    """DescribeConfigsResponse.ConfigType ids (KIP-569)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


# Defaults of the broker keys that set topic defaults, where Kafka's KafkaConfig default differs from the topic
# key's default (None: the broker key has no default). Every other synonym defaults to its topic key's default.
_BROKER_SYNONYM_DEFAULTS: dict[str, str | None] = {
    "log.roll.ms": None,
    "log.roll.hours": "168",
    "log.roll.jitter.ms": None,
    "log.roll.jitter.hours": "0",
    "log.retention.ms": None,
    "log.retention.minutes": None,
    "log.retention.hours": "168",
    "log.flush.interval.ms": None,
    "log.flush.scheduler.interval.ms": BROKER_KEYS["log.flush.scheduler.interval.ms"].default,
}


@dataclass(frozen=True, slots=True)
class Synonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    name: str
    value: str | None
    synonyms: tuple[Synonym, ...]
    config_type: ConfigType
    read_only: bool
    first_broker_synonym: str  # where DescribeConfigs starts listing broker synonyms
    is_sensitive: bool = False  # no key this broker knows is a PASSWORD

    def describe_synonyms(self) -> tuple[Synonym, ...]:
        own = tuple(s for s in self.synonyms if s.source == ConfigSource.DYNAMIC_TOPIC_CONFIG)
        broker = [s for s in self.synonyms if s.source != ConfigSource.DYNAMIC_TOPIC_CONFIG]
        names = [s.name for s in broker]
        start = names.index(self.first_broker_synonym) if self.first_broker_synonym in names else len(broker)
        return own + tuple(broker[start:])

    def describe_source(self) -> ConfigSource:
        synonyms = self.describe_synonyms()
        return synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG

    def effective_source(self) -> ConfigSource:
        return self.synonyms[0].source if self.synonyms else ConfigSource.DEFAULT_CONFIG


def config_value_string(value: object) -> str | None:
    """A parsed config value as Kafka's ConfigDef.convertToString writes it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    return str(value)


def _synonym_group(name: str) -> tuple[str, ...]:
    """The broker keys that set the same thing as broker key `name`, highest priority first (or just `name`)."""
    for synonyms in TOPIC_CONFIG_SYNONYMS_ALL.values():
        names = tuple(s.name for s in synonyms)
        if name in names:
            return names
    return (name,)


def _broker_key_default(name: str) -> str | None:
    if name in _BROKER_SYNONYM_DEFAULTS:
        return _BROKER_SYNONYM_DEFAULTS[name]
    if name in BROKER_KEYS:
        return BROKER_KEYS[name].default
    for topic_key, synonyms in TOPIC_CONFIG_SYNONYMS_ALL.items():
        if name in (s.name for s in synonyms):
            return log_config.CONFIG_KEYS_BY_NAME[topic_key].default
    return None


def _broker_synonyms(names: Iterable[str], broker: BrokerConfig) -> tuple[Synonym, ...]:
    names = tuple(names)
    static = [Synonym(n, broker.original[n], ConfigSource.STATIC_BROKER_CONFIG) for n in names if n in broker.original]
    defaults = [Synonym(n, d, ConfigSource.DEFAULT_CONFIG) for n in names if (d := _broker_key_default(n)) is not None]
    return tuple(static + defaults)


def topic_config_type(name: str) -> ConfigType:
    """The type of a topic config key (UNKNOWN for keys topics do not have)."""
    key = log_config.CONFIG_KEYS_BY_NAME.get(name)
    return ConfigType[key.type.name] if key is not None else ConfigType.UNKNOWN


def _topic_entry(key: ConfigKey, config: LogConfig, broker: BrokerConfig) -> ConfigEntry:
    value = config_value_string(getattr(config, key.field))
    own = (Synonym(key.name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG),) if key.name in config.overridden else ()
    broker_names = tuple(s.name for s in TOPIC_CONFIG_SYNONYMS_ALL.get(key.name, ()))
    return ConfigEntry(
        name=key.name,
        value=value,
        synonyms=own + _broker_synonyms(broker_names, broker),
        config_type=topic_config_type(key.name),
        read_only=False,
        first_broker_synonym=broker_names[0] if broker_names else key.name,
    )


def topic_config_entries(overrides: Mapping[str, str], broker: BrokerConfig) -> list[ConfigEntry]:
    """Every (non-internal) config of a topic with these overrides on this broker, sorted by name."""
    config = LogConfig.from_props(overrides, broker.topic_defaults)
    keys = sorted((k for k in CONFIG_KEYS if k.name not in INTERNAL_CONFIG_NAMES), key=lambda k: k.name)
    return [_topic_entry(key, config, broker) for key in keys]


def _broker_key_type(name: str) -> ConfigType:
    for topic_key, synonyms in TOPIC_CONFIG_SYNONYMS_ALL.items():
        for synonym in synonyms:
            if synonym.name == name:
                # Keys counted in hours or minutes are INT in Kafka; the others share their topic key's type.
                if synonym.to_topic_value is not str:
                    return ConfigType.INT
                return topic_config_type(topic_key)
    return ConfigType[BROKER_KEYS[name].type.name]


def broker_config_entries(broker: BrokerConfig) -> list[ConfigEntry]:
    """Every config key this broker knows, with its value and source; all read-only (none changes at run time)."""
    names = sorted(set(BROKER_KEYS) | {s.name for group in TOPIC_CONFIG_SYNONYMS_ALL.values() for s in group})
    entries = []
    for name in names:
        synonyms = _broker_synonyms(_synonym_group(name), broker)
        own = next((s for s in synonyms if s.name == name), None)
        entries.append(ConfigEntry(
            name=name,
            value=own.value if own else None,
            synonyms=synonyms,
            config_type=_broker_key_type(name),
            read_only=True,
            first_broker_synonym=name,
        ))
    return entries
