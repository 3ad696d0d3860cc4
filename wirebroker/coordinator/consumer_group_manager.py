"""The KIP-848 consumer group protocol's request flow (the consumer half of Kafka's GroupMetadataManager).

ConsumerGroupHeartbeat, member epoch:
- 0: join (or rejoin): subscription, rebalance timeout and an empty owned list are required; a new member gets a
  member id (v0: generated here) and the group epoch is bumped;
- -1: leave; -2: a static member leaves for now, keeping its place (and partitions) for its session timeout;
- otherwise: a heartbeat at the member's epoch (or its previous one, if it owns no partition it should not).
Each heartbeat: update the member's subscription (a change bumps the group epoch); if the group epoch is ahead of
the target assignment, run the server-side assignor; move the member towards its target (current_assignment.py);
push its session expiry out; answer with its epoch, the heartbeat interval, and its assignment when it changed or
the request was a full one. Every change is a record (consumer_group.py) written before it is applied.
A subscription may be a regular expression (KIP-848), resolved against the topics that exist at each heartbeat
(subscribed_topics.py), so a new matching topic moves the group epoch.
A member that stops heartbeating for `group.consumer.session.timeout.ms`, or does not revoke partitions within
its rebalance timeout, is fenced: removed, and the group epoch bumped so the others share its partitions.

Classic and consumer members meeting (Kafka's migration policy `bidirectional`, group_conversion.py): a
consumer-protocol member joining a classic group converts it (an empty one is simply replaced, its offsets kept; a
non-empty one is upgraded if it speaks the consumer protocol, else GROUP_ID_NOT_FOUND); classic members of a
consumer group are served by classic_in_consumer_group.py; when the last consumer-protocol member leaves a group
of classic members, it goes back to being a classic group, which the classic manager then rebalances.
"""

from __future__ import annotations

import logging
import re
import uuid
from dataclasses import replace

from wirebroker.coordinator import assignors, group_conversion
from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup, ClassicGroupState
from wirebroker.coordinator.classic_group_manager import ClassicGroupManager
from wirebroker.coordinator.consumer_group import (
    Assignment,
    ConsumerGroup,
    ConsumerMember,
    MemberState,
)
from wirebroker.coordinator.current_assignment import next_member_state
from wirebroker.coordinator.group import GroupType
from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.coordinator.internal_records import CoordinatorRecord
from wirebroker.coordinator.subscribed_topics import member_topics, subscription_metadata
from wirebroker.protocol.errors import (
    ErrorCode,
    FencedMemberEpochError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    InvalidRegularExpressionError,
    InvalidRequestError,
    KafkaError,
    UnknownMemberIdError,
    UnreleasedInstanceIdError,
)
from wirebroker.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

log = logging.getLogger(__name__)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2

_Response = ConsumerGroupHeartbeatResponse


