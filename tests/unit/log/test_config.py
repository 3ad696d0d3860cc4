import pytest

from wirebroker.log.config import (
    TOPIC_CONFIG_SYNONYMS,
    LogConfig,
    topic_defaults_from_broker,
)
from wirebroker.protocol.errors import InvalidConfigError


def test_defaults_are_kafkas():
    config = LogConfig.default()
    assert config.segment_bytes == 1024**3
    assert config.segment_ms == 7 * 24 * 3600 * 1000
    assert config.segment_index_bytes == 10 * 1024 * 1024
    assert config.index_interval_bytes == 4096
    assert config.retention_ms == 7 * 24 * 3600 * 1000
    assert config.retention_bytes == -1
    assert config.flush_messages == config.flush_ms == 2**63 - 1
    assert config.max_message_bytes == 1048588
    assert config.message_timestamp_type == "CreateTime"
    assert config.cleanup_policy == ("delete",)
    assert config.file_delete_delay_ms == 60000
    assert config.segment_jitter_ms == 0
    assert config.min_insync_replicas == 1
    assert config.compression_type == "producer"
    assert config.delete and not config.compact
    assert config.overridden == frozenset()


def test_overrides_parse_by_type_on_top_of_defaults():
    config = LogConfig.from_props({"retention.ms": " 1000 ", "cleanup.policy": "compact,delete",
                                   "preallocate": "TRUE"}, defaults={"segment.ms": "5000", "retention.ms": "7"})
    assert config.retention_ms == 1000
    assert config.segment_ms == 5000
    assert config.cleanup_policy == ("compact", "delete") and config.compact and config.delete
    assert config.preallocate is True
    assert config.overridden == {"retention.ms", "cleanup.policy", "preallocate"}
    assert config.values["segment.ms"] == "5000"


@pytest.mark.parametrize("key,value", [
    ("segment.bytes", "1000"),  # below Kafka's 1 MiB floor
    ("segment.bytes", "abc"),
    ("segment.bytes", str(2**31)),  # not an int32
    ("retention.ms", "-2"),
    ("message.timestamp.type", "WallClock"),
    ("cleanup.policy", "delete,forever"),
    ("min.cleanable.dirty.ratio", "1.5"),
    ("compression.type", "brotli"),
    ("compression.gzip.level", "0"),
    ("unclean.leader.election.enable", "yes"),
    ("leader.replication.throttled.replicas", "0:x"),
])
def test_invalid_values_name_the_key(key, value):
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        LogConfig.from_props({key: value})


def test_unknown_key_is_refused():
    with pytest.raises(InvalidConfigError, match="Unknown topic config name: retention.mss"):
        LogConfig.from_props({"retention.mss": "1"})


def test_with_overrides_keeps_earlier_overrides():
    base = LogConfig.from_props({"retention.ms": "1000"}, defaults={"segment.ms": "5000"})
    changed = base.with_overrides({"segment.bytes": str(2 * 1024 * 1024)})
    assert changed.retention_ms == 1000 and changed.segment_ms == 5000 and changed.segment_bytes == 2 * 1024 * 1024
    assert changed.overridden == {"retention.ms", "segment.bytes"}


def test_internal_segment_bytes_overrides_segment_size():
    assert LogConfig.from_props({"internal.segment.bytes": "100"}).segment_size == 100
    assert LogConfig.default().segment_size == 1024**3


def test_jitter_stays_below_the_smaller_of_jitter_and_segment_ms():
    config = LogConfig.from_props({"segment.jitter.ms": "1000", "segment.ms": "10"})
    assert all(0 <= config.random_segment_jitter() < 10 for _ in range(200))
    assert LogConfig.default().random_segment_jitter() == 0


def test_broker_synonyms_convert_units_and_take_the_first_set():
    defaults = topic_defaults_from_broker({
        "log.retention.hours": "2", "log.retention.minutes": "3",  # minutes outrank hours
        "log.roll.hours": "1",
        "log.segment.bytes": "2097152",
        "message.max.bytes": "5000",
        "log.flush.scheduler.interval.ms": "77",
        "log.cleanup.policy": "compact",
        "log.segment.delete.delay.ms": "5",
        "unrelated.key": "1",
    })
    assert defaults == {"retention.ms": str(3 * 60_000), "segment.ms": "3600000", "segment.bytes": "2097152",
                        "max.message.bytes": "5000", "flush.ms": "77", "cleanup.policy": "compact",
                        "file.delete.delay.ms": "5"}
    assert topic_defaults_from_broker({"log.retention.ms": "9", "log.retention.hours": "1"})["retention.ms"] == "9"
    config = LogConfig.from_props({}, defaults)
    assert config.retention_ms == 180_000 and config.compact and not config.delete


def test_synonym_table_names_kafkas_primary_broker_keys():
    assert TOPIC_CONFIG_SYNONYMS["segment.ms"] == "log.roll.ms"
    assert TOPIC_CONFIG_SYNONYMS["retention.ms"] == "log.retention.ms"
    assert TOPIC_CONFIG_SYNONYMS["max.message.bytes"] == "message.max.bytes"
    assert TOPIC_CONFIG_SYNONYMS["segment.index.bytes"] == "log.index.size.max.bytes"
    assert TOPIC_CONFIG_SYNONYMS["flush.messages"] == "log.flush.interval.messages"
    assert set(TOPIC_CONFIG_SYNONYMS) <= set(LogConfig.default().values)


def test_bad_broker_value_names_the_broker_key():
    with pytest.raises(InvalidConfigError, match="log.roll.hours"):
        topic_defaults_from_broker({"log.roll.hours": "soon"})
