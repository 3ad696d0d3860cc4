"""What every group kind shares (Kafka's Group interface), the coordinator's settings, and the group-id hashing.

Three kinds of group live side by side in one coordinator: classic groups (JoinGroup/SyncGroup, classic_group.py),
consumer groups (KIP-848 ConsumerGroupHeartbeat, consumer_group.py) and share groups (KIP-932 ShareGroupHeartbeat,
share_group.py). Offsets (offset_metadata_manager.py) belong
to a group id whatever its kind. The offset APIs ask the group to validate a commit or fetch through
`validate_offset_commit` and `validate_offset_fetch`; the admin APIs read `state_name`, `protocol_type` and
`is_empty`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Protocol

CONSUMER_PROTOCOL_TYPE = "consumer"  # the protocol type every Java-like consumer joins with


class GroupType(enum.Enum):
    CLASSIC = "classic"
    CONSUMER = "consumer"
    SHARE = "share"


class Group(Protocol):
    group_id: str

    @property
    def type(self) -> GroupType: ...

    @property
    def state_name(self) -> str: ...

    @property
    def protocol_type(self) -> str | None: ...

    def is_empty(self) -> bool: ...

    def is_subscribed_to_topic(self, topic: str) -> bool: ...

    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, generation_or_epoch: int,
                               api_version: int, is_transactional: bool = False) -> None: ...

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None: ...


@dataclass(frozen=True)
class GroupConfig:
    """The broker settings the group coordinator acts on, by Kafka's key names."""

    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    max_size: int = 2**31 - 1
    offsets_topic_num_partitions: int = 50
    offsets_topic_replication_factor: int = 3
    offsets_topic_segment_bytes: int = 100 * 1024 * 1024
    offsets_retention_ms: int = 7 * 24 * 60 * 60 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offsets_commit_timeout_ms: int = 5000
    offset_metadata_max_bytes: int = 4096
    consumer_session_timeout_ms: int = 45_000
    consumer_heartbeat_interval_ms: int = 5000
    consumer_assignors: tuple[str, ...] = ("uniform", "range")
    rebalance_protocols: tuple[str, ...] = ("classic", "consumer")
    share_session_timeout_ms: int = 45_000
    share_heartbeat_interval_ms: int = 5000
    share_max_size: int = 200
    share_record_lock_duration_ms: int = 30_000
    share_delivery_count_limit: int = 5
    share_partition_max_record_locks: int = 2000

    @classmethod
    def from_broker(cls, config: Any) -> GroupConfig:
        return cls(
            initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
            min_session_timeout_ms=config["group.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.max.session.timeout.ms"],
            max_size=config["group.max.size"],
            offsets_topic_num_partitions=config["offsets.topic.num.partitions"],
            offsets_topic_replication_factor=config["offsets.topic.replication.factor"],
            offsets_topic_segment_bytes=config["offsets.topic.segment.bytes"],
            offsets_retention_ms=config["offsets.retention.minutes"] * 60 * 1000,
            offsets_retention_check_interval_ms=config["offsets.retention.check.interval.ms"],
            offsets_commit_timeout_ms=config["offsets.commit.timeout.ms"],
            offset_metadata_max_bytes=config["offset.metadata.max.bytes"],
            consumer_session_timeout_ms=config["group.consumer.session.timeout.ms"],
            consumer_heartbeat_interval_ms=config["group.consumer.heartbeat.interval.ms"],
            consumer_assignors=tuple(config["group.consumer.assignors"]),
            rebalance_protocols=tuple(config["group.coordinator.rebalance.protocols"]),
            share_session_timeout_ms=config["group.share.session.timeout.ms"],
            share_heartbeat_interval_ms=config["group.share.heartbeat.interval.ms"],
            share_max_size=config["group.share.max.size"],
            share_record_lock_duration_ms=config["group.share.record.lock.duration.ms"],
            share_delivery_count_limit=config["group.share.delivery.count.limit"],
            share_partition_max_record_locks=config["group.share.partition.max.record.locks"],
        )


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: 31-polynomial over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, num_partitions: int) -> int:
    """The `__consumer_offsets` partition of a group: Utils.abs(groupId.hashCode) % partitions, as Kafka, so the
    same group lands on the same partition number in Kafka and here."""
    return (java_string_hash(group_id) & 0x7FFFFFFF) % num_partitions
