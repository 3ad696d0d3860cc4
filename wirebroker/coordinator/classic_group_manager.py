"""The classic group protocol's request flows (the classic half of Kafka's GroupMetadataManager).

JoinGroup: a member with no member id gets one; from v4 it must first come back with it (MEMBER_ID_REQUIRED,
KIP-394) and is held as a pending member until then. A static member (`group.instance.id`, KIP-345) that rejoins
takes over its old member id's place: in a Stable group with unchanged protocols it gets the current generation back
and no rebalance happens. Any other new or changed member starts a rebalance: the group goes to PreparingRebalance
and the join completes when every member has rejoined or the largest rebalance timeout passes (members that did not
rejoin are removed). The first rebalance of an empty group waits `group.initial.rebalance.delay.ms`, and again while
new members keep arriving, up to the rebalance timeout. Completing the join starts a new generation, picks the
protocol, answers every waiting JoinGroup (the leader gets the member list), and gives each member its rebalance
timeout to send SyncGroup; members that do not are removed.

SyncGroup: the leader's assignment is written to `__consumer_offsets` (GroupMetadataValue) and then handed to every
member; the group is Stable. Heartbeat: keeps a member's session alive and tells it about a rebalance. LeaveGroup
and a session expiry remove the member and rebalance. Every answer is given through the `respond` callable the
request came with, possibly from the timer thread; a failure found while the request is handled is raised as a
Kafka error, which the coordinator answers. (Classic members of a consumer group are served by
classic_in_consumer_group.py; the coordinator sends each request to the one or the other.)
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import (
    ClassicGroup,
    ClassicGroupState,
    ClassicMember,
)
from wirebroker.coordinator.consumer_group import ConsumerGroup
from wirebroker.coordinator.group import GroupConfig, GroupType
from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.protocol.errors import (
    CoordinatorNotAvailableError,
    ErrorCode,
    FencedInstanceIdError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    IllegalGenerationError,
    InconsistentGroupProtocolError,
    InvalidGroupIdError,
    InvalidSessionTimeoutError,
    KafkaError,
    RebalanceInProgressError,
    UnknownMemberIdError,
)
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest
from wirebroker.protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from wirebroker.protocol.messages.leave_group import LeaveGroupResponse
from wirebroker.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

log = logging.getLogger(__name__)

S = ClassicGroupState
UNKNOWN_MEMBER_ID = ""
# Kafka's group.classic.new.member.join.timeout.ms: a new member whose JoinGroup is parked is dropped after this
# long if the rebalance has not completed, so clients that gave up and retried do not pile up as defunct members.
NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000
FIRST_MEMBER_ID_REQUIRED_VERSION = 4  # KIP-394
FIRST_SKIP_ASSIGNMENT_VERSION = 9  # KIP-814

JoinRespond = Callable[[JoinGroupResponse], None]
SyncRespond = Callable[[SyncGroupResponse], None]


def join_error(code: int, member_id: str = UNKNOWN_MEMBER_ID) -> JoinGroupResponse:
    return JoinGroupResponse(error_code=code, generation_id=-1, member_id=member_id, leader="", members=[])


def sync_error(code: int) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=code, assignment=b"")


def validate_join(request: JoinGroupRequest, config: GroupConfig) -> None:
    """What every JoinGroup must pass first, whichever kind of group it joins."""
    if not request.group_id:
        raise InvalidGroupIdError("the group id is empty")
    if not config.min_session_timeout_ms <= request.session_timeout_ms <= config.max_session_timeout_ms:
        raise InvalidSessionTimeoutError(
            f"session timeout {request.session_timeout_ms} ms is outside [group.min.session.timeout.ms "
            f"{config.min_session_timeout_ms}, group.max.session.timeout.ms {config.max_session_timeout_ms}]")


class ClassicGroupManager:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.runtime = runtime

    # ---- timers --------------------------------------------------------------------------------------------------

    def _schedule_heartbeat(self, group: ClassicGroup, member: ClassicMember, timeout_ms: int | None = None) -> None:
        member_id = member.member_id
        self.runtime.schedule(("heartbeat", group.group_id, member_id),
                              member.session_timeout_ms if timeout_ms is None else timeout_ms,
                        lambda: self._expire_heartbeat(group, member_id))

    def _cancel_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        self.runtime.cancel(("heartbeat", group.group_id, member_id))

    def schedule_heartbeats_after_load(self, group: ClassicGroup) -> None:
        for member in group.members.values():
            self._schedule_heartbeat(group, member)

    def unload(self, group: ClassicGroup) -> None:
        """The group's partition is no longer led here (Kafka's onGroupUnloaded): parked JoinGroup and SyncGroup
        requests learn NOT_COORDINATOR, and their clients find the new coordinator."""
        for member in group.members.values():
            self._fail_waiting_join(member, ErrorCode.NOT_COORDINATOR)
        self._fail_waiting_syncs(group, ErrorCode.NOT_COORDINATOR)

    # ---- JoinGroup -----------------------------------------------------------------------------------------------

    def join(self, request: JoinGroupRequest, version: int, client_id: str, client_host: str,
             respond: JoinRespond) -> None:
        config = self.runtime.config
        validate_join(request, config)
        unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self._group_for_join(request.group_id, create=unknown)
        if group.is_in(S.DEAD):
            raise CoordinatorNotAvailableError(f"group {group.group_id} is being deleted")
        if self._is_full(group, request.member_id):
            raise GroupMaxSizeReachedError(f"group {group.group_id} has reached group.max.size "
                                           f"{config.max_size}")
        protocols = [(p.name, bytes(p.metadata)) for p in request.protocols]
        if not group.supports_protocols(request.protocol_type, protocols):
            raise InconsistentGroupProtocolError(
                f"protocol type {request.protocol_type!r} with protocols {[n for n, _ in protocols]} does not match "
                f"group {group.group_id}")
        if unknown:
            self._join_new_member(group, request, version, client_id, client_host, protocols, respond)
        else:
            self._join_existing_member(group, request, client_id, client_host, protocols, respond)

    def _group_for_join(self, group_id: str, create: bool) -> ClassicGroup:
        group = self.runtime.groups.get(group_id)
        if group is not None and group.type is GroupType.SHARE:
            raise GroupIdNotFoundError(f"Group {group_id} is not a classic group.")
        if isinstance(group, ConsumerGroup):  # an empty one (a JoinGroup to a live one is served by it)
            self.runtime.write_consumer_group(group, group.group_tombstones())
            group = None
        if group is None:
            if not create:
                raise UnknownMemberIdError(f"group {group_id} does not exist")
            group = ClassicGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
            self.runtime.groups[group_id] = group
        return group

    def _group(self, group_id: str) -> ClassicGroup:
        """The classic group a SyncGroup/Heartbeat/LeaveGroup names: UNKNOWN_MEMBER_ID if there is none."""
        group = self.runtime.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            raise UnknownMemberIdError(f"group {group_id} is not a classic group this coordinator knows")
        return group

    def _is_full(self, group: ClassicGroup, member_id: str) -> bool:
        if group.has_member(member_id) or member_id in group.pending_members:
            return False
        return len(group.members) + len(group.pending_members) >= self.runtime.config.max_size

    def _join_new_member(self, group: ClassicGroup, request: JoinGroupRequest, version: int, client_id: str,
                         client_host: str, protocols: list[tuple[str, bytes]], respond: JoinRespond) -> None:
        member_id = f"{client_id}-{uuid.uuid4()}"
        instance_id = request.group_instance_id
        if instance_id is not None:
            existing = group.static_member_id(instance_id)
            if existing is not None:
                self._rejoin_static_member(group, existing, member_id, request, version, protocols, respond)
                return
        elif version >= FIRST_MEMBER_ID_REQUIRED_VERSION:
            group.pending_members.add(member_id)
            self.runtime.schedule(("heartbeat", group.group_id, member_id), request.session_timeout_ms,
                                  lambda: self._expire_heartbeat(group, member_id))
            respond(join_error(ErrorCode.MEMBER_ID_REQUIRED, member_id))
            return
        member = ClassicMember(member_id, instance_id, client_id, client_host, request.rebalance_timeout_ms,
                               request.session_timeout_ms, request.protocol_type, protocols)
        self._add_member_and_rebalance(group, member, respond)

    def _add_member_and_rebalance(self, group: ClassicGroup, member: ClassicMember, respond: JoinRespond) -> None:
        member.is_new = True
        member.awaiting_join = respond
        if group.is_in(S.PREPARING_REBALANCE) and group.previous_state is S.EMPTY:
            group.new_member_added = True
        group.add(member)
        self._schedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._rebalance_or_complete_join(group, f"adding new member {member.member_id}")

    def _join_existing_member(self, group: ClassicGroup, request: JoinGroupRequest, client_id: str,
                              client_host: str, protocols: list[tuple[str, bytes]], respond: JoinRespond) -> None:
        member_id = request.member_id
        if member_id in group.pending_members:
            member = ClassicMember(member_id, request.group_instance_id, client_id, client_host,
                                   request.rebalance_timeout_ms, request.session_timeout_ms, request.protocol_type,
                                   protocols)
            self._add_member_and_rebalance(group, member, respond)
            return
        member = group.validate_member(member_id, request.group_instance_id)
        if group.is_in(S.PREPARING_REBALANCE):
            self._update_member_and_rebalance(group, member, request, protocols, respond,
                                              f"member {member_id} joining during the rebalance")
        elif group.is_in(S.COMPLETING_REBALANCE):
            if member.matches(protocols):
                # The member lost our JoinGroup answer: give it the current generation again.
                respond(self._join_response(group, member_id))
            else:
                self._update_member_and_rebalance(group, member, request, protocols, respond,
                                                  f"member {member_id} changed its metadata while completing")
        elif group.is_in(S.STABLE):
            if group.is_leader(member_id) or not member.matches(protocols):
                # A leader's JoinGroup forces a rebalance: it has seen a change (topic metadata) that the
                # members' subscriptions do not show.
                self._update_member_and_rebalance(group, member, request, protocols, respond,
                                                  f"leader or changed member {member_id} rejoined")
            else:
                respond(self._join_response(group, member_id))
        else:
            raise UnknownMemberIdError(f"member {member_id} is not in group {group.group_id}")

    def _update_member_and_rebalance(self, group: ClassicGroup, member: ClassicMember, request: JoinGroupRequest,
                                     protocols: list[tuple[str, bytes]], respond: JoinRespond, reason: str) -> None:
        member.protocols = protocols
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        self._fail_waiting_join(member, ErrorCode.UNKNOWN_MEMBER_ID)
        member.awaiting_join = respond
        self._rebalance_or_complete_join(group, reason)

    def _rejoin_static_member(self, group: ClassicGroup, old_member_id: str, new_member_id: str,
                              request: JoinGroupRequest, version: int, protocols: list[tuple[str, bytes]],
                              respond: JoinRespond) -> None:
        old = group.members[old_member_id]
        # The previous incarnation is fenced: its parked requests learn so now.
        self._fail_waiting_join(old, ErrorCode.FENCED_INSTANCE_ID)
        if old.awaiting_sync is not None:
            old.awaiting_sync(sync_error(ErrorCode.FENCED_INSTANCE_ID))
            old.awaiting_sync = None
        self._cancel_heartbeat(group, old_member_id)
        old_protocols = old.protocols
        member = group.replace_static_member(request.group_instance_id, old_member_id, new_member_id)
        member.protocols = protocols
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        self._schedule_heartbeat(group, member)
        log.info("static member %s of group %s rejoined as %s (was %s)", request.group_instance_id,
                 group.group_id, new_member_id, old_member_id)
        if group.is_in(S.STABLE):
            if group.protocol_name == group.select_protocol():
                self.runtime.write(group.group_id, [records.group_metadata(group.group_id, group.to_record_value())])
                response = self._join_response(group, new_member_id)
                if group.is_leader(new_member_id):
                    # KIP-814: from v9 the leader gets the members but must not assign again; before, it is
                    # answered as a follower, so it keeps the assignment it has.
                    if version >= FIRST_SKIP_ASSIGNMENT_VERSION:
                        response.skip_assignment = True
                    else:
                        response.members = []
                respond(response)
                return
            member.awaiting_join = respond
            self.prepare_rebalance(group, f"static member {request.group_instance_id} changed protocols "
                                           f"from {[n for n, _ in old_protocols]}")
        elif group.is_in(S.COMPLETING_REBALANCE):
            member.awaiting_join = respond
            self.prepare_rebalance(group, f"static member {request.group_instance_id} rejoined while completing")
        elif group.is_in(S.PREPARING_REBALANCE):
            member.awaiting_join = respond
            self._maybe_complete_join(group)
        else:
            raise UnknownMemberIdError(f"static member {request.group_instance_id} is not in group {group.group_id}")

    def _join_response(self, group: ClassicGroup, member_id: str) -> JoinGroupResponse:
        leader = group.is_leader(member_id)
        return JoinGroupResponse(
            error_code=ErrorCode.NONE,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id,
            member_id=member_id,
            members=[
                JoinGroupResponse.JoinGroupResponseMember(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                                          metadata=m.metadata(group.protocol_name))
                for m in group.members.values()
            ] if leader else [],
        )

    @staticmethod
    def _fail_waiting_join(member: ClassicMember, code: int) -> None:
        if member.awaiting_join is not None:
            member.awaiting_join(join_error(code, member.member_id))
            member.awaiting_join = None

    # ---- rebalancing ---------------------------------------------------------------------------------------------

    def _rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE, S.EMPTY):
            self.prepare_rebalance(group, reason)
        elif group.is_in(S.PREPARING_REBALANCE):
            self._maybe_complete_join(group)

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in(S.COMPLETING_REBALANCE):
            self._fail_waiting_syncs(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self.runtime.cancel(("sync", group.group_id))
        initial = group.is_in(S.EMPTY)
        group.transition_to(S.PREPARING_REBALANCE, self.runtime.now_ms())
        log.info("preparing to rebalance group %s in state PreparingRebalance with old generation %d "
                 "(reason: %s)", group.group_id, group.generation_id, reason)
        if initial:
            delay = self.runtime.config.initial_rebalance_delay_ms
            remaining = max(group.max_rebalance_timeout_ms() - delay, 0)
            group.new_member_added = False
            self.runtime.schedule(("join", group.group_id), delay,
                                  lambda: self._initial_join_due(group, delay, remaining))
        else:
            self.runtime.schedule(("join", group.group_id), group.max_rebalance_timeout_ms(),
                                  lambda: self._complete_join(group))
            self._maybe_complete_join(group)

    def _initial_join_due(self, group: ClassicGroup, delay: int, remaining: int) -> None:
        """Kafka's InitialDelayedJoin: while members keep arriving, wait another delay, up to the rebalance
        timeout, so a group of consumers starting together gets one rebalance rather than one each."""
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            next_delay = min(delay, remaining)
            self.runtime.schedule(("join", group.group_id), next_delay,
                                  lambda: self._initial_join_due(group, delay, max(remaining - delay, 0)))
        else:
            self._complete_join(group)

    def _maybe_complete_join(self, group: ClassicGroup) -> None:
        if (group.is_in(S.PREPARING_REBALANCE) and group.has_all_members_joined()
                and group.previous_state is not S.EMPTY):
            self._complete_join(group)

    def _complete_join(self, group: ClassicGroup) -> None:
        self.runtime.cancel(("join", group.group_id))
        if not group.is_in(S.PREPARING_REBALANCE):
            return
        for member in [m for m in group.members.values() if m.awaiting_join is None]:
            log.info("group %s: member %s did not rejoin in time and is removed", group.group_id, member.member_id)
            self._cancel_heartbeat(group, member.member_id)
            group.remove(member.member_id)
        group.generation_id += 1
        group.pending_sync.clear()
        if not group.members:
            group.protocol_name = None
            group.transition_to(S.EMPTY, self.runtime.now_ms())
            self.runtime.write(group.group_id, [records.group_metadata(group.group_id, group.to_record_value())])
            log.info("group %s with generation %d is now empty", group.group_id, group.generation_id)
            return
        group.protocol_name = group.select_protocol()
        group.transition_to(S.COMPLETING_REBALANCE, self.runtime.now_ms())
        log.info("stabilized group %s generation %d with %d members (protocol %s)", group.group_id,
                 group.generation_id, len(group.members), group.protocol_name)
        for member in group.members.values():
            respond, member.awaiting_join = member.awaiting_join, None
            member.is_new = False
            group.pending_sync.add(member.member_id)
            self._schedule_heartbeat(group, member)
            respond(self._join_response(group, member.member_id))
        self.runtime.schedule(("sync", group.group_id), group.max_rebalance_timeout_ms(),
                              lambda: self._expire_pending_sync(group, group.generation_id))

    def _expire_pending_sync(self, group: ClassicGroup, generation_id: int) -> None:
        if generation_id != group.generation_id or not group.is_in(S.COMPLETING_REBALANCE, S.STABLE):
            return
        if not group.pending_sync:
            return
        missing = sorted(group.pending_sync)
        for member_id in missing:
            self._cancel_heartbeat(group, member_id)
            group.remove(member_id)
        self.prepare_rebalance(group, f"members {missing} did not send SyncGroup in time")

    def _fail_waiting_syncs(self, group: ClassicGroup, code: int) -> None:
        for member in group.members.values():
            member.assignment = b""
            if member.awaiting_sync is not None:
                member.awaiting_sync(sync_error(code))
                member.awaiting_sync = None

    def remove_member(self, group: ClassicGroup, member: ClassicMember, reason: str) -> None:
        """Kafka's removeMemberAndUpdateClassicGroup: a parked JoinGroup learns UNKNOWN_MEMBER_ID (a live client
        just rejoins), then the group rebalances without the member."""
        log.info("removing member %s from group %s: %s", member.member_id, group.group_id, reason)
        self._fail_waiting_join(member, ErrorCode.UNKNOWN_MEMBER_ID)
        self._cancel_heartbeat(group, member.member_id)
        group.remove(member.member_id)
        if group.is_in(S.STABLE, S.COMPLETING_REBALANCE):
            self.prepare_rebalance(group, reason)
        elif group.is_in(S.PREPARING_REBALANCE):
            self._maybe_complete_join(group)

    def _expire_heartbeat(self, group: ClassicGroup, member_id: str) -> None:
        if group.is_in(S.DEAD) or self.runtime.groups.get(group.group_id) is not group:
            return
        if member_id in group.pending_members:
            log.info("pending member %s of group %s did not rejoin in time", member_id, group.group_id)
            group.pending_members.discard(member_id)
            self._maybe_complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None:
            return
        if not member.is_new and (member.awaiting_join is not None or member.awaiting_sync is not None):
            return  # a member waiting for the rebalance needs no heartbeat
        self.remove_member(group, member, f"session of member {member_id} expired")

    # ---- SyncGroup -----------------------------------------------------------------------------------------------

    def sync(self, request: SyncGroupRequest, respond: SyncRespond) -> None:
        group = self._group(request.group_id)
        if group.is_in(S.DEAD):
            raise CoordinatorNotAvailableError(f"group {group.group_id} is being deleted")
        member = group.validate_member(request.member_id, request.group_instance_id)
        if request.generation_id != group.generation_id:
            raise IllegalGenerationError(f"generation {request.generation_id} is not group {group.group_id}'s "
                                         f"generation {group.generation_id}")
        if (request.protocol_type is not None and request.protocol_type != group.protocol_type
                or request.protocol_name is not None and request.protocol_name != group.protocol_name):
            raise InconsistentGroupProtocolError(f"protocol {request.protocol_type}/{request.protocol_name} is not "
                                                 f"group {group.group_id}'s")
        if group.is_in(S.EMPTY):
            raise UnknownMemberIdError(f"group {group.group_id} is empty")
        if group.is_in(S.PREPARING_REBALANCE):
            raise RebalanceInProgressError(f"group {group.group_id} is rebalancing")
        group.pending_sync.discard(member.member_id)
        if not group.pending_sync:
            self.runtime.cancel(("sync", group.group_id))
        if group.is_in(S.STABLE):
            self._schedule_heartbeat(group, member)
            respond(self._sync_response(group, member))
            return
        member.awaiting_sync = respond
        if group.is_leader(member.member_id):
            self._apply_leader_assignment(group, {a.member_id: bytes(a.assignment) for a in request.assignments})

    def _apply_leader_assignment(self, group: ClassicGroup, assignment: dict[str, bytes]) -> None:
        for member in group.members.values():
            member.assignment = assignment.get(member.member_id, b"")
        try:
            self.runtime.write(group.group_id, [records.group_metadata(group.group_id, group.to_record_value())])
        except KafkaError as exc:
            log.warning("could not store the assignment of group %s generation %d: %s", group.group_id,
                        group.generation_id, exc)
            self._fail_waiting_syncs(group, exc.code)
            self.prepare_rebalance(group, "storing the assignment failed")
            return
        group.transition_to(S.STABLE, self.runtime.now_ms())
        for member in group.members.values():
            if member.awaiting_sync is not None:
                member.awaiting_sync(self._sync_response(group, member))
                member.awaiting_sync = None

    @staticmethod
    def _sync_response(group: ClassicGroup, member: ClassicMember) -> SyncGroupResponse:
        return SyncGroupResponse(error_code=ErrorCode.NONE, protocol_type=group.protocol_type,
                                 protocol_name=group.protocol_name, assignment=member.assignment)

    # ---- Heartbeat -----------------------------------------------------------------------------------------------

    def heartbeat(self, request: HeartbeatRequest) -> None:
        """Keeps the member's session alive; REBALANCE_IN_PROGRESS (raised) tells it to rejoin."""
        group = self._group(request.group_id)
        if group.is_in(S.DEAD):
            raise CoordinatorNotAvailableError(f"group {group.group_id} is being deleted")
        if group.is_in(S.EMPTY):
            raise UnknownMemberIdError(f"group {group.group_id} is empty")
        member = group.validate_member(request.member_id, request.group_instance_id)
        if request.generation_id != group.generation_id:
            raise IllegalGenerationError(f"generation {request.generation_id} is not group "
                                         f"{group.group_id}'s generation {group.generation_id}")
        self._schedule_heartbeat(group, member)
        if group.is_in(S.PREPARING_REBALANCE):
            raise RebalanceInProgressError(f"group {group.group_id} is rebalancing")

    # ---- LeaveGroup ----------------------------------------------------------------------------------------------

    def leave(self, group_id: str, leaving: list[tuple[str, str | None, str | None]]
              ) -> tuple[int, list[LeaveGroupResponse.MemberResponse]]:
        """(top-level error, one response per (member id, group instance id, reason))."""
        group = self._group(group_id)
        if group.is_in(S.DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, []
        responses = []
        for member_id, instance_id, reason in leaving:
            code = self._leave_one(group, member_id, instance_id, reason)
            responses.append(LeaveGroupResponse.MemberResponse(member_id=member_id, group_instance_id=instance_id,
                                                               error_code=code))
        return ErrorCode.NONE, responses

    def _leave_one(self, group: ClassicGroup, member_id: str, instance_id: str | None, reason: str | None) -> int:
        if instance_id is None and member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._cancel_heartbeat(group, member_id)
            self._maybe_complete_join(group)
            return ErrorCode.NONE
        try:
            if instance_id is not None:
                current = group.static_member_id(instance_id)
                if current is None:
                    raise UnknownMemberIdError(f"static member {instance_id} is not in group {group.group_id}")
                if member_id != UNKNOWN_MEMBER_ID and member_id != current:
                    raise FencedInstanceIdError(f"static member {instance_id} now has member id {current}")
                member_id = current
            member = group.member(member_id)
        except KafkaError as exc:
            return exc.code
        self.remove_member(group, member, f"member {member_id} left the group: {reason or 'no reason given'}")
        return ErrorCode.NONE
