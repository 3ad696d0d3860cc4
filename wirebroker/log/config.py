"""Topic-level log configuration (Kafka's LogConfig) and the broker keys that supply its defaults.

A topic's effective configuration is built in two layers, as in Kafka:

    broker properties  --topic_defaults_from_broker()-->  topic-key defaults  --+
    topic overrides (CreateTopics / AlterConfigs)  --------------------------------+--> LogConfig.from_props()

`TOPIC_CONFIG_SYNONYMS` is Kafka's ServerTopicConfigSynonyms: for each topic key, the broker keys that set its
default, in priority order, with a unit conversion where the broker key counts hours or minutes. The server config
and DescribeConfigs (config synonyms, "Server Default Property") read the same table.

Values arrive as strings (Kafka's wire and properties files carry strings); `LogConfig.from_props` parses them by
the key's type, checks the key's range and raises InvalidConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable, Mapping
from typing import NamedTuple

from wirebroker.protocol.errors import InvalidConfigError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
INT32_MIN = -(2**31)
INT64_MIN = -(2**63)

MS_PER_MINUTE = 60 * 1000
MS_PER_HOUR = 60 * MS_PER_MINUTE

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
CLEANUP_POLICY_DELETE = "delete"
CLEANUP_POLICY_COMPACT = "compact"
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
ZSTD_MIN_LEVEL = -(1 << 17)  # ZSTD_minCLevel() of libzstd, Kafka's lower bound for compression.zstd.level


# --- value parsers and validators (Kafka's ConfigDef types and ranges) ---

def _parse_int(text: str, lo: int = INT32_MIN, hi: int = INT32_MAX) -> int:
    value = int(text.strip())
    if not lo <= value <= hi:
        raise ValueError(f"not in the range of its type [{lo}, {hi}]")
    return value


def _parse_long(text: str) -> int:
    return _parse_int(text, INT64_MIN, INT64_MAX)


def _parse_double(text: str) -> float:
    return float(text.strip())


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def _parse_string(text: str) -> str:
    return text.strip()


def _parse_list(text: str) -> tuple[str, ...]:
    stripped = text.strip()
    return tuple(item.strip() for item in stripped.split(",")) if stripped else ()


class ValueType(NamedTuple):
    """A Kafka ConfigDef.Type: its name (what DescribeConfigs reports) and how a value of it is parsed."""

    name: str
    parse: Callable[[str], object]


INT = ValueType("INT", _parse_int)
LONG = ValueType("LONG", _parse_long)
DOUBLE = ValueType("DOUBLE", _parse_double)
BOOLEAN = ValueType("BOOLEAN", _parse_bool)
STRING = ValueType("STRING", _parse_string)
LIST = ValueType("LIST", _parse_list)


def _at_least(minimum: float) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return None if value >= minimum else f"value must be at least {minimum}"  # type: ignore[operator]
    return check


def _between(lo: float, hi: float) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return None if lo <= value <= hi else f"value must be between {lo} and {hi}"  # type: ignore[operator]
    return check


def _one_of(*allowed: str) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        return None if value in allowed else f"String must be one of: {', '.join(allowed)}"
    return check


def _list_of(*allowed: str) -> Callable[[object], str | None]:
    def check(value: object) -> str | None:
        bad = [item for item in value if item.lower() not in allowed]  # type: ignore[attr-defined]
        return f"Invalid value(s) {bad}: each must be one of {', '.join(allowed)}" if bad else None
    return check


def _gzip_level(value: object) -> str | None:
    return None if value == -1 or 1 <= value <= 9 else "value must be -1 or between 1 and 9"  # type: ignore[operator]


def _throttled_replicas(value: object) -> str | None:
    # Kafka's ThrottledReplicaListValidator: "*" or a list of partitionId:brokerId pairs.
    items = value  # type: ignore[assignment]
    if items == ("*",) or all(_is_partition_broker_pair(item) for item in items):  # type: ignore[union-attr]
        return None
    return "must be the literal '*' or a list of replicas in the form partitionId:brokerId"


def _is_partition_broker_pair(item: str) -> bool:
    partition, _, broker = item.partition(":")
    return partition.strip().isdigit() and broker.strip().isdigit()


class ConfigKey(NamedTuple):
    """One topic config key: its name, the LogConfig field it fills, type, default and range check."""

    name: str
    field: str
    type: ValueType
    default: str | None
    validate: Callable[[object], str | None] | None = None


# Kafka's LogConfig definitions (storage/.../log/LogConfig.java), defaults as Kafka's string forms.
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("segment.bytes", "segment_bytes", INT, str(1024 * 1024 * 1024), _at_least(1024 * 1024)),
    ConfigKey("segment.ms", "segment_ms", LONG, str(7 * 24 * MS_PER_HOUR), _at_least(1)),
    ConfigKey("segment.jitter.ms", "segment_jitter_ms", LONG, "0", _at_least(0)),
    ConfigKey("segment.index.bytes", "segment_index_bytes", INT, str(10 * 1024 * 1024), _at_least(4)),
    ConfigKey("flush.messages", "flush_messages", LONG, str(INT64_MAX), _at_least(1)),
    ConfigKey("flush.ms", "flush_ms", LONG, str(INT64_MAX), _at_least(0)),
    ConfigKey("retention.bytes", "retention_bytes", LONG, "-1"),
    ConfigKey("retention.ms", "retention_ms", LONG, str(7 * 24 * MS_PER_HOUR), _at_least(-1)),
    ConfigKey("max.message.bytes", "max_message_bytes", INT, "1048588", _at_least(0)),
    ConfigKey("index.interval.bytes", "index_interval_bytes", INT, "4096", _at_least(0)),
    ConfigKey("delete.retention.ms", "delete_retention_ms", LONG, str(24 * MS_PER_HOUR), _at_least(0)),
    ConfigKey("min.compaction.lag.ms", "min_compaction_lag_ms", LONG, "0", _at_least(0)),
    ConfigKey("max.compaction.lag.ms", "max_compaction_lag_ms", LONG, str(INT64_MAX), _at_least(1)),
    ConfigKey("file.delete.delay.ms", "file_delete_delay_ms", LONG, "60000", _at_least(0)),
    ConfigKey("min.cleanable.dirty.ratio", "min_cleanable_dirty_ratio", DOUBLE, "0.5", _between(0, 1)),
    ConfigKey("cleanup.policy", "cleanup_policy", LIST, CLEANUP_POLICY_DELETE,
              _list_of(CLEANUP_POLICY_COMPACT, CLEANUP_POLICY_DELETE)),
    ConfigKey("unclean.leader.election.enable", "unclean_leader_election_enable", BOOLEAN, "false"),
    ConfigKey("min.insync.replicas", "min_insync_replicas", INT, "1", _at_least(1)),
    ConfigKey("compression.type", "compression_type", STRING, "producer", _one_of(*COMPRESSION_TYPES)),
    ConfigKey("compression.gzip.level", "compression_gzip_level", INT, "-1", _gzip_level),
    ConfigKey("compression.lz4.level", "compression_lz4_level", INT, "9", _between(1, 17)),
    ConfigKey("compression.zstd.level", "compression_zstd_level", INT, "3", _between(ZSTD_MIN_LEVEL, 22)),
    ConfigKey("preallocate", "preallocate", BOOLEAN, "false"),
    ConfigKey("message.timestamp.type", "message_timestamp_type", STRING, CREATE_TIME,
              _one_of(CREATE_TIME, LOG_APPEND_TIME)),
    ConfigKey("message.timestamp.before.max.ms", "message_timestamp_before_max_ms", LONG, str(INT64_MAX),
              _at_least(0)),
    ConfigKey("message.timestamp.after.max.ms", "message_timestamp_after_max_ms", LONG, str(MS_PER_HOUR),
              _at_least(0)),
    ConfigKey("leader.replication.throttled.replicas", "leader_replication_throttled_replicas", LIST, "",
              _throttled_replicas),
    ConfigKey("follower.replication.throttled.replicas", "follower_replication_throttled_replicas", LIST, "",
              _throttled_replicas),
    ConfigKey("remote.storage.enable", "remote_storage_enable", BOOLEAN, "false"),
    ConfigKey("local.retention.ms", "local_retention_ms", LONG, "-2", _at_least(-2)),
    ConfigKey("local.retention.bytes", "local_retention_bytes", LONG, "-2", _at_least(-2)),
    ConfigKey("remote.log.copy.disable", "remote_log_copy_disable", BOOLEAN, "false"),
    ConfigKey("remote.log.delete.on.disable", "remote_log_delete_on_disable", BOOLEAN, "false"),
    # Kafka's internal key to allow segments below segment.bytes' 1 MiB floor; meant for tests only.
    ConfigKey("internal.segment.bytes", "internal_segment_bytes", INT, None, _at_least(1)),
)
CONFIG_KEYS_BY_NAME: dict[str, ConfigKey] = {key.name: key for key in CONFIG_KEYS}
INTERNAL_CONFIG_NAMES = frozenset({"internal.segment.bytes"})


@dataclasses.dataclass(frozen=True)
class LogConfig:
    """The effective configuration of one partition's log; build it with `from_props`."""

    segment_bytes: int
    segment_ms: int
    segment_jitter_ms: int
    segment_index_bytes: int
    flush_messages: int
    flush_ms: int
    retention_bytes: int
    retention_ms: int
    max_message_bytes: int
    index_interval_bytes: int
    delete_retention_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    file_delete_delay_ms: int
    min_cleanable_dirty_ratio: float
    cleanup_policy: tuple[str, ...]
    unclean_leader_election_enable: bool
    min_insync_replicas: int
    compression_type: str
    compression_gzip_level: int
    compression_lz4_level: int
    compression_zstd_level: int
    preallocate: bool
    message_timestamp_type: str
    message_timestamp_before_max_ms: int
    message_timestamp_after_max_ms: int
    leader_replication_throttled_replicas: tuple[str, ...]
    follower_replication_throttled_replicas: tuple[str, ...]
    remote_storage_enable: bool
    local_retention_ms: int
    local_retention_bytes: int
    remote_log_copy_disable: bool
    remote_log_delete_on_disable: bool
    internal_segment_bytes: int | None
    # The string value of every key (defaults included) and which keys the topic overrides: DescribeConfigs needs both.
    values: Mapping[str, str | None] = dataclasses.field(default_factory=dict, compare=False, repr=False)
    overridden: frozenset[str] = frozenset()

    @classmethod
    def from_props(cls, props: Mapping[str, str], defaults: Mapping[str, str] | None = None) -> LogConfig:
        """Parse topic overrides `props` on top of `defaults` (topic keys, e.g. from topic_defaults_from_broker)."""
        for name in props:
            if name not in CONFIG_KEYS_BY_NAME:
                raise InvalidConfigError(f"Unknown topic config name: {name}")
        merged: dict[str, str | None] = {key.name: key.default for key in CONFIG_KEYS}
        merged.update({k: v for k, v in (defaults or {}).items() if k in CONFIG_KEYS_BY_NAME})
        merged.update(props)
        fields = {key.field: _parse_value(key, merged[key.name]) for key in CONFIG_KEYS}
        return cls(**fields, values=merged, overridden=frozenset(props))

    @classmethod
    def default(cls) -> LogConfig:
        return cls.from_props({})

    def with_overrides(self, props: Mapping[str, str]) -> LogConfig:
        """This config's values with `props` applied on top (AlterConfigs on a live topic)."""
        base = {k: v for k, v in self.values.items() if v is not None}
        merged_overrides = {k: base[k] for k in self.overridden if k in base} | dict(props)
        return LogConfig.from_props(merged_overrides, base)

    # The derived values below are read on every append: each is computed once (the config is frozen, and
    # cached_property keeps the value in the instance's __dict__, past the frozen __setattr__).
    @functools.cached_property
    def segment_size(self) -> int:
        """segment.bytes, unless the test-only internal.segment.bytes is set."""
        return self.internal_segment_bytes if self.internal_segment_bytes is not None else self.segment_bytes

    @functools.cached_property
    def compact(self) -> bool:
        return CLEANUP_POLICY_COMPACT in (p.lower() for p in self.cleanup_policy)

    @functools.cached_property
    def delete(self) -> bool:
        return CLEANUP_POLICY_DELETE in (p.lower() for p in self.cleanup_policy)

    @functools.cached_property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    @functools.cached_property
    def max_segment_ms(self) -> int:
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    def random_segment_jitter(self) -> int:
        """A fresh jitter for one segment's time-based roll, in [0, min(segment.jitter.ms, segment.ms))."""
        if self.segment_jitter_ms == 0:
            return 0
        return random.randrange(min(self.segment_jitter_ms, self.segment_ms))


