"""A share group (KIP-932; Kafka's ShareGroup and ShareGroupMember): members that share the records of the
partitions of their subscribed topics.

Like a KIP-848 consumer group (consumer_group.py) it is the sum of its records in `__consumer_offsets`, written
first and applied by `replay`, the call that also rebuilds it at start-up:

| type | record                                | what it holds                                   |
|------|---------------------------------------|-------------------------------------------------|
| 10   | ShareGroupMemberMetadata              | a member's client, rack and subscription        |
| 11   | ShareGroupMetadata                    | the group epoch                                 |
| 12   | ShareGroupTargetAssignmentMetadata    | the epoch of the target assignment              |
| 13   | ShareGroupTargetAssignmentMember      | a member's target partitions                    |
| 14   | ShareGroupCurrentMemberAssignment     | a member's epoch and partitions                 |
| 15   | ShareGroupStatePartitionMetadata      | the share-partitions initialised, initialising  |
|      |                                       | and the topics whose state is being deleted     |

The last is Kafka's record of what the group coordinator initialised through the persister
(share_state_initialization.py): only those share-partitions are assigned, described, altered and deleted.

A partition may be assigned to several members at once, so nothing is revoked first: a member takes its target
assignment, and the group epoch, at its next heartbeat (Kafka's ShareGroupAssignmentBuilder). The states are
Kafka's: Empty, Stable (every member at the assignment epoch), Reconciling, Dead.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.group import GroupType
from wirebroker.protocol.errors import GroupIdNotFoundError, UnknownMemberIdError
from wirebroker.protocol.messages.share_group_current_member_assignment_value import (
    ShareGroupCurrentMemberAssignmentValue,
)
from wirebroker.protocol.messages.share_group_member_metadata_value import (
    ShareGroupMemberMetadataValue,
)
from wirebroker.protocol.messages.share_group_metadata_value import (
    ShareGroupMetadataValue,
)
from wirebroker.protocol.messages.share_group_state_partition_metadata_value import (
    ShareGroupStatePartitionMetadataValue,
)
from wirebroker.protocol.messages.share_group_target_assignment_member_value import (
    ShareGroupTargetAssignmentMemberValue,
)
from wirebroker.protocol.messages.share_group_target_assignment_metadata_value import (
    ShareGroupTargetAssignmentMetadataValue,
)

SHARE_PROTOCOL_TYPE = "share"  # Kafka's ShareGroup.PROTOCOL_TYPE
STABLE_MEMBER_STATE = 0  # Kafka's MemberState.STABLE: the only state a share member is ever in

# topic id (16 bytes) -> partitions
Assignment = dict[bytes, frozenset[int]]


class ShareGroupState(enum.Enum):
    EMPTY = "Empty"
    STABLE = "Stable"
    RECONCILING = "Reconciling"
    DEAD = "Dead"


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = field(default_factory=dict)

    def subscription_record(self, group_id: str) -> records.CoordinatorRecord:
        value = records.with_fields(
            ShareGroupMemberMetadataValue(client_id=self.client_id, client_host=self.client_host,
                                          subscribed_topic_names=sorted(self.subscribed_topic_names)),
            rack_id=self.rack_id)
        return records.consumer_group_record(records.SHARE_GROUP_MEMBER_METADATA, group_id, value, self.member_id)

    def assignment_record(self, group_id: str) -> records.CoordinatorRecord:
        value = ShareGroupCurrentMemberAssignmentValue(
            member_epoch=self.member_epoch, previous_member_epoch=self.previous_member_epoch,
            state=STABLE_MEMBER_STATE,
            assigned_partitions=_topic_partitions(self.assigned, ShareGroupCurrentMemberAssignmentValue.TopicPartitions))
        return records.consumer_group_record(records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id, value,
                                             self.member_id)


def _topic_partitions(assignment: Assignment, struct: type) -> list:
    return [struct(topic_id=topic_id, partitions=sorted(partitions))
            for topic_id, partitions in sorted(assignment.items()) if partitions]


def _assignment(topic_partitions: list) -> Assignment:
    return {tp.topic_id: frozenset(tp.partitions) for tp in topic_partitions if tp.partitions}


def simple_assignment(members: list[str], partitions: list[tuple[bytes, int]]) -> dict[str, Assignment]:
    """Kafka's SimpleAssignor in its homogeneous case: with no more members than partitions each partition goes to
    one member, round robin; with more members, each member gets one partition, so partitions are shared."""
    target: dict[str, dict[bytes, set[int]]] = {m: {} for m in members}
    if members and partitions:
        if len(members) <= len(partitions):
            pairs = [(members[i % len(members)], tp) for i, tp in enumerate(partitions)]
        else:
            pairs = [(member, partitions[i % len(partitions)]) for i, member in enumerate(members)]
        for member, (topic_id, index) in pairs:
            target[member].setdefault(topic_id, set()).add(index)
    return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in target.items()}


@dataclass(eq=False)
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    target_assignment: dict[str, Assignment] = field(default_factory=dict)
    state_timestamp_ms: int = -1
    deleted: bool = False
    # ShareGroupStatePartitionMetadata: topic id -> partitions, and the topic names the record carries
    initializing: Assignment = field(default_factory=dict)
    initialized: Assignment = field(default_factory=dict)
    deleting: frozenset[bytes] = frozenset()
    topic_names: dict[bytes, str] = field(default_factory=dict)

    type = GroupType.SHARE
    protocol_type = SHARE_PROTOCOL_TYPE

    @property
    def state(self) -> ShareGroupState:
        if self.deleted:
            return ShareGroupState.DEAD
        if not self.members:
            return ShareGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch or any(
                m.member_epoch != self.assignment_epoch for m in self.members.values()):
            return ShareGroupState.RECONCILING
        return ShareGroupState.STABLE

    @property
    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ShareMember:
        member = self.members.get(member_id)
        if member is None:
            raise UnknownMemberIdError(f"member {member_id} is not a member of share group {self.group_id}")
        return member

    def subscribed_topic_names(self) -> set[str]:
        return {name for m in self.members.values() for name in m.subscribed_topic_names}

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topic_names()

    # Offsets of share groups live in the share coordinator (DescribeShareGroupOffsets), never in OffsetCommit.
    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, generation_or_epoch: int,
                               api_version: int, is_transactional: bool = False) -> None:
        raise GroupIdNotFoundError(f"group {self.group_id} is a share group: it commits no offsets")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        raise GroupIdNotFoundError(f"group {self.group_id} is a share group: it commits no offsets")

    # ---- records -------------------------------------------------------------------------------------------------

    def epoch_record(self, epoch: int) -> records.CoordinatorRecord:
        return records.consumer_group_record(records.SHARE_GROUP_METADATA, self.group_id,
                                             ShareGroupMetadataValue(epoch=epoch, metadata_hash=0))

    def target_member_record(self, member_id: str, assignment: Assignment) -> records.CoordinatorRecord:
        value = ShareGroupTargetAssignmentMemberValue(topic_partitions=_topic_partitions(
            assignment, ShareGroupTargetAssignmentMemberValue.TopicPartition))
        return records.consumer_group_record(records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER, self.group_id, value,
                                             member_id)

    def target_epoch_record(self, epoch: int, now_ms: int) -> records.CoordinatorRecord:
        return records.consumer_group_record(
            records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, self.group_id,
            ShareGroupTargetAssignmentMetadataValue(assignment_epoch=epoch, assignment_timestamp=now_ms))

    def member_tombstones(self, member_id: str) -> list[records.CoordinatorRecord]:
        """Kafka's order for removing a member: current assignment, target assignment, then subscription."""
        return [records.consumer_group_record(t, self.group_id, None, member_id) for t in (
            records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
            records.SHARE_GROUP_MEMBER_METADATA)]

    def state_partition_record(self, initializing: Assignment, initialized: Assignment, deleting: frozenset[bytes],
                               topic_names: dict[bytes, str]) -> records.CoordinatorRecord:
        """The whole ShareGroupStatePartitionMetadata value, as Kafka writes it at each change."""
        info = ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo
        value = ShareGroupStatePartitionMetadataValue(
            initializing_topics=[info(topic_id=t, topic_name=topic_names.get(t, ""), partitions=sorted(ps))
                                 for t, ps in sorted(initializing.items()) if ps],
            initialized_topics=[info(topic_id=t, topic_name=topic_names.get(t, ""), partitions=sorted(ps))
                                for t, ps in sorted(initialized.items()) if ps],
            deleting_topics=[ShareGroupStatePartitionMetadataValue.TopicInfo(topic_id=t,
                                                                              topic_name=topic_names.get(t, ""))
                             for t in sorted(deleting)])
        return records.consumer_group_record(records.SHARE_GROUP_STATE_PARTITION_METADATA, self.group_id, value)

    def initialized_partitions(self) -> list[tuple[bytes, int]]:
        return sorted((t, p) for t, ps in self.initialized.items() for p in ps)

    def partitions_with_state(self, topic_ids: set[bytes] | None = None) -> list[tuple[bytes, int]]:
        """The share-partitions initialised or initialising (of the topics given, else all): those whose state a
        deletion deletes."""
        return sorted({(t, p) for assignment in (self.initialized, self.initializing) for t, ps in assignment.items()
                       if topic_ids is None or t in topic_ids for p in ps})

    def group_tombstones(self) -> list[records.CoordinatorRecord]:
        """The group's own records (its members' went first); the state-partition metadata before the epoch, so
        that a load never meets a record of the group after the tombstone that ends it."""
        return [records.consumer_group_record(t, self.group_id, None) for t in (
            records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, records.SHARE_GROUP_STATE_PARTITION_METADATA,
            records.SHARE_GROUP_METADATA)]

    def replay(self, record: records.CoordinatorRecord) -> None:
        """Apply one ShareGroup* record (live or loaded)."""
        kind, value = record.record_type, record.value
        member_id = getattr(record.key, "member_id", None)
        if kind == records.SHARE_GROUP_METADATA:
            self.deleted = value is None
            if value is not None:
                self.group_epoch = value.epoch
        elif kind == records.SHARE_GROUP_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = 0 if value is None else value.assignment_epoch
        elif kind == records.SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target_assignment.pop(member_id, None)
            else:
                self.target_assignment[member_id] = _assignment(value.topic_partitions)
        elif kind == records.SHARE_GROUP_MEMBER_METADATA:
            if value is None:
                self.members.pop(member_id, None)
            else:
                current = self.members.get(member_id) or ShareMember(member_id)
                self.members[member_id] = replace(current, rack_id=value.rack_id, client_id=value.client_id,
                                                  client_host=value.client_host,
                                                  subscribed_topic_names=tuple(value.subscribed_topic_names))
        elif kind == records.SHARE_GROUP_STATE_PARTITION_METADATA:
            self.initializing = {} if value is None else _assignment(value.initializing_topics)
            self.initialized = {} if value is None else _assignment(value.initialized_topics)
            self.deleting = frozenset() if value is None else frozenset(t.topic_id for t in value.deleting_topics)
            self.topic_names = {} if value is None else {t.topic_id: t.topic_name for t in (
                *value.initializing_topics, *value.initialized_topics, *value.deleting_topics)}
        elif kind == records.SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT and value is not None:
            current = self.members.get(member_id) or ShareMember(member_id)
            self.members[member_id] = replace(current, member_epoch=value.member_epoch,
                                              previous_member_epoch=value.previous_member_epoch,
                                              assigned=_assignment(value.assigned_partitions))
