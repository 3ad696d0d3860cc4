"""The records of `__consumer_offsets`, in Kafka's exact format (Kafka's CoordinatorRecordSerde).

Every record of the topic is a key and a value (null for a tombstone, which deletes the key once compacted):

    key   = record_type: int16, then the key message (Kafka 4's key schemas have the one version 0; Kafka 3 named
            the record type as the key's version, the same bytes)
    value = value_version: int16, then the value message written at that version   (absent for a tombstone)

| type | key                                     | value version written (as Kafka 4.x)                 |
|------|-----------------------------------------|------------------------------------------------------|
| 0, 1 | OffsetCommitKey (group, topic, partition) | OffsetCommitValue v3; v1 when an expire timestamp is set |
| 2    | GroupMetadataKey (group)                | GroupMetadataValue v3 (classic groups)               |
| 3    | ConsumerGroupMetadataKey                | ConsumerGroupMetadataValue v0 (group epoch)          |
| 4    | ConsumerGroupPartitionMetadataKey       | ConsumerGroupPartitionMetadataValue v0               |
| 5    | ConsumerGroupMemberMetadataKey          | ConsumerGroupMemberMetadataValue v0 (subscription)   |
| 6    | ConsumerGroupTargetAssignmentMetadataKey| ConsumerGroupTargetAssignmentMetadataValue v0        |
| 7    | ConsumerGroupTargetAssignmentMemberKey  | ConsumerGroupTargetAssignmentMemberValue v0          |
| 8    | ConsumerGroupCurrentMemberAssignmentKey | ConsumerGroupCurrentMemberAssignmentValue v0         |
| 10-14| ShareGroup*Key (share_group.py)         | ShareGroup*Value v0 (KIP-932 share groups)           |
| 15   | ShareGroupStatePartitionMetadataKey     | ShareGroupStatePartitionMetadataValue v0 (the share-partitions the group coordinator initialised) |

The codecs are the ones generated from Kafka's own schemas (schemas/group-coordinator/), not hand-declared `construct`
layouts: the KIP-848 values are flexible versions with tagged fields and nested arrays, exactly what the generator
already writes and cross-checks, and a second description of the same bytes would be a twin to keep in step.
Types this broker does not use (9, 16 and up: streams groups) are skipped on load with a log line, as Kafka's loader does
for unknown types.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, TypeVar

from wirebroker.protocol.message import Message
from wirebroker.protocol.messages.consumer_group_current_member_assignment_key import (
    ConsumerGroupCurrentMemberAssignmentKey,
)
from wirebroker.protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
)
from wirebroker.protocol.messages.consumer_group_member_metadata_key import (
    ConsumerGroupMemberMetadataKey,
)
from wirebroker.protocol.messages.consumer_group_member_metadata_value import (
    ConsumerGroupMemberMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_metadata_key import (
    ConsumerGroupMetadataKey,
)
from wirebroker.protocol.messages.consumer_group_metadata_value import (
    ConsumerGroupMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_partition_metadata_key import (
    ConsumerGroupPartitionMetadataKey,
)
from wirebroker.protocol.messages.consumer_group_partition_metadata_value import (
    ConsumerGroupPartitionMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_member_key import (
    ConsumerGroupTargetAssignmentMemberKey,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_member_value import (
    ConsumerGroupTargetAssignmentMemberValue,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_metadata_key import (
    ConsumerGroupTargetAssignmentMetadataKey,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)
from wirebroker.protocol.messages.group_metadata_key import GroupMetadataKey
from wirebroker.protocol.messages.group_metadata_value import GroupMetadataValue
from wirebroker.protocol.messages.offset_commit_key import OffsetCommitKey
from wirebroker.protocol.messages.offset_commit_value import OffsetCommitValue
from wirebroker.protocol.messages.share_group_current_member_assignment_key import (
    ShareGroupCurrentMemberAssignmentKey,
)
from wirebroker.protocol.messages.share_group_current_member_assignment_value import (
    ShareGroupCurrentMemberAssignmentValue,
)
from wirebroker.protocol.messages.share_group_member_metadata_key import (
    ShareGroupMemberMetadataKey,
)
from wirebroker.protocol.messages.share_group_member_metadata_value import (
    ShareGroupMemberMetadataValue,
)
from wirebroker.protocol.messages.share_group_metadata_key import ShareGroupMetadataKey
from wirebroker.protocol.messages.share_group_metadata_value import (
    ShareGroupMetadataValue,
)
from wirebroker.protocol.messages.share_group_state_partition_metadata_key import (
    ShareGroupStatePartitionMetadataKey,
)
from wirebroker.protocol.messages.share_group_state_partition_metadata_value import (
    ShareGroupStatePartitionMetadataValue,
)
from wirebroker.protocol.messages.share_group_target_assignment_member_key import (
    ShareGroupTargetAssignmentMemberKey,
)
from wirebroker.protocol.messages.share_group_target_assignment_member_value import (
    ShareGroupTargetAssignmentMemberValue,
)
from wirebroker.protocol.messages.share_group_target_assignment_metadata_key import (
    ShareGroupTargetAssignmentMetadataKey,
)
from wirebroker.protocol.messages.share_group_target_assignment_metadata_value import (
    ShareGroupTargetAssignmentMetadataValue,
)
from wirebroker.protocol.primitives import DecodeError

_VERSION = struct.Struct(">h")
M = TypeVar("M", bound=Message)

OFFSET_COMMIT_LEGACY = 0
OFFSET_COMMIT = 1
GROUP_METADATA = 2
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
SHARE_GROUP_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
SHARE_GROUP_RECORD_TYPES = frozenset(range(SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_STATE_PARTITION_METADATA + 1))

# record type -> (key class, value class)
RECORD_TYPES: dict[int, tuple[type[Message], type[Message]]] = {
    OFFSET_COMMIT_LEGACY: (OffsetCommitKey, OffsetCommitValue),
    OFFSET_COMMIT: (OffsetCommitKey, OffsetCommitValue),
    GROUP_METADATA: (GroupMetadataKey, GroupMetadataValue),
    CONSUMER_GROUP_METADATA: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    CONSUMER_GROUP_PARTITION_METADATA: (ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue),
    CONSUMER_GROUP_MEMBER_METADATA: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: (
        ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: (
        ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: (
        ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
    SHARE_GROUP_MEMBER_METADATA: (ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue),
    SHARE_GROUP_METADATA: (ShareGroupMetadataKey, ShareGroupMetadataValue),
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA: (
        ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue),
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER: (ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue),
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: (
        ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue),
    SHARE_GROUP_STATE_PARTITION_METADATA: (
        ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue),
}

KEY_VERSION = 0
GROUP_METADATA_VALUE_VERSION = 3  # Kafka's GroupCoordinatorRecordHelpers.GROUP_METADATA_VALUE_VERSION
OFFSET_COMMIT_VALUE_VERSION = 3  # the highest non-flexible version, as Kafka writes it
OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1  # the only version carrying expireTimestamp
CONSUMER_GROUP_VALUE_VERSION = 0


class UnknownRecordTypeError(ValueError):
    """A record type this coordinator does not know (share groups, or newer Kafka): skipped on load."""


@dataclass(slots=True)
class CoordinatorRecord:
    record_type: int
    key: Message
    value: Message | None  # None: a tombstone
    value_version: int = 0


def encode_key(record: CoordinatorRecord) -> bytes:
    return _VERSION.pack(record.record_type) + record.key.encode(KEY_VERSION)


def encode_value(record: CoordinatorRecord) -> bytes | None:
    if record.value is None:
        return None
    return _VERSION.pack(record.value_version) + record.value.encode(record.value_version)


def decode(key: bytes | memoryview, value: bytes | memoryview | None) -> CoordinatorRecord:
    """A record read back from the topic; DecodeError for bytes that do not parse, UnknownRecordTypeError for a
    type this coordinator does not serve."""
    if len(key) < _VERSION.size:
        raise DecodeError("coordinator record key shorter than its type")
    (record_type,) = _VERSION.unpack_from(key, 0)
    classes = RECORD_TYPES.get(record_type)
    if classes is None:
        raise UnknownRecordTypeError(f"unknown coordinator record type {record_type}")
    key_class, value_class = classes
    key_message = key_class.decode(memoryview(key)[_VERSION.size:], KEY_VERSION)
    if value is None:
        return CoordinatorRecord(record_type, key_message, None)
    if len(value) < _VERSION.size:
        raise DecodeError("coordinator record value shorter than its version")
    (value_version,) = _VERSION.unpack_from(value, 0)
    value_message = value_class.decode(memoryview(value)[_VERSION.size:], value_version)
    return CoordinatorRecord(record_type, key_message, value_message, value_version)


def with_fields(message: M, **fields: Any) -> M:
    """Set fields after construction: the generated constructors read None as "the schema's default" (an empty
    string for a nullable string with no default), so a null has to be set this way, as Kafka's setters do."""
    for name, value in fields.items():
        setattr(message, name, value)
    return message