class ConsumerGroupManager:
    def __init__(self, runtime: GroupRuntime, classic: ClassicGroupManager) -> None:
        self.runtime = runtime
        self._classic = classic  # a group that goes back to the classic protocol rebalances there

    def heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str) -> _Response:
        try:
            self._validate(request)
            if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                return self._leave(request)
            return self._heartbeat(request, client_id, client_host)
        except KafkaError as exc:
            return _Response(error_code=exc.code, error_message=str(exc), member_id=request.member_id or None,
                             member_epoch=-1 if request.member_epoch >= 0 else request.member_epoch)

    def _validate(self, request: ConsumerGroupHeartbeatRequest) -> None:
        if not request.group_id:
            raise InvalidRequestError("GroupId can't be empty.")
        if request.instance_id is not None and not request.instance_id:
            raise InvalidRequestError("InstanceId can't be empty.")
        if request.member_epoch == JOIN_EPOCH:
            if request.rebalance_timeout_ms == -1:
                raise InvalidRequestError("RebalanceTimeoutMs must be provided in first request.")
            if request.topic_partitions is None or request.topic_partitions:
                raise InvalidRequestError("TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise InvalidRequestError("SubscribedTopicNames or SubscribedTopicRegex must be set in first "
                                          "request.")
        elif request.member_epoch < STATIC_LEAVE_EPOCH:
            raise InvalidRequestError(f"MemberEpoch is invalid: {request.member_epoch}")
        elif not request.member_id:
            raise InvalidRequestError("MemberId can't be empty.")
        if request.server_assignor is not None:
            assignors.assignor(request.server_assignor, self.runtime.config.consumer_assignors)
        if request.subscribed_topic_regex is not None:
            try:
                re.compile(request.subscribed_topic_regex)
            except re.error as exc:
                raise InvalidRegularExpressionError(f"SubscribedTopicRegex {request.subscribed_topic_regex!r} is "
                                                    f"not a valid regular expression: {exc}") from None

    # ---- join / heartbeat ----------------------------------------------------------------------------------------

    def _heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str, client_host: str) -> _Response:
        joining = request.member_epoch == JOIN_EPOCH
        group = self._group(request.group_id, create=joining)
        member_id = request.member_id or str(uuid.uuid4())
        if joining and member_id not in group.members and len(group.members) >= self.runtime.config.max_size:
            raise GroupMaxSizeReachedError(f"group {group.group_id} has reached its maximum size")
        out: list[CoordinatorRecord] = []
        member = self._member(group, member_id, request, out)
        owned = _owned(request.topic_partitions)
        if not joining:
            _check_epoch(member, request.member_epoch, owned)
        updated = replace(
            member,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            client_id=client_id, client_host=client_host,
            rebalance_timeout_ms=(request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            subscribed_topic_names=(tuple(sorted(request.subscribed_topic_names))
                                    if request.subscribed_topic_names is not None
                                    else member.subscribed_topic_names),
            subscribed_topic_regex=(request.subscribed_topic_regex if request.subscribed_topic_regex is not None
                                    else member.subscribed_topic_regex),
            server_assignor=request.server_assignor if request.server_assignor is not None
            else member.server_assignor,
        )
        reconciled = self.update_member(group, member, updated, owned, out)
        self.schedule_session_timeout(group, member_id, self.runtime.config.consumer_session_timeout_ms)
        self._schedule_revocation_timeout(group, reconciled)
        response = _Response(error_code=ErrorCode.NONE, member_id=member_id, member_epoch=reconciled.member_epoch,
                             heartbeat_interval_ms=self.runtime.config.consumer_heartbeat_interval_ms)
        full = (request.rebalance_timeout_ms != -1 and request.topic_partitions is not None
                and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None))
        if joining or full or reconciled.assigned != member.assigned:
            response.assignment = _Response.Assignment(topic_partitions=[
                _Response.TopicPartitions(topic_id=topic_id, partitions=sorted(ps))
                for topic_id, ps in sorted(reconciled.assigned.items()) if ps])
        return response

    def update_member(self, group: ConsumerGroup, member: ConsumerMember, updated: ConsumerMember,
                      owned: Assignment | None, out: list[CoordinatorRecord]) -> ConsumerMember:
        """Write the member's new subscription (a new member or a changed subscription bumps the group epoch),
        recompute the target assignment if the epoch moved, and reconcile the member; returns it as it now is.
        `out` holds records to write first (a static member's takeover)."""
        member_id = updated.member_id
        bump = member_id not in group.members
        if updated != member or bump:
            out.append(updated.subscription_record(group.group_id))
            bump = bump or (updated.subscribed_topic_names, updated.subscribed_topic_regex,
                            updated.server_assignor) != (member.subscribed_topic_names, member.subscribed_topic_regex,
                                                         member.server_assignor)
        self.runtime.write_consumer_group(group, out)
        out = []
        metadata = subscription_metadata(group, self.runtime.topics)
        if metadata != group.subscription_metadata:
            out.append(group.subscription_metadata_record(metadata))
            bump = True
        if bump:
            out.append(group.epoch_record(group.group_epoch + 1))
        self.runtime.write_consumer_group(group, out)
        if group.group_epoch > group.assignment_epoch:
            self.update_target_assignment(group, updated.server_assignor)
        member = group.members[member_id]
        reconciled = next_member_state(member, group.assignment_epoch, group.target_assignment.get(member_id, {}),
                                       owned, _others(group.partition_owners(), member_id))
        if reconciled != member:
            self.runtime.write_consumer_group(group, [reconciled.assignment_record(group.group_id)])
        return group.members[member_id]

    def _member(self, group: ConsumerGroup, member_id: str, request: ConsumerGroupHeartbeatRequest,
                out: list[CoordinatorRecord]) -> ConsumerMember:
        """The member the request is from; a new one on join. A static member rejoining after a temporary leave
        (epoch -2) takes over its predecessor's place and partitions under the new member id (KIP-345)."""
        existing = group.members.get(member_id)
        if existing is not None:
            return existing
        if request.member_epoch != JOIN_EPOCH:
            raise UnknownMemberIdError(f"member {member_id} is not a member of group {group.group_id}")
        if request.instance_id is None:
            return ConsumerMember(member_id)
        previous = group.static_member(request.instance_id)
        if previous is None:
            return ConsumerMember(member_id, instance_id=request.instance_id)
        if previous.member_epoch != STATIC_LEAVE_EPOCH:
            raise UnreleasedInstanceIdError(f"static member {request.instance_id} of group {group.group_id} is "
                                            f"still in use by member {previous.member_id}")
        self.runtime.cancel(("consumer-session", group.group_id, previous.member_id))
        target = group.target_assignment.get(previous.member_id, {})
        out.extend(group.member_tombstones(previous.member_id))
        successor = replace(previous, member_id=member_id, member_epoch=previous.previous_member_epoch)
        out.append(successor.subscription_record(group.group_id))
        out.append(group.target_member_record(member_id, target))
        out.append(successor.assignment_record(group.group_id))
        return successor

    def _group(self, group_id: str, create: bool) -> ConsumerGroup:
        """The consumer group a heartbeat names; joining one makes it, converting a classic group of that id."""
        group = self.runtime.groups.get(group_id)
        if group is not None and group.type is GroupType.SHARE:
            raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
        if isinstance(group, ClassicGroup):
            if create and not group.is_empty() and group_conversion.can_upgrade(self.runtime.config, group):
                upgraded = group_conversion.upgrade(self.runtime, group)
                for member in upgraded.members.values():
                    self.schedule_session_timeout(upgraded, member.member_id, member.classic_session_timeout_ms)
                return upgraded
            if not (create and group.is_empty() and group.is_in(ClassicGroupState.EMPTY)):
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
            log.info("empty classic group %s becomes a consumer group (its offsets stay)", group_id)
            self.runtime.write(group_id, [records.group_metadata_tombstone(group_id)])
            group = None
        if group is None:
            if not create:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            group = ConsumerGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
            self.runtime.groups[group_id] = group
        return group

    def update_target_assignment(self, group: ConsumerGroup, preferred_assignor: str | None) -> None:
        name = preferred_assignor or next(
            (m.server_assignor for m in group.members.values() if m.server_assignor), None
        ) or self.runtime.config.consumer_assignors[0]
        assign = assignors.assignor(name, self.runtime.config.consumer_assignors)
        names = {name: topic_id for name, (topic_id, _) in group.subscription_metadata.items()}
        subscriptions = {
            m.member_id: frozenset(names[t] for t in member_topics(m, self.runtime.topics) if t in names)
            for m in group.members.values()
        }
        counts = {topic_id: n for topic_id, n in group.subscription_metadata.values()}
        target = assign(subscriptions, counts, group.target_assignment)
        out = [group.target_member_record(member_id, assignment) for member_id, assignment in sorted(target.items())
               if group.target_assignment.get(member_id) != assignment]
        out.append(group.target_epoch_record(group.group_epoch))
        self.runtime.write_consumer_group(group, out)
        log.info("group %s: target assignment for epoch %d computed by the %s assignor for %d members",
                 group.group_id, group.group_epoch, name, len(group.members))

    # ---- leaving and fencing -------------------------------------------------------------------------------------

    def _leave(self, request: ConsumerGroupHeartbeatRequest) -> _Response:
        group = self._group(request.group_id, create=False)
        member = group.member(request.member_id)
        if request.member_epoch == STATIC_LEAVE_EPOCH and member.instance_id is not None:
            left = replace(member, member_epoch=STATIC_LEAVE_EPOCH, previous_member_epoch=member.member_epoch)
            self.runtime.write_consumer_group(group, [left.assignment_record(group.group_id)])
            self.schedule_session_timeout(group, member.member_id, self.runtime.config.consumer_session_timeout_ms)
            log.info("static member %s (%s) of group %s left for now", member.instance_id, member.member_id,
                     group.group_id)
        else:
            self.fence(group, member.member_id, "left the group")
        return _Response(error_code=ErrorCode.NONE, member_id=request.member_id, member_epoch=request.member_epoch,
                         heartbeat_interval_ms=0)

    def fence(self, group: ConsumerGroup, member_id: str, reason: str) -> None:
        if member_id not in group.members:
            return
        log.info("member %s of group %s is removed: %s", member_id, group.group_id, reason)
        if group_conversion.should_downgrade(self.runtime.config, group, member_id):
            classic = group_conversion.downgrade(self.runtime, group, member_id)
            self._classic.schedule_heartbeats_after_load(classic)
            self._classic.prepare_rebalance(classic, f"downgraded from a consumer group when {member_id} left")
            return
        for key in ("consumer-session", "consumer-revocation", "consumer-sync", "consumer-join"):
            self.runtime.cancel((key, group.group_id, member_id))
        out = group.member_tombstones(member_id)
        self.runtime.write_consumer_group(group, out)
        metadata = subscription_metadata(group, self.runtime.topics)
        out = [group.subscription_metadata_record(metadata)] if metadata != group.subscription_metadata else []
        out.append(group.epoch_record(group.group_epoch + 1))
        self.runtime.write_consumer_group(group, out)
        if group.members:
            self.update_target_assignment(group, None)

    def schedule_session_timeout(self, group: ConsumerGroup, member_id: str, timeout_ms: int) -> None:
        self.runtime.schedule(("consumer-session", group.group_id, member_id), timeout_ms,
                              lambda: self._session_expired(group, member_id))

    def schedule_sessions_after_load(self, group: ConsumerGroup) -> None:
        for member in group.members.values():
            self.schedule_session_timeout(group, member.member_id, member.classic_session_timeout_ms
                                          or self.runtime.config.consumer_session_timeout_ms)

    def _session_expired(self, group: ConsumerGroup, member_id: str) -> None:
        if self.runtime.groups.get(group.group_id) is group:
            self.fence(group, member_id, "its session timed out")

    def _schedule_revocation_timeout(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        key = ("consumer-revocation", group.group_id, member.member_id)
        if member.state is not MemberState.UNREVOKED_PARTITIONS:
            self.runtime.cancel(key)
            return
        if self.runtime.is_scheduled(key):
            return
        epoch = member.member_epoch

        def expired() -> None:
            current = group.members.get(member.member_id)
            if (self.runtime.groups.get(group.group_id) is group and current is not None
                    and current.state is MemberState.UNREVOKED_PARTITIONS and current.member_epoch == epoch):
                self.fence(group, member.member_id, "it did not revoke its partitions within its rebalance timeout")

        self.runtime.schedule(key, max(member.rebalance_timeout_ms, 0), expired)


def _owned(topic_partitions: list | None) -> Assignment | None:
    if topic_partitions is None:
        return None
    return {tp.topic_id: frozenset(tp.partitions) for tp in topic_partitions if tp.partitions}


def _others(owners: dict[tuple[bytes, int], str], member_id: str) -> dict[tuple[bytes, int], str]:
    return {tp: owner for tp, owner in owners.items() if owner != member_id}


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return True
    return all(ps <= assigned.get(topic_id, frozenset()) for topic_id, ps in owned.items())


def _check_epoch(member: ConsumerMember, received: int, owned: Assignment | None) -> None:
    """Kafka's throwIfMemberEpochIsInvalid: ahead is fenced; behind is accepted only at the previous epoch with
    nothing owned beyond the current assignment (the answer that bumped the epoch may have been lost)."""
    if received > member.member_epoch:
        raise FencedMemberEpochError(f"member epoch {received} is ahead of {member.member_epoch}; the member must "
                                     "abandon all its partitions and rejoin")
    if received < member.member_epoch and (received != member.previous_member_epoch
                                           or not _is_subset(owned, member.assigned)):
        raise FencedMemberEpochError(f"member epoch {received} is behind {member.member_epoch}; the member must "
                                     "abandon all its partitions and rejoin")
