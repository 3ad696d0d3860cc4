"""A consumer group of the KIP-848 protocol (Kafka's ConsumerGroup and ConsumerGroupMember).

The group is the sum of its records: every change is written to `__consumer_offsets` as one of the ConsumerGroup*
records and applied by `replay`, the same call that rebuilds the group at start-up, so what is served and what is
reloaded cannot drift apart. Its parts:

- group epoch: bumped when membership or a subscription changes;
- target assignment and its epoch: what the server-side assignor computed for the group epoch;
- each member's current assignment, member epoch and state: where the member is on its way to the target
  (MemberState: STABLE, UNREVOKED_PARTITIONS waiting for the member to give partitions up, UNRELEASED_PARTITIONS
  waiting for another member to give up partitions this one should get).

The group state is derived: Empty (no members), Assigning (group epoch ahead of the target assignment), Reconciling
(a member not yet at the target epoch or not STABLE), Stable.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.group import GroupType
from wirebroker.protocol.errors import (
    IllegalGenerationError,
    StaleMemberEpochError,
    UnknownMemberIdError,
    UnsupportedVersionError,
)
from wirebroker.protocol.messages.consumer_group_current_member_assignment_value import (
    ConsumerGroupCurrentMemberAssignmentValue,
)
from wirebroker.protocol.messages.consumer_group_member_metadata_value import (
    ConsumerGroupMemberMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_metadata_value import (
    ConsumerGroupMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_partition_metadata_value import (
    ConsumerGroupPartitionMetadataValue,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_member_value import (
    ConsumerGroupTargetAssignmentMemberValue,
)
from wirebroker.protocol.messages.consumer_group_target_assignment_metadata_value import (
    ConsumerGroupTargetAssignmentMetadataValue,
)

# topic id (16 bytes) -> partitions
Assignment = dict[bytes, frozenset[int]]
FIRST_CONSUMER_PROTOCOL_COMMIT_VERSION = 9  # OffsetCommit v9 carries member epochs (KIP-848)


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(enum.IntEnum):
    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True)
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    # A member that joined with JoinGroup (the classic protocol) into this consumer group: its session timeout and
    # its (protocol name, subscription bytes) in preference order. None for members of the consumer protocol.
    classic_session_timeout_ms: int | None = None
    classic_protocols: tuple[tuple[str, bytes], ...] | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_protocols is not None

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == epoch

    def _classic_metadata(self) -> ConsumerGroupMemberMetadataValue.ClassicMemberMetadata:
        if self.classic_protocols is None:
            # The codec's default: the tagged field is left out, as Kafka leaves it out for such members.
            return ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
        return ConsumerGroupMemberMetadataValue.ClassicMemberMetadata(
            session_timeout_ms=self.classic_session_timeout_ms,
            supported_protocols=[ConsumerGroupMemberMetadataValue.ClassicProtocol(name=name, metadata=metadata)
                                 for name, metadata in self.classic_protocols])

    def subscription_record(self, group_id: str) -> records.CoordinatorRecord:
        value = records.with_fields(
            ConsumerGroupMemberMetadataValue(client_id=self.client_id, client_host=self.client_host,
                                             subscribed_topic_names=sorted(self.subscribed_topic_names),
                                             rebalance_timeout_ms=self.rebalance_timeout_ms,
                                             classic_member_metadata=self._classic_metadata()),
            instance_id=self.instance_id, rack_id=self.rack_id, subscribed_topic_regex=self.subscribed_topic_regex,
            server_assignor=self.server_assignor)
        return records.consumer_group_record(records.CONSUMER_GROUP_MEMBER_METADATA, group_id, value, self.member_id)

    def assignment_record(self, group_id: str) -> records.CoordinatorRecord:
        return records.consumer_group_record(records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, group_id,
                                             ConsumerGroupCurrentMemberAssignmentValue(
                                                 member_epoch=self.member_epoch,
                                                 previous_member_epoch=self.previous_member_epoch,
                                                 state=int(self.state),
                                                 assigned_partitions=_topic_partitions(
                                                     self.assigned, ConsumerGroupCurrentMemberAssignmentValue),
                                                 partitions_pending_revocation=_topic_partitions(
                                                     self.pending_revocation,
                                                     ConsumerGroupCurrentMemberAssignmentValue)),
                                             self.member_id)


def _topic_partitions(assignment: Assignment, value_class: type) -> list:
    struct = getattr(value_class, "TopicPartitions", None) or value_class.TopicPartition
    return [struct(topic_id=topic_id, partitions=sorted(partitions))
            for topic_id, partitions in sorted(assignment.items()) if partitions]


def _assignment(topic_partitions: list) -> Assignment:
    return {tp.topic_id: frozenset(tp.partitions) for tp in topic_partitions if tp.partitions}


@dataclass(eq=False)
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    target_assignment: dict[str, Assignment] = field(default_factory=dict)
    # topic name -> (topic id, partition count) of every subscribed topic, as last written
    subscription_metadata: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    state_timestamp_ms: int = -1
    deleted: bool = False

    type = GroupType.CONSUMER
    protocol_type = "consumer"

    @property
    def state(self) -> ConsumerGroupState:
        if self.deleted:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    @property
    def state_name(self) -> str:
        return self.state.value

    def is_empty(self) -> bool:
        return not self.members

    def member(self, member_id: str) -> ConsumerMember:
        member = self.members.get(member_id)
        if member is None:
            raise UnknownMemberIdError(f"member {member_id} is not a member of group {self.group_id}")
        return member

    def static_member(self, instance_id: str) -> ConsumerMember | None:
        return next((m for m in self.members.values() if m.instance_id == instance_id), None)

    def classic_protocols_supported_by_all(self) -> set[str] | None:
        """The protocol names every classic member supports; None when there is no classic member."""
        classic = [m for m in self.members.values() if m.uses_classic_protocol]
        if not classic:
            return None
        return set.intersection(*({name for name, _ in m.classic_protocols} for m in classic))

    def subscribed_topic_names(self) -> set[str]:
        return {name for m in self.members.values() for name in m.subscribed_topic_names}

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscription_metadata or topic in self.subscribed_topic_names()

    def partition_owners(self) -> dict[tuple[bytes, int], str]:
        """(topic id, partition) -> the member that holds it (assigned or still to revoke)."""
        owners = {}
        for member in self.members.values():
            for assignment in (member.assigned, member.pending_revocation):
                for topic_id, partitions in assignment.items():
                    for partition in partitions:
                        owners[(topic_id, partition)] = member.member_id
        return owners

    # ---- offsets -------------------------------------------------------------------------------------------------

    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, member_epoch: int,
                               api_version: int, is_transactional: bool = False) -> None:
        if member_epoch < 0 and not self.members:
            return  # the admin client, or a consumer that assigns partitions itself
        if is_transactional and member_epoch < 0 and not member_id and group_instance_id is None:
            return  # TxnOffsetCommit before v3 names no member (Kafka validates only what the request names)
        member = self.member(member_id)
        if member.uses_classic_protocol:
            if member_epoch != member.member_epoch:
                raise IllegalGenerationError(f"generation {member_epoch} is not member {member_id}'s "
                                             f"{member.member_epoch}")
            return
        if not is_transactional and api_version < FIRST_CONSUMER_PROTOCOL_COMMIT_VERSION:
            raise UnsupportedVersionError("OffsetCommit version 9 or above must be used by members using the "
                                          "consumer group protocol")
        if member_epoch != member.member_epoch:
            raise StaleMemberEpochError(f"member epoch {member_epoch} is not member {member_id}'s epoch "
                                        f"{member.member_epoch}")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if member_epoch < 0 and member_id is None:
            return
        member = self.member(member_id or "")
        if member_epoch != member.member_epoch:
            raise StaleMemberEpochError(f"member epoch {member_epoch} is not member {member_id}'s epoch "
                                        f"{member.member_epoch}")

    # ---- records -------------------------------------------------------------------------------------------------

    def epoch_record(self, epoch: int) -> records.CoordinatorRecord:
        return records.consumer_group_record(records.CONSUMER_GROUP_METADATA, self.group_id,
                                             ConsumerGroupMetadataValue(epoch=epoch))

    def subscription_metadata_record(self, metadata: dict[str, tuple[bytes, int]]) -> records.CoordinatorRecord:
        topics = [ConsumerGroupPartitionMetadataValue.TopicMetadata(topic_id=topic_id, topic_name=name,
                                                                    num_partitions=count, partition_metadata=[])
                  for name, (topic_id, count) in sorted(metadata.items())]
        return records.consumer_group_record(records.CONSUMER_GROUP_PARTITION_METADATA, self.group_id,
                                             ConsumerGroupPartitionMetadataValue(topics=topics))

    def target_member_record(self, member_id: str, assignment: Assignment) -> records.CoordinatorRecord:
        value = ConsumerGroupTargetAssignmentMemberValue(
            topic_partitions=_topic_partitions(assignment, ConsumerGroupTargetAssignmentMemberValue))
        return records.consumer_group_record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, self.group_id, value,
                                             member_id)

    def target_epoch_record(self, epoch: int) -> records.CoordinatorRecord:
        return records.consumer_group_record(records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, self.group_id,
                                             ConsumerGroupTargetAssignmentMetadataValue(assignment_epoch=epoch))

    def member_tombstones(self, member_id: str) -> list[records.CoordinatorRecord]:
        """Kafka's order for removing a member: current assignment, target assignment, then subscription."""
        return [records.consumer_group_record(t, self.group_id, None, member_id) for t in (
            records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
            records.CONSUMER_GROUP_MEMBER_METADATA)]

    def group_tombstones(self) -> list[records.CoordinatorRecord]:
        return [records.consumer_group_record(t, self.group_id, None) for t in (
            records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, records.CONSUMER_GROUP_PARTITION_METADATA,
            records.CONSUMER_GROUP_METADATA)]

    def replay(self, record: records.CoordinatorRecord) -> None:
        """Apply one ConsumerGroup* record (live or loaded)."""
        kind, value = record.record_type, record.value
        member_id = getattr(record.key, "member_id", None)
        if kind == records.CONSUMER_GROUP_METADATA:
            if value is None:
                self.deleted = True
            else:
                self.group_epoch = value.epoch
                self.deleted = False
        elif kind == records.CONSUMER_GROUP_PARTITION_METADATA:
            self.subscription_metadata = {} if value is None else {
                t.topic_name: (t.topic_id, t.num_partitions) for t in value.topics}
        elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = 0 if value is None else value.assignment_epoch
        elif kind == records.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER:
            if value is None:
                self.target_assignment.pop(member_id, None)
            else:
                self.target_assignment[member_id] = _assignment(value.topic_partitions)
        elif kind == records.CONSUMER_GROUP_MEMBER_METADATA:
            if value is None:
                self.members.pop(member_id, None)
            else:
                current = self.members.get(member_id) or ConsumerMember(member_id)
                classic = value.classic_member_metadata
                is_classic = classic is not None and bool(classic.supported_protocols)
                self.members[member_id] = replace(
                    current, instance_id=value.instance_id, rack_id=value.rack_id, client_id=value.client_id,
                    client_host=value.client_host, subscribed_topic_names=tuple(value.subscribed_topic_names),
                    subscribed_topic_regex=value.subscribed_topic_regex,
                    rebalance_timeout_ms=value.rebalance_timeout_ms, server_assignor=value.server_assignor,
                    classic_session_timeout_ms=classic.session_timeout_ms if is_classic else None,
                    classic_protocols=tuple((p.name, bytes(p.metadata)) for p in classic.supported_protocols)
                    if is_classic else None)
        elif kind == records.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT and value is not None:
            current = self.members.get(member_id) or ConsumerMember(member_id)
            self.members[member_id] = replace(
                current, member_epoch=value.member_epoch, previous_member_epoch=value.previous_member_epoch,
                state=MemberState(value.state) if value.state in MemberState._value2member_map_
                else MemberState.UNKNOWN,
                assigned=_assignment(value.assigned_partitions),
                pending_revocation=_assignment(value.partitions_pending_revocation))
