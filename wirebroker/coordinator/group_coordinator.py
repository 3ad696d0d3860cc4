"""The group coordinator (Kafka's GroupCoordinatorService and GroupCoordinatorShard, for one broker).

It owns the groups and committed offsets of the `__consumer_offsets` partitions this broker leads (a group lives in
the partition its id hashes to): all of them on a single broker; in a cluster those it is elected for, as Kafka's
onElection and onResignation (the server calls `on_election` and `on_resignation` on each leadership change of the
topic). A group of a partition not owned is NOT_COORDINATOR; one of a partition still loading is
COORDINATOR_LOAD_IN_PROGRESS; clients retry, after finding the coordinator again. Its public methods are Kafka's
GroupCoordinator operations; each takes the one lock, which serialises every request and timer as Kafka's
coordinator runtime serialises the events of a partition. Callers never lock anything. Under the lock the managers
run and never block (a parked JoinGroup or SyncGroup is a `respond` callback, answered later from another request or
from the timer thread):
- classic_group_manager.py: classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup);
- classic_in_consumer_group.py: the same requests from classic members of a KIP-848 consumer group;
- consumer_group_manager.py: KIP-848 consumer groups (ConsumerGroupHeartbeat);
- share_group_manager.py: KIP-932 share groups (ShareGroupHeartbeat), imported at the first share group;
- offset_metadata_manager.py: committed offsets; group_admin.py: describe, list and delete.
They share a GroupRuntime (group_runtime.py), never this class. A classic request goes to the classic manager or,
when its group id names a consumer group, to classic_in_consumer_group.py, as Kafka's GroupMetadataManager does.

Writes go to `__consumer_offsets` before the answer (offsets_topic.py: acks=all, so a new leader has them);
offsets and consumer groups are changed by replaying what was written, classic groups are kept in memory and
written as GroupMetadata records. A loader thread replays each partition once this broker owns it (Kafka's
scheduleLoadGroupAndOffsets); then every member of its groups gets a fresh session, so consumers that outlived a
broker restart or a coordinator move carry on. Giving a partition up drops its groups from memory and answers their
parked JoinGroup and SyncGroup requests NOT_COORDINATOR (Kafka's removeGroupsForPartition).
Every `offsets.retention.check.interval.ms` expired offsets are deleted, and empty groups left with no offsets go.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from wirebroker.coordinator import group_admin
from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup
from wirebroker.coordinator.classic_group_manager import (
    ClassicGroupManager,
    JoinRespond,
    SyncRespond,
    join_error,
    sync_error,
)
from wirebroker.coordinator.classic_in_consumer_group import (
    ClassicMembersOfConsumerGroups,
)
from wirebroker.coordinator.consumer_group import ConsumerGroup
from wirebroker.coordinator.consumer_group_manager import ConsumerGroupManager
from wirebroker.coordinator.group import Group, GroupConfig
from wirebroker.coordinator.group_runtime import (
    GroupRuntime,
    RecordLog,
    Timer,
    TopicImage,
)
from wirebroker.coordinator.offset_metadata_manager import (
    OFFSET_RECORD_TYPES,
    FetchedOffset,
    OffsetMetadataManager,
    PartitionCommit,
)
from wirebroker.coordinator.partition_ownership import (
    OwnedPartition,
    PartitionOwnership,
)
from wirebroker.protocol.errors import (
    CoordinatorLoadInProgressError,
    ErrorCode,
    KafkaError,
)
from wirebroker.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeResponse,
)
from wirebroker.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from wirebroker.protocol.messages.describe_groups import DescribeGroupsResponse
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest
from wirebroker.protocol.messages.join_group import JoinGroupRequest
from wirebroker.protocol.messages.leave_group import LeaveGroupResponse
from wirebroker.protocol.messages.list_groups import ListGroupsResponse
from wirebroker.protocol.messages.sync_group import SyncGroupRequest
from wirebroker.protocol.primitives import DecodeError

if TYPE_CHECKING:  # share groups are imported at the first one (a broker with none never loads them)
    from wirebroker.coordinator.share_group import ShareGroup
    from wirebroker.coordinator.share_group_manager import ShareGroupManager
    from wirebroker.coordinator.share_state_initialization import (
        InitializeShareState,
    )
    from wirebroker.protocol.messages.share_group_heartbeat import (
        ShareGroupHeartbeatRequest,
        ShareGroupHeartbeatResponse,
    )

log = logging.getLogger(__name__)

T = TypeVar("T")


class GroupCoordinator:
    def __init__(self, config: GroupConfig, record_log: RecordLog, timer: Timer, topics: TopicImage) -> None:
        self.config = config
        self.record_log = record_log
        self.timer = timer
        self.topics = topics
        self._lock = threading.RLock()
        self._owned = PartitionOwnership("__consumer_offsets", self._lock, self._load, "group-coordinator-loader",
                                         self._describe_loaded)
        self._runtime = GroupRuntime(config, record_log, timer, topics, self._lock)
        self._offsets = OffsetMetadataManager(self._runtime)
        self._classic = ClassicGroupManager(self._runtime)
        self._consumer = ConsumerGroupManager(self._runtime, self._classic)
        self._classic_in_consumer = ClassicMembersOfConsumerGroups(self._runtime, self._consumer)
        self._share_manager: ShareGroupManager | None = None
        self._share_state_initializer: Callable[[InitializeShareState], None] = lambda initialization: None

    @property
    def groups(self) -> Mapping[str, Group]:
        """Every group by id, read-only (for tests and operators; requests go through the methods below)."""
        return MappingProxyType(self._runtime.groups)

    # ---- lifecycle: the partitions this coordinator owns -----------------------------------------------------------

    def start(self, load_in_background: bool = True, own_every_partition: bool = True) -> None:
        """Start the timers. A single broker leads every partition: it owns them all and loads them now (in the
        background unless told otherwise). In a cluster nothing is owned until `on_election`."""
        self._owned.load_in_background = load_in_background
        self.timer.start()
        self._runtime.schedule("expire-offsets", self.config.offsets_retention_check_interval_ms,
                               self._expire_periodically)
        if own_every_partition:
            with self._owned.electing():  # one line once every partition has loaded
                for partition in range(self.record_log.num_partitions):
                    self.on_election(partition, 0)

    def shutdown(self) -> None:
        self.timer.shutdown()
        self._owned.shutdown()

    def on_election(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads `partition` of `__consumer_offsets` (Kafka's onElection): its groups answer
        COORDINATOR_LOAD_IN_PROGRESS until they are loaded from the log. A partition owned already keeps its
        state (a new leader epoch on the same leader)."""
        self._owned.elect(partition, leader_epoch)

    def on_resignation(self, partition: int, leader_epoch: int | None = None) -> None:
        """This broker no longer leads `partition` (Kafka's onResignation): its groups and offsets are dropped from
        memory (they stay in the log for the new leader) and answer NOT_COORDINATOR from now on."""
        with self._lock:
            if not self._owned.resign(partition, leader_epoch):
                return
            group_ids = {g for g in [*self._runtime.groups, *self._offsets.group_ids()]
                         if self._runtime.partition_of(g) == partition}
            for group_id in group_ids:
                group = self._runtime.groups.pop(group_id, None)
                if isinstance(group, ClassicGroup):
                    self._classic.unload(group)
                self._runtime.cancel_group_timers(group_id)
                self._offsets.unload(group_id)
        log.log(logging.INFO if group_ids else logging.DEBUG,
                "Unloaded %d groups of __consumer_offsets-%d: this broker no longer leads it", len(group_ids),
                partition)

    def _load(self, partition: int, load: OwnedPartition) -> None:
        """Kafka's doLoadGroupsAndOffsets: read the partition (outside the lock: nothing writes to it while it
        loads), then replay it, unless the partition was given up meanwhile."""
        started = self._runtime.now_ms()
        try:
            loaded = list(self._read(partition))
        except Exception:
            log.exception("loading __consumer_offsets-%d failed; its groups start empty", partition)
            loaded = []
        with self._lock:
            if not self._owned.is_current(partition, load):
                log.info("Not loading __consumer_offsets-%d: this broker no longer leads it", partition)
                return
            for producer_id, item in loaded:
                if isinstance(item, bool):
                    self._offsets.replay_end_transaction_marker(producer_id, item, partition)
                else:
                    self._replay_loaded(item, producer_id)
            groups = [g for g_id, g in self._runtime.groups.items() if self._runtime.partition_of(g_id) == partition]
            for group in groups:
                if isinstance(group, ClassicGroup):
                    self._classic.schedule_heartbeats_after_load(group)
                elif isinstance(group, ConsumerGroup):
                    self._consumer.schedule_sessions_after_load(group)
                else:
                    self._share.schedule_sessions_after_load(group)
            load.loaded = True
        if loaded:
            log.info("Finished loading offsets and group metadata from __consumer_offsets-%d in %d ms: %d records, "
                     "%d groups", partition, self._runtime.now_ms() - started, len(loaded), len(groups))

    def _describe_loaded(self) -> str:
        with self._lock:
            return f"{len(self._runtime.groups)} groups, {self._offsets.offset_count()} committed offsets"

    def _read(self, partition: int) -> Iterator[tuple[int, records.CoordinatorRecord | bool]]:
        """In log order: (producer id, record) for each record, (producer id, commit) for each transaction marker."""
        for batch in self.record_log.read_batches(partition):
            if batch.commit is not None:
                yield batch.producer_id, batch.commit
            for key, value in batch.records:
                try:
                    yield batch.producer_id, records.decode(key, value)
                except records.UnknownRecordTypeError as exc:
                    log.info("skipping a record of __consumer_offsets-%d: %s", partition, exc)
                except DecodeError as exc:
                    log.error("skipping an unreadable record of __consumer_offsets-%d: %s", partition, exc)

    def _check_coordinator(self, group_id: str) -> None:
        """NOT_COORDINATOR unless this broker leads the group's partition, COORDINATOR_LOAD_IN_PROGRESS until it
        is loaded (Kafka's validateGroupStatus)."""
        self._owned.check(self._runtime.partition_of(group_id), f"group {group_id}")

    def _replay_loaded(self, record: records.CoordinatorRecord, producer_id: int) -> None:
        """Kafka's GroupCoordinatorShard.replay: each record to the state it belongs to."""
        groups = self._runtime.groups
        kind = record.record_type
        if kind in OFFSET_RECORD_TYPES:
            self._offsets.replay(record, producer_id)
        elif kind == records.GROUP_METADATA:
            group_id = record.key.group
            if record.value is None:
                groups.pop(group_id, None)
            else:
                groups[group_id] = ClassicGroup.from_record_value(group_id, record.value, self._runtime.now_ms())
        else:
            group_id = record.key.group_id
            group = groups.get(group_id)
            if kind == records.SHARE_GROUP_STATE_PARTITION_METADATA and record.value is None and group is None:
                return  # the tombstone of a group already deleted (Kafka writes it after the group's epoch's)
            if kind in records.SHARE_GROUP_RECORD_TYPES:
                group = self._share.group(group_id, create=True)
            elif not isinstance(group, ConsumerGroup):
                group = groups[group_id] = ConsumerGroup(group_id, state_timestamp_ms=self._runtime.now_ms())
            group.replay(record)
            if group.deleted:
                del groups[group_id]

    @property
    def _share(self) -> ShareGroupManager:
        """The share group manager, made at the first share group (heartbeat or loaded record)."""
        if self._share_manager is None:
            from wirebroker.coordinator.share_group_manager import ShareGroupManager
            self._share_manager = ShareGroupManager(self._runtime)
        return self._share_manager

    # ---- expiring offsets ----------------------------------------------------------------------------------------

    def _expire_periodically(self) -> None:
        self.expire_offsets()
        self._runtime.schedule("expire-offsets", self.config.offsets_retention_check_interval_ms,
                               self._expire_periodically)

    def expire_offsets(self) -> int:
        """Delete expired offsets (offsets.retention.minutes), then the empty groups left with none; returns how
        many offsets went."""
        with self._lock:
            removed = 0
            for group_id in self._offsets.group_ids():
                removed += self._offsets.expire(group_id)
                group = self._runtime.groups.get(group_id)
                if group is not None and group.is_empty() and not self._offsets.has_offsets(group_id):
                    group_admin.delete(self._runtime, self._offsets, group)
            return removed

    # ---- the requests (Kafka's GroupCoordinator interface) -------------------------------------------------------

    def _serve(self, group_id: str | None, operation: Callable[[], T], answer_error: Callable[[KafkaError], T]) -> T:
        """Run a request's operation under the lock once this broker coordinates `group_id` (every owned
        partition loaded when None); a Kafka error it raises becomes its answer."""
        with self._lock:
            try:
                if group_id is not None:
                    self._check_coordinator(group_id)
                elif not self._owned.all_loaded():
                    raise CoordinatorLoadInProgressError("the group coordinator is loading __consumer_offsets")
                return operation()
            except KafkaError as exc:
                return answer_error(exc)

    def _consumer_group(self, group_id: str) -> ConsumerGroup | None:
        """The consumer group a classic request names, if it names one: its classic members are served there."""
        group = self._runtime.groups.get(group_id)
        return group if isinstance(group, ConsumerGroup) else None

    def join_group(self, request: JoinGroupRequest, version: int, client_id: str, client_host: str,
                   respond: JoinRespond) -> None:
        """Answered through `respond`, now or once the rebalance completes (possibly from the timer thread)."""
        def join() -> None:
            group = self._consumer_group(request.group_id)
            if group is not None and not group.is_empty():
                self._classic_in_consumer.join(group, request, version, client_id, client_host, respond)
            else:  # an empty consumer group gives way to a classic group
                self._classic.join(request, version, client_id, client_host, respond)

        self._serve(request.group_id, join, lambda exc: respond(join_error(exc.code, request.member_id)))

    def sync_group(self, request: SyncGroupRequest, respond: SyncRespond) -> None:
        """Answered through `respond`, now or once the leader's assignment is stored."""
        def sync() -> None:
            group = self._consumer_group(request.group_id)
            if group is not None:
                self._classic_in_consumer.sync(group, request, respond)
            else:
                self._classic.sync(request, respond)

        self._serve(request.group_id, sync, lambda exc: respond(sync_error(exc.code)))

    def heartbeat(self, request: HeartbeatRequest) -> int:
        """The heartbeat's error code."""
        def heartbeat() -> int:
            group = self._consumer_group(request.group_id)
            if group is not None:
                self._classic_in_consumer.heartbeat(group, request)
            else:
                self._classic.heartbeat(request)
            return ErrorCode.NONE

        return self._serve(request.group_id, heartbeat, lambda exc: exc.code)

    def leave_group(self, group_id: str, leaving: list[tuple[str, str | None, str | None]]
                    ) -> tuple[int, list[LeaveGroupResponse.MemberResponse]]:
        """(top-level error, one response per (member id, group instance id, reason))."""
        def leave() -> tuple[int, list[LeaveGroupResponse.MemberResponse]]:
            group = self._consumer_group(group_id)
            if group is not None:
                return self._classic_in_consumer.leave(group, leaving)
            return self._classic.leave(group_id, leaving)

        return self._serve(group_id, leave, lambda exc: (exc.code, []))

    def consumer_group_heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str,
                                 client_host: str) -> ConsumerGroupHeartbeatResponse:
        return self._serve(request.group_id, lambda: self._consumer.heartbeat(request, client_id, client_host),
                           lambda exc: ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=str(exc)))

    def share_group_heartbeat(self, request: ShareGroupHeartbeatRequest, client_id: str,
                              client_host: str) -> ShareGroupHeartbeatResponse:
        from wirebroker.protocol.messages.share_group_heartbeat import (
            ShareGroupHeartbeatResponse,
        )
        response = self._serve(request.group_id, lambda: self._share.heartbeat(request, client_id, client_host),
                               lambda exc: ShareGroupHeartbeatResponse(error_code=exc.code, error_message=str(exc)))
        with self._lock:
            started = self._share.take_initializations()
        for initialization in started:  # outside the lock: the persister may be another broker
            self._share_state_initializer(initialization)
        return response

    def use_share_state_initializer(self, start: Callable[[InitializeShareState], None]) -> None:
        """What initialises share-partition states (the share services, off this lock): it reports back with
        share_state_initialized or share_state_not_initialized."""
        with self._lock:
            self._share_state_initializer = start
            self._share.initializes_state = True

    def share_state_initialized(self, group_id: str, partitions: list[tuple[bytes, int]], assign: bool = True) -> None:
        """The share-partitions' states are initialised: recorded (and, `assign`, the group epoch bumped to assign
        them), unless this broker no longer coordinates the group."""
        self._serve(group_id, lambda: self._share.state_initialized(group_id, partitions, assign), lambda exc: None)

    def share_state_not_initialized(self, group_id: str, partitions: list[tuple[bytes, int]], error: str) -> None:
        self._serve(group_id, lambda: self._share.state_not_initialized(group_id, partitions, error),
                    lambda exc: None)

    def record_share_state_deletion(self, group: ShareGroup, topic_ids: set[bytes], done: bool) -> None:
        """DeleteShareGroupOffsets, within serve_share: the topics are written as deleting, then (`done`) gone."""
        if done:
            self._share.state_deleted(group, topic_ids)
        else:
            self._share.state_deleting(group, topic_ids)

    def use_share_group_configs(self, lookup: Callable[[str, str], str | None]) -> None:
        """Where share groups read their group configs ((group id, key) -> value): the share services' store."""
        with self._lock:
            self._share.group_config = lookup

    def share_group(self, group_id: str, create: bool = False) -> ShareGroup:
        """The share group `group_id`, for its describe and offsets APIs: NOT_COORDINATOR, loading, and
        GROUP_ID_NOT_FOUND (unknown unless `create`, or of another kind) are raised. Read it within `serve_share`."""
        self._check_coordinator(group_id)
        return self._share.create(group_id) if create else self._share.group(group_id)

    def serve_share(self, group_id: str, operation: Callable[[], T], answer_error: Callable[[KafkaError], T]) -> T:
        """Run an operation on a share group under the coordinator's lock (the share APIs' entry)."""
        return self._serve(group_id, operation, answer_error)

    def commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_or_epoch: int,
                       retention_ms: int, commits: list[PartitionCommit], api_version: int
                       ) -> dict[tuple[str, int], int]:
        """Error code per (topic, partition); a group-level failure gives every partition that code."""
        return self._serve(group_id, lambda: self._offsets.commit(group_id, member_id, group_instance_id,
                                                                  generation_or_epoch, retention_ms, commits,
                                                                  api_version),
                           lambda exc: {(p.topic, p.partition): exc.code for p in commits})

    def commit_transactional_offsets(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                                     group_instance_id: str | None, generation_id: int,
                                     commits: list[PartitionCommit], api_version: int) -> dict[tuple[str, int], int]:
        """TxnOffsetCommit: error code per (topic, partition), the offsets pending until the transaction ends."""
        return self._serve(group_id, lambda: self._offsets.commit_transactional(
            group_id, producer_id, producer_epoch, member_id, group_instance_id, generation_id, commits, api_version),
            lambda exc: {(p.topic, p.partition): exc.code for p in commits})

    def fetch_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None, member_id: str | None = None,
                      member_epoch: int = -1, require_stable: bool = False
                      ) -> tuple[int, list[tuple[str, list[FetchedOffset]]]]:
        """(group error, [(topic, offsets)]); topics None means every partition the group committed."""
        return self._serve(group_id, lambda: (ErrorCode.NONE, self._offsets.fetch(group_id, topics, member_id,
                                                                                   member_epoch, require_stable)),
                           lambda exc: (exc.code, []))

    def delete_offsets(self, group_id: str, partitions: Iterable[tuple[str, int]]
                       ) -> tuple[int, dict[tuple[str, int], int]]:
        """(group error, error per partition) of an OffsetDelete."""
        return self._serve(group_id, lambda: (ErrorCode.NONE, self._offsets.delete(group_id, partitions)),
                           lambda exc: (exc.code, {}))

    def complete_transaction(self, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                             commit: bool) -> int:
        """A transaction marker for a `__consumer_offsets` partition (Kafka's completeTransaction): written, then
        the producer's pending offsets there are committed (COMMIT) or dropped (ABORT). The error code."""
        with self._lock:
            try:
                self._owned.check(partition, "transaction marker")
                self.record_log.append_end_txn_marker(partition, producer_id, producer_epoch, coordinator_epoch,
                                                      commit)
            except KafkaError as exc:
                return exc.code
            self._offsets.replay_end_transaction_marker(producer_id, commit, partition)
            return ErrorCode.NONE

    def describe_groups(self, group_ids: list[str]) -> list[DescribeGroupsResponse.DescribedGroup]:
        return [self._serve(group_id, lambda group_id=group_id: group_admin.describe(self._runtime, group_id),
                            lambda exc, group_id=group_id: group_admin.describe_error(group_id, exc.code))
                for group_id in group_ids]

    def consumer_group_describe(self, group_ids: list[str]) -> list[ConsumerGroupDescribeResponse.DescribedGroup]:
        return [self._serve(group_id,
                            lambda group_id=group_id: group_admin.describe_consumer_group(self._runtime, group_id),
                            lambda exc, group_id=group_id: group_admin.describe_consumer_group_error(group_id, exc))
                for group_id in group_ids]

    def list_groups(self, states: list[str], types: list[str]) -> tuple[int, list[ListGroupsResponse.ListedGroup]]:
        """(error, groups) filtered by state and type: the groups of the partitions this broker leads."""
        return self._serve(None, lambda: (ErrorCode.NONE, group_admin.list_groups(self._runtime, states, types)),
                           lambda exc: (exc.code, []))

    def delete_groups(self, group_ids: list[str]) -> list[tuple[str, int]]:
        """(group id, error code) for each group asked for, in order."""
        return [(group_id, self._serve(
            group_id, lambda group_id=group_id: group_admin.delete_group(self._runtime, self._offsets, group_id),
            lambda exc: exc.code)) for group_id in group_ids]