# ---- the records the coordinator writes (Kafka's GroupCoordinatorRecordHelpers) ------------------------------------

def offset_commit(group: str, topic: str, partition: int, offset: int, leader_epoch: int, metadata: str,
                  commit_timestamp: int, expire_timestamp: int | None) -> CoordinatorRecord:
    value = OffsetCommitValue(offset=offset, leader_epoch=leader_epoch, metadata=metadata,
                              commit_timestamp=commit_timestamp,
                              expire_timestamp=-1 if expire_timestamp is None else expire_timestamp)
    version = OFFSET_COMMIT_VALUE_VERSION if expire_timestamp is None else OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY
    return CoordinatorRecord(OFFSET_COMMIT, OffsetCommitKey(group=group, topic=topic, partition=partition), value,
                             version)


def offset_commit_tombstone(group: str, topic: str, partition: int) -> CoordinatorRecord:
    return CoordinatorRecord(OFFSET_COMMIT, OffsetCommitKey(group=group, topic=topic, partition=partition), None)


def group_metadata(group: str, value: GroupMetadataValue) -> CoordinatorRecord:
    return CoordinatorRecord(GROUP_METADATA, GroupMetadataKey(group=group), value, GROUP_METADATA_VALUE_VERSION)


def group_metadata_tombstone(group: str) -> CoordinatorRecord:
    return CoordinatorRecord(GROUP_METADATA, GroupMetadataKey(group=group), None)


def consumer_group_record(record_type: int, group_id: str, value: Message | None,
                          member_id: str | None = None) -> CoordinatorRecord:
    """One of the KIP-848 or share-group records (types 3-8, 10-15), keyed by group and, for the per-member
    types, member."""
    key_class = RECORD_TYPES[record_type][0]
    key: Any = key_class(group_id=group_id) if member_id is None else key_class(group_id=group_id, member_id=member_id)
    return CoordinatorRecord(record_type, key, value, CONSUMER_GROUP_VALUE_VERSION)
