"""Committing, fetching and deleting offsets (Kafka's OffsetMetadataManager request paths).

Commit: the group validates the committer (classic: member, instance id, generation, not while completing a
rebalance; consumer groups: member epoch, KIP-848). With generation -1 and no such group, a "simple" group is made
(the admin client and consumers that assign partitions themselves). From OffsetCommit v9 an unknown group with a
generation is GROUP_ID_NOT_FOUND; before, ILLEGAL_GENERATION. Per partition: UNKNOWN_TOPIC_OR_PARTITION for a
partition that does not exist, OFFSET_METADATA_TOO_LARGE past `offset.metadata.max.bytes`. The accepted offsets are
written as one batch and applied.

Fetch: the committed offset, leader epoch and metadata of each asked partition (-1 and "" when none), or of every
partition the group committed when no topics are named. Delete (OffsetDelete): refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while the group consumes the topic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup
from wirebroker.coordinator.offsets import NO_LEADER_EPOCH, NO_OFFSET
from wirebroker.protocol.errors import (
    ErrorCode,
    GroupIdNotFoundError,
    IllegalGenerationError,
    InvalidGroupIdError,
    KafkaError,
    NonEmptyGroupError,
)

if TYPE_CHECKING:
    from wirebroker.coordinator.group_coordinator import GroupCoordinator

FIRST_GROUP_ID_NOT_FOUND_COMMIT_VERSION = 9
DEFAULT_RETENTION = -1  # OffsetCommit v2-4 retention_time_ms meaning "the broker's offsets.retention.minutes"


@dataclass(frozen=True, slots=True)
class PartitionCommit:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int = -1  # OffsetCommit v1 only


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    error_code: int = ErrorCode.NONE


def commit(c: GroupCoordinator, group_id: str, member_id: str, group_instance_id: str | None,
           generation_or_epoch: int, retention_ms: int, commits: list[PartitionCommit],
           api_version: int) -> dict[tuple[str, int], int]:
    """Error code per (topic, partition); a group-level failure gives every partition that code."""
    try:
        if not group_id:
            raise InvalidGroupIdError("the group id is empty")
        _validate_commit(c, group_id, member_id, group_instance_id, generation_or_epoch, api_version)
    except KafkaError as exc:
        return {(p.topic, p.partition): exc.code for p in commits}
    now = c.now_ms()
    codes: dict[tuple[str, int], int] = {}
    out = []
    for p in commits:
        code = _partition_error(c, p)
        codes[(p.topic, p.partition)] = code
        if code != ErrorCode.NONE:
            continue
        timestamp = p.commit_timestamp_ms if p.commit_timestamp_ms >= 0 else now
        expire = None
        if p.commit_timestamp_ms >= 0:  # v1: Kafka stores an explicit expiry for these
            expire = timestamp + c.config.offsets_retention_ms
        elif retention_ms != DEFAULT_RETENTION:
            expire = timestamp + retention_ms
        out.append(records.offset_commit(group_id, p.topic, p.partition, p.offset, p.leader_epoch,
                                         p.metadata or "", timestamp, expire))
    try:
        c.write(group_id, out)
    except KafkaError as exc:
        return {tp: exc.code if code == ErrorCode.NONE else code for tp, code in codes.items()}
    return codes


def _validate_commit(c: GroupCoordinator, group_id: str, member_id: str, group_instance_id: str | None,
                     generation_or_epoch: int, api_version: int) -> None:
    group = c.group(group_id)
    if group is None:
        if generation_or_epoch >= 0:
            if api_version >= FIRST_GROUP_ID_NOT_FOUND_COMMIT_VERSION:
                raise GroupIdNotFoundError(f"group {group_id} does not exist")
            raise IllegalGenerationError(f"group {group_id} does not exist")
        c.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=c.now_ms())
        return
    group.validate_offset_commit(member_id, group_instance_id, generation_or_epoch, api_version)


def _partition_error(c: GroupCoordinator, p: PartitionCommit) -> int:
    topic = c.topics.topic(p.topic)
    if topic is None or not 0 <= p.partition < topic.partitions:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if p.metadata is not None and len(p.metadata.encode()) > c.config.offset_metadata_max_bytes:
        return ErrorCode.OFFSET_METADATA_TOO_LARGE
    return ErrorCode.NONE


def fetch(c: GroupCoordinator, group_id: str, topics: list[tuple[str, list[int]]] | None,
          member_id: str | None = None, member_epoch: int = -1) -> tuple[int, list[tuple[str, list[FetchedOffset]]]]:
    """(group error, [(topic, offsets)]); topics None means every partition the group committed."""
    try:
        group = c.group(group_id)
        if group is not None:
            group.validate_offset_fetch(member_id, member_epoch)
    except KafkaError as exc:
        return exc.code, []
    if topics is None:
        by_topic: dict[str, list[FetchedOffset]] = {}
        for (topic, partition), o in sorted(c.offsets.of_group(group_id).items()):
            by_topic.setdefault(topic, []).append(FetchedOffset(partition, o.committed_offset, o.leader_epoch,
                                                                o.metadata))
        return ErrorCode.NONE, list(by_topic.items())
    result = []
    for topic, partitions in topics:
        fetched = []
        for partition in partitions:
            o = c.offsets.get(group_id, topic, partition)
            fetched.append(FetchedOffset(partition, NO_OFFSET, NO_LEADER_EPOCH, "") if o is None else
                           FetchedOffset(partition, o.committed_offset, o.leader_epoch, o.metadata))
        result.append((topic, fetched))
    return ErrorCode.NONE, result


def delete(c: GroupCoordinator, group_id: str, partitions: Iterable[tuple[str, int]]
           ) -> tuple[int, dict[tuple[str, int], int]]:
    """(group error, error per partition) of an OffsetDelete."""
    partitions = list(partitions)
    try:
        group = c.group(group_id)
        if group is None:
            raise GroupIdNotFoundError(f"group {group_id} does not exist")
        if isinstance(group, ClassicGroup) and not group.is_empty() and group.subscribed_topics() is None:
            raise NonEmptyGroupError(f"group {group_id} is not empty and its subscriptions are not known")
    except KafkaError as exc:
        return exc.code, {}
    codes = {}
    deletable = []
    for topic, partition in partitions:
        if group.is_subscribed_to_topic(topic):
            codes[(topic, partition)] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
        else:
            codes[(topic, partition)] = ErrorCode.NONE
            deletable.append((topic, partition))
    try:
        c.write(group_id, c.offsets.tombstones(group_id, deletable))
    except KafkaError as exc:
        return exc.code, {}
    return ErrorCode.NONE, codes
