"""Classic members in a consumer group (Kafka's classicGroupJoin/Sync/Heartbeat/LeaveToConsumerGroup, KIP-848).

A consumer that speaks only JoinGroup/SyncGroup can be a member of a consumer group (one converted from a classic
group, or one it joins while consumer-protocol members are in it). The server-side assignor decides for it too:
- JoinGroup: the subscription (and, for cooperative clients, the owned partitions) is read from the first
  protocol's metadata; the member is updated and reconciled like a KIP-848 member and answered at once with
  generation = its member epoch, no leader and no member list, so the client runs no assignor and sends an empty
  SyncGroup. A dynamic member on v4+ first gets MEMBER_ID_REQUIRED, as in classic groups.
- SyncGroup: its current assignment, as ConsumerProtocolAssignment bytes at its subscription's version.
- Heartbeat: REBALANCE_IN_PROGRESS when the member must rejoin to follow the group (its epoch is behind, it has
  partitions to give up, or partitions it waits for are free now); if it does not rejoin within its rebalance
  timeout it is fenced. A member that sends no SyncGroup within its rebalance timeout after joining is fenced.
- LeaveGroup and session expiry (its classic session timeout) fence it.
As in classic_group_manager.py, answers go through `respond` and failures are raised for the coordinator to answer.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from wirebroker.coordinator.classic_group_manager import (
    FIRST_MEMBER_ID_REQUIRED_VERSION,
    UNKNOWN_MEMBER_ID,
    JoinRespond,
    SyncRespond,
    join_error,
    validate_join,
)
from wirebroker.coordinator.consumer_group import (
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from wirebroker.coordinator.consumer_group_manager import ConsumerGroupManager
from wirebroker.coordinator.consumer_protocol import (
    parse_subscription,
    read_version,
    serialize_assignment,
)
from wirebroker.coordinator.group import CONSUMER_PROTOCOL_TYPE
from wirebroker.coordinator.group_conversion import by_topic_id, by_topic_name
from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.protocol.errors import (
    ErrorCode,
    FencedInstanceIdError,
    GroupMaxSizeReachedError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    KafkaError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest
from wirebroker.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from wirebroker.protocol.messages.leave_group import LeaveGroupResponse
from wirebroker.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse
from wirebroker.protocol.primitives import DecodeError


class ClassicMembersOfConsumerGroups:
    def __init__(self, runtime: GroupRuntime, consumer: ConsumerGroupManager) -> None:
        self.runtime = runtime
        self._consumer = consumer

    # ---- JoinGroup -----------------------------------------------------------------------------------------------

    def join(self, group: ConsumerGroup, request: JoinGroupRequest, version: int, client_id: str, client_host: str,
             respond: JoinRespond) -> None:
        validate_join(request, self.runtime.config)
        unknown = request.member_id == UNKNOWN_MEMBER_ID
        member_id = str(uuid.uuid4()) if unknown else request.member_id
        if member_id not in group.members and len(group.members) >= self.runtime.config.max_size:
            raise GroupMaxSizeReachedError(f"group {group.group_id} has reached group.max.size")
        protocols = tuple((p.name, bytes(p.metadata)) for p in request.protocols)
        self._check_protocols(group, request.protocol_type, protocols)
        if unknown and request.group_instance_id is None and version >= FIRST_MEMBER_ID_REQUIRED_VERSION:
            respond(join_error(ErrorCode.MEMBER_ID_REQUIRED, member_id))
            return
        out: list = []
        member = self._member(group, member_id, request.group_instance_id, out)
        try:
            subscription = parse_subscription(protocols[0][1])
        except DecodeError as exc:
            raise InconsistentGroupProtocolError(f"unreadable consumer subscription: {exc}") from None
        updated = replace(
            member, instance_id=request.group_instance_id, rack_id=subscription.rack_id, client_id=client_id,
            client_host=client_host, rebalance_timeout_ms=request.rebalance_timeout_ms, server_assignor=None,
            subscribed_topic_names=tuple(sorted(subscription.topics)),
            classic_session_timeout_ms=request.session_timeout_ms, classic_protocols=protocols)
        owned = by_topic_id(self.runtime.topics,
                            {tp.topic: set(tp.partitions) for tp in subscription.owned_partitions or []})
        reconciled = self._consumer.update_member(group, member, updated, owned, out)
        self.runtime.cancel(("consumer-join", group.group_id, member_id))
        self._consumer.schedule_session_timeout(group, member_id, request.session_timeout_ms)
        self.runtime.schedule(("consumer-sync", group.group_id, member_id), request.rebalance_timeout_ms,
                              lambda: self._consumer.fence(group, member_id, "it sent no SyncGroup in time"))
        respond(JoinGroupResponse(error_code=ErrorCode.NONE, generation_id=reconciled.member_epoch,
                                  protocol_type=CONSUMER_PROTOCOL_TYPE, protocol_name=protocols[0][0], leader="",
                                  member_id=member_id, members=[]))

    @staticmethod
    def _check_protocols(group: ConsumerGroup, protocol_type: str, protocols: tuple) -> None:
        common = group.classic_protocols_supported_by_all()
        names = {name for name, _ in protocols}
        if protocol_type != CONSUMER_PROTOCOL_TYPE or not names or (common is not None and not names & common):
            raise InconsistentGroupProtocolError(
                f"protocol type {protocol_type!r} with protocols {sorted(names)} does not match group "
                f"{group.group_id}")

    def _member(self, group: ConsumerGroup, member_id: str, instance_id: str | None, out: list) -> ConsumerMember:
        existing = group.members.get(member_id)
        if existing is not None:
            if not existing.uses_classic_protocol:
                raise UnknownMemberIdError(f"member {member_id} uses the consumer protocol")
            return existing
        previous = group.static_member(instance_id) if instance_id is not None else None
        if previous is None:
            return ConsumerMember(member_id, instance_id=instance_id)
        # A static member restarting: it takes its predecessor's place, partitions and target (KIP-345).
        for key in ("consumer-session", "consumer-sync", "consumer-join", "consumer-revocation"):
            self.runtime.cancel((key, group.group_id, previous.member_id))
        out.extend(group.member_tombstones(previous.member_id))
        successor = replace(previous, member_id=member_id)
        out += [successor.subscription_record(group.group_id),
                group.target_member_record(member_id, group.target_assignment.get(previous.member_id, {})),
                successor.assignment_record(group.group_id)]
        return successor

    # ---- SyncGroup, Heartbeat, LeaveGroup ------------------------------------------------------------------------

    def _classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                        generation_id: int) -> ConsumerMember:
        if instance_id is not None:
            current = group.static_member(instance_id)
            if current is not None and current.member_id != member_id:
                raise FencedInstanceIdError(f"static member {instance_id} now has member id {current.member_id}")
        member = group.member(member_id)
        if not member.uses_classic_protocol:
            raise UnknownMemberIdError(f"member {member_id} uses the consumer protocol")
        if generation_id != member.member_epoch:
            raise IllegalGenerationError(f"generation {generation_id} is not member {member_id}'s "
                                         f"{member.member_epoch}")
        return member

    def sync(self, group: ConsumerGroup, request: SyncGroupRequest, respond: SyncRespond) -> None:
        member = self._classic_member(group, request.member_id, request.group_instance_id, request.generation_id)
        protocol_name, subscription = member.classic_protocols[0]
        if (request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE
                or request.protocol_name is not None and request.protocol_name != protocol_name):
            raise InconsistentGroupProtocolError(f"protocol {request.protocol_name} is not member "
                                                 f"{member.member_id}'s {protocol_name}")
        self.runtime.cancel(("consumer-sync", group.group_id, member.member_id))
        self._consumer.schedule_session_timeout(group, member.member_id, member.classic_session_timeout_ms)
        assignment = serialize_assignment(by_topic_name(self.runtime.topics, member.assigned),
                                          read_version(subscription))
        respond(SyncGroupResponse(error_code=ErrorCode.NONE, protocol_type=CONSUMER_PROTOCOL_TYPE,
                                  protocol_name=protocol_name, assignment=assignment))

    def heartbeat(self, group: ConsumerGroup, request: HeartbeatRequest) -> None:
        """Keeps the member's session alive; REBALANCE_IN_PROGRESS (raised) tells it to rejoin."""
        member = self._classic_member(group, request.member_id, request.group_instance_id, request.generation_id)
        self._consumer.schedule_session_timeout(group, member.member_id, member.classic_session_timeout_ms)
        if (member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
                or member.state is MemberState.UNRELEASED_PARTITIONS and not self._waits_on_others(group, member)):
            member_id = member.member_id
            key = ("consumer-join", group.group_id, member_id)
            if not self.runtime.is_scheduled(key):
                self.runtime.schedule(key, member.rebalance_timeout_ms,
                                      lambda: self._consumer.fence(group, member_id, "it did not rejoin in time"))
            raise RebalanceInProgressError(f"member {member.member_id} of group {group.group_id} must rejoin")

    @staticmethod
    def _waits_on_others(group: ConsumerGroup, member: ConsumerMember) -> bool:
        owners = group.partition_owners()
        target = group.target_assignment.get(member.member_id, {})
        return any(owners.get((topic_id, p), member.member_id) != member.member_id
                   for topic_id, partitions in target.items() for p in partitions
                   if p not in member.assigned.get(topic_id, frozenset()))

    def leave(self, group: ConsumerGroup, leaving: list[tuple[str, str | None, str | None]]
              ) -> tuple[int, list[LeaveGroupResponse.MemberResponse]]:
        """(top-level error, one response per (member id, group instance id, reason))."""
        return ErrorCode.NONE, [
            LeaveGroupResponse.MemberResponse(member_id=member_id, group_instance_id=instance_id,
                                              error_code=self._leave_one(group, member_id, instance_id))
            for member_id, instance_id, _ in leaving]

    def _leave_one(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> int:
        try:
            if instance_id is not None:
                current = group.static_member(instance_id)
                if current is None:
                    raise UnknownMemberIdError(f"static member {instance_id} is not in group {group.group_id}")
                if member_id != UNKNOWN_MEMBER_ID and member_id != current.member_id:
                    raise FencedInstanceIdError(f"static member {instance_id} now has member id {current.member_id}")
                member_id = current.member_id
            group.member(member_id)
        except KafkaError as exc:
            return exc.code
        self._consumer.fence(group, member_id, "it left the group")
        return ErrorCode.NONE
