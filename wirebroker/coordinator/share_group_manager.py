"""The share group protocol's request flow (the share half of Kafka's GroupMetadataManager: shareGroupHeartbeat).

ShareGroupHeartbeat, member epoch:
- 0: join (or rejoin) with the member id the client made (v1, KIP-1082) and its subscribed topic names; a new
  member bumps the group epoch (GROUP_MAX_SIZE_REACHED past `group.share.max.size`);
- -1: leave: the member goes and the group epoch is bumped, so the others take its partitions;
- otherwise a heartbeat at the member's epoch (FENCED_MEMBER_EPOCH for another; UNKNOWN_MEMBER_ID for a stranger).
Each heartbeat updates the member's subscription; when the group epoch moved, or the partitions of the subscribed
topics changed, the target assignment is computed again (share_group.simple_assignment) over the partitions the
group has initialised (share_state_initialization.py: the heartbeat starts the initialisation of the others, and
their first heartbeat after it assigns them); the member then takes its
target at once (share groups revoke nothing: a partition may be shared) and is answered with its epoch, the
heartbeat interval (`group.share.heartbeat.interval.ms`) and its assignment when it changed or on a full request.
A member silent for `share.session.timeout.ms` (the group's config, else `group.share.session.timeout.ms`) is removed
as if it had left. An id naming a group of another
kind is GROUP_ID_NOT_FOUND. Every change is a record written before it is applied (share_group.py); the timers
and writes are the group coordinator's (group_runtime.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.coordinator.internal_records import CoordinatorRecord
from wirebroker.coordinator.share_group import (
    Assignment,
    ShareGroup,
    ShareMember,
    simple_assignment,
)
from wirebroker.coordinator.share_state_initialization import (
    InitializeShareState,
    TopicPartition,
    contains,
    to_initialize,
    with_partitions,
    without_partitions,
    without_topics,
)
from wirebroker.protocol.errors import (
    ErrorCode,
    FencedMemberEpochError,
    GroupIdNotFoundError,
    GroupMaxSizeReachedError,
    InvalidRequestError,
    KafkaError,
    UnknownMemberIdError,
)
from wirebroker.protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

log = logging.getLogger(__name__)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1

_Response = ShareGroupHeartbeatResponse


class ShareGroupManager:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.runtime = runtime
        # (group id, key) -> the group's config (share.session.timeout.ms, share.heartbeat.interval.ms), if set
        self.group_config: Callable[[str, str], str | None] = lambda group_id, key: None
        # group id -> the (topic id, partition) list its target assignment was computed from (not persisted: a
        # loaded group computes it again at its first heartbeat)
        self._assigned_from: dict[str, list[tuple[bytes, int]]] = {}
        # whether share-partition states can be initialised (the share services, which hold the persister, are
        # made): until then nothing is initialised, so nothing is assigned
        self.initializes_state = False
        # group id -> (topic id, partition) -> when this coordinator started initialising it
        self._initializing_since: dict[str, dict[TopicPartition, int]] = {}
        # the initialisations heartbeats started, for the coordinator to hand to the persister once its lock is free
        self._to_start: list[InitializeShareState] = []

    def heartbeat(self, request: ShareGroupHeartbeatRequest, client_id: str, client_host: str) -> _Response:
        try:
            _validate(request)
            if request.member_epoch == LEAVE_EPOCH:
                return self._leave(request)
            return self._heartbeat(request, client_id, client_host)
        except KafkaError as exc:
            return _Response(error_code=exc.code, error_message=str(exc), member_id=request.member_id or None,
                             member_epoch=-1)

    def group(self, group_id: str, create: bool = False) -> ShareGroup:
        group = self.runtime.groups.get(group_id)
        if group is not None and not isinstance(group, ShareGroup):
            raise GroupIdNotFoundError(f"Group {group_id} is not a share group.")
        if group is None:
            if not create:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            group = ShareGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
            self.runtime.groups[group_id] = group
        return group

    def create(self, group_id: str) -> ShareGroup:
        """The share group, created first if there is none, its ShareGroupMetadata record written at epoch 1 (what
        Kafka 4.3.1 describes after creating it): Kafka's AlterShareGroupOffsets creates the group it names
        (getOrMaybeCreatePersistedShareGroup), so offsets can be set before any member joins. A group of another
        kind is GROUP_ID_NOT_FOUND."""
        if group_id in self.runtime.groups:
            return self.group(group_id)
        group = ShareGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
        self.runtime.write_consumer_group(group, [group.epoch_record(1)])
        self.runtime.groups[group_id] = group
        log.info("share group %s is created by an AlterShareGroupOffsets request", group_id)
        return group

    def _heartbeat(self, request: ShareGroupHeartbeatRequest, client_id: str, client_host: str) -> _Response:
        joining = request.member_epoch == JOIN_EPOCH
        group = self.group(request.group_id, create=joining)
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:
                raise UnknownMemberIdError(f"member {request.member_id} is not a member of share group "
                                           f"{group.group_id}")
            if len(group.members) >= self.runtime.config.share_max_size:
                raise GroupMaxSizeReachedError(f"share group {group.group_id} has reached its maximum size")
            member = ShareMember(request.member_id)
        elif not joining and request.member_epoch not in (member.member_epoch, member.previous_member_epoch):
            raise FencedMemberEpochError(f"member epoch {request.member_epoch} is not {member.member_epoch}; the "
                                         "member must rejoin")
        updated = replace(member, client_id=client_id, client_host=client_host,
                          rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
                          subscribed_topic_names=(tuple(sorted(request.subscribed_topic_names))
                                                  if request.subscribed_topic_names is not None
                                                  else member.subscribed_topic_names))
        out: list[CoordinatorRecord] = []
        bump = updated.member_id not in group.members or (
            updated.subscribed_topic_names != member.subscribed_topic_names)
        if updated != member or bump:
            out.append(updated.subscription_record(group.group_id))
        if bump:
            out.append(group.epoch_record(group.group_epoch + 1))
        self.runtime.write_consumer_group(group, out)
        self._update_target_assignment(group)
        self._maybe_initialize(group)
        before = group.members[updated.member_id]
        reconciled = self._reconcile(group, before)
        self._schedule_session_timeout(group, reconciled.member_id)
        response = _Response(error_code=ErrorCode.NONE, member_id=reconciled.member_id,
                             member_epoch=reconciled.member_epoch,
                             heartbeat_interval_ms=self._setting(group, "share.heartbeat.interval.ms",
                                                                 self.runtime.config.share_heartbeat_interval_ms))
        if joining or request.subscribed_topic_names is not None or reconciled.assigned != member.assigned:
            response.assignment = _Response.Assignment(topic_partitions=[
                _Response.TopicPartitions(topic_id=topic_id, partitions=sorted(ps))
                for topic_id, ps in sorted(reconciled.assigned.items()) if ps])
        return response

    # ---- share-partition state initialisation (share_state_initialization.py) --------------------------------

    def _maybe_initialize(self, group: ShareGroup) -> None:
        """Kafka's maybeCreateInitializeShareGroupStateRequest: the subscribed partitions not initialised are
        written as initialising, and their initialisation is queued (take_initializations)."""
        if not self.initializes_state:
            return
        now = self.runtime.now_ms()
        since = self._initializing_since.setdefault(group.group_id, {})
        request = to_initialize(group, self._subscribed_partitions(group), now, since)
        if request is None:
            return
        self._write_state_partitions(group, with_partitions(group.initializing, request.start_offsets),
                                     group.initialized, group.deleting)
        since.update(dict.fromkeys(request.start_offsets, now))
        self._to_start.append(request)
        log.info("share group %s initialises %d share-partitions at state epoch %d", group.group_id,
                 len(request.start_offsets), request.state_epoch)

    def take_initializations(self) -> list[InitializeShareState]:
        taken, self._to_start = self._to_start, []
        return taken

    def state_initialized(self, group_id: str, partitions: list[TopicPartition], assign: bool = True) -> None:
        """Kafka's initializeShareGroupState: the partitions' states are initialised (by a heartbeat's
        initialisation or AlterShareGroupOffsets): they are written as initialised and (`assign`: after a
        heartbeat's) the group epoch is bumped, so that the next heartbeat assigns them. A group deleted meanwhile
        is left alone."""
        group = self.runtime.groups.get(group_id)
        if not isinstance(group, ShareGroup):
            return
        if assign:  # a heartbeat's: only those still initialising (their state may have been deleted meanwhile)
            partitions = [tp for tp in partitions if contains(group.initializing, *tp)]
        if not partitions:
            return
        for tp in partitions:
            self._initializing_since.get(group_id, {}).pop(tp, None)
        if all(contains(group.initialized, *tp) for tp in partitions):
            return
        self._write_state_partitions(group, without_partitions(group.initializing, partitions),
                                     with_partitions(group.initialized, partitions), group.deleting)
        if assign:
            self.runtime.write_consumer_group(group, [group.epoch_record(group.group_epoch + 1)])
        log.info("share group %s has initialised %d share-partitions (group epoch %d)", group_id, len(partitions),
                 group.group_epoch)

    def state_not_initialized(self, group_id: str, partitions: list[TopicPartition], error: str) -> None:
        """The initialisation failed: the partitions stay initialising, tried again by a heartbeat after the retry
        interval (Kafka's group.share.initialize.retry.interval.ms)."""
        log.warning("share group %s could not initialise %d share-partitions (%s); a heartbeat tries again later",
                    group_id, len(partitions), error)

    def state_deleting(self, group: ShareGroup, topic_ids: set[bytes]) -> None:
        """DeleteShareGroupOffsets, before the states go: the topics are written as deleting."""
        self._write_state_partitions(group, group.initializing, group.initialized, group.deleting | topic_ids)

    def state_deleted(self, group: ShareGroup, topic_ids: set[bytes]) -> None:
        """The topics' states are deleted: they are neither initialised nor deleting any more (a member's next
        heartbeat initialises them again)."""
        self._write_state_partitions(group, without_topics(group.initializing, topic_ids),
                                     without_topics(group.initialized, topic_ids), group.deleting - topic_ids)
        self.runtime.write_consumer_group(group, [group.epoch_record(group.group_epoch + 1)])

    def _write_state_partitions(self, group: ShareGroup, initializing: Assignment, initialized: Assignment,
                                deleting: frozenset[bytes]) -> None:
        names = dict(group.topic_names)
        for topic_id in {*initializing, *initialized, *deleting}:
            topic = self.runtime.topics.topic_by_id(topic_id)
            if topic is not None:
                names[topic_id] = topic.name
        self.runtime.write_consumer_group(group, [group.state_partition_record(initializing, initialized, deleting,
                                                                               names)])

    def _subscribed_partitions(self, group: ShareGroup) -> list[tuple[bytes, int]]:
        partitions = []
        for name in sorted(group.subscribed_topic_names()):
            topic = self.runtime.topics.topic(name)
            if topic is not None:
                partitions.extend((topic.topic_id, index) for index in range(topic.partitions))
        return partitions

    def _update_target_assignment(self, group: ShareGroup) -> None:
        """Compute the target assignment again when the group epoch moved past it or the subscribed topics'
        partitions changed (a topic created, grown or deleted: a new group epoch). A group just loaded keeps its
        assignment if the partitions are those it was computed from."""
        partitions = [tp for tp in self._subscribed_partitions(group) if contains(group.initialized, *tp)]
        target = simple_assignment(sorted(group.members), partitions)
        if group.group_epoch == group.assignment_epoch:
            if self._assigned_from.get(group.group_id) == partitions or target == {
                    member_id: group.target_assignment.get(member_id, {}) for member_id in group.members}:
                self._assigned_from[group.group_id] = partitions
                return
            self.runtime.write_consumer_group(group, [group.epoch_record(group.group_epoch + 1)])
        out = [group.target_member_record(member_id, assignment) for member_id, assignment in sorted(target.items())
               if group.target_assignment.get(member_id) != assignment]
        out.append(group.target_epoch_record(group.group_epoch, self.runtime.now_ms()))
        self.runtime.write_consumer_group(group, out)
        self._assigned_from[group.group_id] = partitions
        if group.members:
            log.info("share group %s: target assignment for epoch %d: %d partitions over %d members",
                     group.group_id, group.group_epoch, len(partitions), len(group.members))

    def _reconcile(self, group: ShareGroup, member: ShareMember) -> ShareMember:
        """The member takes its target assignment and the assignment epoch (nothing to revoke first)."""
        target: Assignment = group.target_assignment.get(member.member_id, {})
        if member.member_epoch == group.assignment_epoch and member.assigned == target:
            return member
        reconciled = replace(member, member_epoch=group.assignment_epoch, previous_member_epoch=member.member_epoch,
                             assigned=target)
        self.runtime.write_consumer_group(group, [reconciled.assignment_record(group.group_id)])
        return group.members[member.member_id]

    def _leave(self, request: ShareGroupHeartbeatRequest) -> _Response:
        group = self.group(request.group_id)
        group.member(request.member_id)
        self.remove_member(group, request.member_id, "left the group")
        return _Response(error_code=ErrorCode.NONE, member_id=request.member_id, member_epoch=LEAVE_EPOCH,
                         heartbeat_interval_ms=0)

    def remove_member(self, group: ShareGroup, member_id: str, reason: str) -> None:
        if member_id not in group.members:
            return
        log.info("member %s of share group %s is removed: %s", member_id, group.group_id, reason)
        self.runtime.cancel(("share-session", group.group_id, member_id))
        out = group.member_tombstones(member_id)
        out.append(group.epoch_record(group.group_epoch + 1))
        self.runtime.write_consumer_group(group, out)
        self._update_target_assignment(group)

    def _schedule_session_timeout(self, group: ShareGroup, member_id: str) -> None:
        def expired() -> None:
            if self.runtime.groups.get(group.group_id) is group:
                self.remove_member(group, member_id, "its session timed out")

        self.runtime.schedule(("share-session", group.group_id, member_id),
                              self._setting(group, "share.session.timeout.ms",
                                            self.runtime.config.share_session_timeout_ms), expired)

    def _setting(self, group: ShareGroup, key: str, default: int) -> int:
        """The group's config `key`, else the broker's `group.<key>`."""
        value = self.group_config(group.group_id, key)
        return int(value) if value is not None else default

    def schedule_sessions_after_load(self, group: ShareGroup) -> None:
        for member_id in list(group.members):
            self._schedule_session_timeout(group, member_id)


def _validate(request: ShareGroupHeartbeatRequest) -> None:
    """Kafka's throwIfShareGroupHeartbeatRequestIsInvalid."""
    if not request.group_id:
        raise InvalidRequestError("GroupId can't be empty.")
    if not request.member_id:
        raise InvalidRequestError("MemberId can't be empty.")
    if request.member_epoch < LEAVE_EPOCH:
        raise InvalidRequestError(f"MemberEpoch is invalid: {request.member_epoch}")
    if request.member_epoch == JOIN_EPOCH and not request.subscribed_topic_names:
        raise InvalidRequestError("SubscribedTopicNames must be set in first request.")