def _parse_value(key: ConfigKey, text: str | None) -> object:
    if text is None:
        return None
    try:
        value = key.type.parse(text)
    except ValueError as exc:
        raise InvalidConfigError(f"Invalid value {text} for configuration {key.name}: {exc}") from None
    problem = key.validate(value) if key.validate else None
    if problem:
        raise InvalidConfigError(f"Invalid value {text} for configuration {key.name}: {problem}")
    return value


# --- broker keys that supply topic defaults (Kafka's ServerTopicConfigSynonyms) ---

class ConfigSynonym(NamedTuple):
    """A broker key and how its value converts into the topic key's unit."""

    name: str
    to_topic_value: Callable[[str], str] = str


def _hours_to_ms(text: str) -> str:
    return str(int(text.strip()) * MS_PER_HOUR)


def _minutes_to_ms(text: str) -> str:
    return str(int(text.strip()) * MS_PER_MINUTE)


TOPIC_CONFIG_SYNONYMS_ALL: dict[str, tuple[ConfigSynonym, ...]] = {
    "segment.bytes": (ConfigSynonym("log.segment.bytes"),),
    "segment.ms": (ConfigSynonym("log.roll.ms"), ConfigSynonym("log.roll.hours", _hours_to_ms)),
    "segment.jitter.ms": (ConfigSynonym("log.roll.jitter.ms"),
                          ConfigSynonym("log.roll.jitter.hours", _hours_to_ms)),
    "segment.index.bytes": (ConfigSynonym("log.index.size.max.bytes"),),
    "flush.messages": (ConfigSynonym("log.flush.interval.messages"),),
    "flush.ms": (ConfigSynonym("log.flush.interval.ms"), ConfigSynonym("log.flush.scheduler.interval.ms")),
    "retention.bytes": (ConfigSynonym("log.retention.bytes"),),
    "retention.ms": (ConfigSynonym("log.retention.ms"),
                     ConfigSynonym("log.retention.minutes", _minutes_to_ms),
                     ConfigSynonym("log.retention.hours", _hours_to_ms)),
    "max.message.bytes": (ConfigSynonym("message.max.bytes"),),
    "index.interval.bytes": (ConfigSynonym("log.index.interval.bytes"),),
    "delete.retention.ms": (ConfigSynonym("log.cleaner.delete.retention.ms"),),
    "min.compaction.lag.ms": (ConfigSynonym("log.cleaner.min.compaction.lag.ms"),),
    "max.compaction.lag.ms": (ConfigSynonym("log.cleaner.max.compaction.lag.ms"),),
    "file.delete.delay.ms": (ConfigSynonym("log.segment.delete.delay.ms"),),
    "min.cleanable.dirty.ratio": (ConfigSynonym("log.cleaner.min.cleanable.ratio"),),
    "cleanup.policy": (ConfigSynonym("log.cleanup.policy"),),
    "unclean.leader.election.enable": (ConfigSynonym("unclean.leader.election.enable"),),
    "min.insync.replicas": (ConfigSynonym("min.insync.replicas"),),
    "compression.type": (ConfigSynonym("compression.type"),),
    "compression.gzip.level": (ConfigSynonym("compression.gzip.level"),),
    "compression.lz4.level": (ConfigSynonym("compression.lz4.level"),),
    "compression.zstd.level": (ConfigSynonym("compression.zstd.level"),),
    "preallocate": (ConfigSynonym("log.preallocate"),),
    "message.timestamp.type": (ConfigSynonym("log.message.timestamp.type"),),
    "message.timestamp.before.max.ms": (ConfigSynonym("log.message.timestamp.before.max.ms"),),
    "message.timestamp.after.max.ms": (ConfigSynonym("log.message.timestamp.after.max.ms"),),
    "local.retention.ms": (ConfigSynonym("log.local.retention.ms"),),
    "local.retention.bytes": (ConfigSynonym("log.local.retention.bytes"),),
}

# Topic key -> the broker key of highest priority (DescribeConfigs' "server default property").
TOPIC_CONFIG_SYNONYMS: dict[str, str] = {
    topic_key: synonyms[0].name for topic_key, synonyms in TOPIC_CONFIG_SYNONYMS_ALL.items()
}

# Broker key -> the topic key it supplies a default for.
BROKER_TO_TOPIC_KEY: dict[str, str] = {
    synonym.name: topic_key
    for topic_key, synonyms in TOPIC_CONFIG_SYNONYMS_ALL.items()
    for synonym in synonyms
}


def topic_defaults_from_broker(broker_props: Mapping[str, str]) -> dict[str, str]:
    """Topic-key defaults from broker properties: per topic key, the first synonym set wins, converted to ms."""
    defaults: dict[str, str] = {}
    for topic_key, synonyms in TOPIC_CONFIG_SYNONYMS_ALL.items():
        for synonym in synonyms:
            text = broker_props.get(synonym.name)
            if text is None:
                continue
            try:
                defaults[topic_key] = synonym.to_topic_value(text)
            except ValueError:
                raise InvalidConfigError(
                    f"Invalid value {text} for configuration {synonym.name}: not a number") from None
            break
    return defaults
