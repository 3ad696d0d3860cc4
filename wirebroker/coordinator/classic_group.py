"""A classic group (Kafka's ClassicGroup and ClassicGroupMember): members, generation, chosen protocol, state.

State machine (transitions outside VALID_PREVIOUS_STATES are a bug and raise):

    Empty ──join──▶ PreparingRebalance ──all joined / rebalance timeout──▶ CompletingRebalance
      ▲                   ▲      │                                            │ leader's SyncGroup
      │                   │      └──▶ Empty (every member gone)               ▼
      └── last member leaves / expires ◀── Stable ◀──────────────────────────┘
    Dead: the group was deleted (DeleteGroups, offsets expired) and is being removed.

This module holds the group's data and the rules that read it (protocol selection, membership checks); the request
flows that drive it (JoinGroup, SyncGroup, ...) are in classic_group_manager.py. A group's durable form is the
GroupMetadataValue record written when a generation's assignment is set and when the group becomes empty.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wirebroker.coordinator.consumer_protocol import parse_subscription
from wirebroker.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupType
from wirebroker.coordinator.internal_records import with_fields
from wirebroker.protocol.errors import (
    CoordinatorNotAvailableError,
    FencedInstanceIdError,
    IllegalGenerationError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from wirebroker.protocol.messages.group_metadata_value import GroupMetadataValue
from wirebroker.protocol.primitives import DecodeError

NO_GENERATION = -1


class ClassicGroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


S = ClassicGroupState
VALID_PREVIOUS_STATES = {
    S.EMPTY: {S.PREPARING_REBALANCE},
    S.PREPARING_REBALANCE: {S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY},
    S.COMPLETING_REBALANCE: {S.PREPARING_REBALANCE},
    S.STABLE: {S.COMPLETING_REBALANCE},
    S.DEAD: {S.STABLE, S.PREPARING_REBALANCE, S.COMPLETING_REBALANCE, S.EMPTY, S.DEAD},
}


@dataclass(eq=False)
class ClassicMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    # Set while the member's JoinGroup (or SyncGroup) waits for the rebalance (or the leader's assignment).
    awaiting_join: Callable[[Any], None] | None = None
    awaiting_sync: Callable[[Any], None] | None = None
    is_new: bool = False  # joined in this rebalance; expired faster if it never comes back (Kafka's isNew)

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise ValueError(f"member {self.member_id} does not support protocol {protocol}")

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return self.protocols == protocols

    def vote(self, candidates: set[str]) -> str:
        return next(name for name in self.protocol_names() if name in candidates)


@dataclass(eq=False)
class ClassicGroup:
    group_id: str
    state: ClassicGroupState = ClassicGroupState.EMPTY
    previous_state: ClassicGroupState = ClassicGroupState.EMPTY
    state_timestamp_ms: int = -1
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, ClassicMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    pending_members: set[str] = field(default_factory=set)  # got MEMBER_ID_REQUIRED, not joined yet (KIP-394)
    pending_sync: set[str] = field(default_factory=set)  # joined this generation, SyncGroup not seen yet
    new_member_added: bool = False  # during the initial rebalance delay: whether to wait some more

    type = GroupType.CLASSIC

    # ---- state ---------------------------------------------------------------------------------------------------

    @property
    def state_name(self) -> str:
        return self.state.value

    def is_in(self, *states: ClassicGroupState) -> bool:
        return self.state in states

    def transition_to(self, target: ClassicGroupState, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise RuntimeError(f"group {self.group_id} cannot go from {self.state.value} to {target.value}")
        self.previous_state, self.state = self.state, target
        self.state_timestamp_ms = now_ms

    def is_empty(self) -> bool:
        return not self.members and not self.pending_members

    # ---- members -------------------------------------------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicMember:
        member = self.members.get(member_id)
        if member is None:
            raise UnknownMemberIdError(f"member {member_id} is not in group {self.group_id}")
        return member

    def add(self, member: ClassicMember) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> ClassicMember | None:
        member = self.members.pop(member_id, None)
        self.pending_members.discard(member_id)
        self.pending_sync.discard(member_id)
        if member is None:
            return None
        if member.group_instance_id is not None and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> ClassicMember:
        """A static member came back with a new member id: the same member under the new id (KIP-345)."""
        member = self.members.pop(old_member_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        self.static_members[instance_id] = new_member_id
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        if old_member_id in self.pending_sync:
            self.pending_sync.discard(old_member_id)
            self.pending_sync.add(new_member_id)
        return member

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def awaiting_join_count(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.awaiting_join_count() and not self.pending_members

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # ---- protocols -----------------------------------------------------------------------------------------------

    def _candidates(self) -> set[str]:
        counts = Counter(name for m in self.members.values() for name in set(m.protocol_names()))
        return {name for name, n in counts.items() if n == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        names = {name for name, _ in protocols}
        if not self.members:
            return bool(protocol_type) and bool(names)
        return protocol_type == self.protocol_type and bool(names & self._candidates())

    def select_protocol(self) -> str:
        """The protocol every member supports that most members prefer (Kafka's ClassicGroup.selectProtocol);
        ties go to the protocol listed first by the longest-standing member."""
        candidates = self._candidates()
        if not candidates:
            raise RuntimeError(f"no protocol common to the members of group {self.group_id}")
        votes = Counter(member.vote(candidates) for member in self.members.values())
        order = {name: i for i, name in enumerate(next(iter(self.members.values())).protocol_names())}
        return max(votes, key=lambda name: (votes[name], -order.get(name, len(order))))

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members subscribe to, when the group speaks the consumer protocol and every member's
        subscription parses; None when unknown (Kafka's computeSubscribedTopics)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            try:
                subscription = parse_subscription(member.metadata(self.protocol_name))
            except (DecodeError, ValueError):
                return None
            topics.update(subscription.topics)
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.is_in(S.EMPTY):
            return False
        subscribed = self.subscribed_topics()
        return True if subscribed is None else topic in subscribed

    # ---- offsets -------------------------------------------------------------------------------------------------

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ClassicMember:
        """The member named by id and instance id: FENCED_INSTANCE_ID when the instance id now belongs to another
        member id (a newer incarnation of the static member), UNKNOWN_MEMBER_ID when it is not in the group."""
        if group_instance_id is not None:
            current = self.static_members.get(group_instance_id)
            if current is not None and current != member_id:
                raise FencedInstanceIdError(
                    f"static member {group_instance_id} of group {self.group_id} now has member id {current}")
        return self.member(member_id)

    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, generation_id: int,
                               api_version: int, is_transactional: bool = False) -> None:
        if self.is_in(S.DEAD):
            raise CoordinatorNotAvailableError(f"group {self.group_id} is being deleted")
        if generation_id < 0 and self.is_in(S.EMPTY):
            return  # the admin client, or a consumer that assigns partitions itself
        if is_transactional and generation_id < 0 and not member_id and group_instance_id is None:
            return  # TxnOffsetCommit before v3 names no member (Kafka validates only what the request names)
        self.validate_member(member_id, group_instance_id)
        if generation_id != self.generation_id:
            raise IllegalGenerationError(
                f"generation {generation_id} is not group {self.group_id}'s current generation {self.generation_id}")
        if not is_transactional and self.is_in(S.COMPLETING_REBALANCE):
            # The member has its JoinGroup answer but not its assignment yet: let it retry after SyncGroup.
            raise RebalanceInProgressError(f"group {self.group_id} is completing a rebalance")

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> None:
        if self.is_in(S.DEAD):
            raise CoordinatorNotAvailableError(f"group {self.group_id} is being deleted")

    # ---- the durable form ----------------------------------------------------------------------------------------

    def to_record_value(self) -> GroupMetadataValue:
        """The GroupMetadataValue Kafka writes: every member with its subscription for the chosen protocol and its
        assignment; an empty group is written with no protocol, no leader and generation as it stands."""
        if not self.members:
            return with_fields(GroupMetadataValue(protocol_type=self.protocol_type or "",
                                                  generation=self.generation_id,
                                                  current_state_timestamp=self.state_timestamp_ms, members=[]),
                               protocol=None, leader=None)
        return GroupMetadataValue(
            protocol_type=self.protocol_type or "",
            generation=self.generation_id,
            protocol=self.protocol_name,
            leader=self.leader_id,
            current_state_timestamp=self.state_timestamp_ms,
            members=[
                GroupMetadataValue.MemberMetadata(
                    member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                    client_host=m.client_host, rebalance_timeout=m.rebalance_timeout_ms,
                    session_timeout=m.session_timeout_ms,
                    subscription=m.metadata(self.protocol_name) if self.protocol_name else b"",
                    assignment=m.assignment,
                )
                for m in self.members.values()
            ],
        )

    @classmethod
    def from_record_value(cls, group_id: str, value: GroupMetadataValue, now_ms: int) -> ClassicGroup:
        group = cls(group_id, generation_id=value.generation, protocol_type=value.protocol_type or None,
                    protocol_name=value.protocol, leader_id=value.leader,
                    state_timestamp_ms=value.current_state_timestamp if value.current_state_timestamp >= 0 else now_ms)
        for m in value.members:
            group.add(ClassicMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout if m.rebalance_timeout >= 0 else m.session_timeout,
                session_timeout_ms=m.session_timeout, protocol_type=value.protocol_type,
                protocols=[(value.protocol or "", bytes(m.subscription))], assignment=bytes(m.assignment),
            ))
        group.leader_id = value.leader if value.leader in group.members else group.leader_id
        group.state = S.STABLE if group.members else S.EMPTY
        return group
