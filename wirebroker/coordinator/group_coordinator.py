"""The group coordinator (Kafka's GroupCoordinatorService and GroupCoordinatorShard, for one broker).

It owns every group and committed offset, whichever `__consumer_offsets` partition they hash to (a single broker
leads them all). One lock serialises every request and timer, as Kafka's coordinator runtime serialises the events
of a partition: the state machines in classic_group_manager.py and consumer_group_manager.py run under it and never block
(a parked JoinGroup or SyncGroup is a callback, answered later from another request or from the timer thread).

Writes go to `__consumer_offsets` before the answer (offsets_topic.py); offsets and consumer groups are changed by
replaying what was written, classic groups are kept in memory and written as GroupMetadata records. At start-up a
loader thread replays the whole topic; until it is done every group request gets COORDINATOR_LOAD_IN_PROGRESS and
clients retry. Then every member gets a fresh session, so consumers that outlived a broker restart carry on.
Every `offsets.retention.check.interval.ms` expired offsets are deleted, and empty groups left with no offsets go.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Protocol, TypeVar

from wirebroker.coordinator import group_admin, group_conversion, offset_metadata_manager
from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup, ClassicGroupState
from wirebroker.coordinator.classic_in_consumer_group import (
    ClassicMembersOfConsumerGroups,
)
from wirebroker.coordinator.classic_group_manager import (
    ClassicGroupManager,
    JoinRespond,
    SyncRespond,
    join_error,
    sync_error,
)
from wirebroker.coordinator.consumer_group import ConsumerGroup
from wirebroker.coordinator.consumer_group_manager import ConsumerGroupManager
from wirebroker.coordinator.group import Group, GroupConfig, partition_for
from wirebroker.coordinator.offset_metadata_manager import FetchedOffset, PartitionCommit
from wirebroker.coordinator.offsets import OffsetStore
from wirebroker.protocol.errors import (
    CoordinatorLoadInProgressError,
    ErrorCode,
    GroupIdNotFoundError,
    KafkaError,
    UnknownMemberIdError,
)
from wirebroker.protocol.messages.consumer_group_describe import ConsumerGroupDescribeResponse
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

log = logging.getLogger(__name__)

T = TypeVar("T")


class RecordLog(Protocol):
    """Where the coordinator's records go: `__consumer_offsets` (offsets_topic.py) or, in tests, memory."""

    @property
    def num_partitions(self) -> int: ...

    def append(self, partition: int, records: list[records.CoordinatorRecord]) -> None: ...

    def read_all(self, partition: int) -> Any: ...

    def exists(self) -> bool: ...


class Timer(Protocol):
    def now_ms(self) -> int: ...

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None: ...

    def cancel(self, key: Hashable) -> None: ...

    def is_scheduled(self, key: Hashable) -> bool: ...

    def start(self) -> None: ...

    def shutdown(self) -> None: ...


class GroupCoordinator:
    def __init__(self, config: GroupConfig, record_log: RecordLog, timer: Timer, topics: Any) -> None:
        self.config = config
        self.record_log = record_log
        self.timer = timer
        self.topics = topics  # the metadata store: topic(name) -> TopicMetadata | None
        self._lock = threading.RLock()
        self.groups: dict[str, ClassicGroup | ConsumerGroup] = {}
        self.offsets = OffsetStore()
        self.classic = ClassicGroupManager(self)
        self.consumer = ConsumerGroupManager(self)
        self.classic_in_consumer = ClassicMembersOfConsumerGroups(self)
        self._loaded = threading.Event()

    # ---- lifecycle -----------------------------------------------------------------------------------------------

    def start(self, load_in_background: bool = True) -> None:
        self.timer.start()
        if load_in_background:
            threading.Thread(target=self._load_and_schedule, name="group-coordinator-loader", daemon=True).start()
        else:
            self._load_and_schedule()

    def shutdown(self) -> None:
        self.timer.shutdown()

    def _load_and_schedule(self) -> None:
        with self._lock:
            try:
                self.load()
            except Exception:
                log.exception("loading the group coordinator's state failed; groups start empty")
            self._loaded.set()
        self.schedule("expire-offsets", self.config.offsets_retention_check_interval_ms, self._expire_periodically)

    def load(self) -> None:
        if not self.record_log.exists():
            return
        count = 0
        for partition in range(self.record_log.num_partitions):
            for key, value in self.record_log.read_all(partition):
                try:
                    record = records.decode(key, value)
                except records.UnknownRecordTypeError as exc:
                    log.info("skipping a record of __consumer_offsets-%d: %s", partition, exc)
                    continue
                except DecodeError as exc:
                    log.error("skipping an unreadable record of __consumer_offsets-%d: %s", partition, exc)
                    continue
                self._replay_loaded(record)
                count += 1
        for group in self.groups.values():
            if isinstance(group, ClassicGroup):
                self.classic.schedule_heartbeats_after_load(group)
            else:
                self.consumer.schedule_sessions_after_load(group)
        log.info("group coordinator loaded %d records: %d groups", count, len(self.groups))

    def _replay_loaded(self, record: records.CoordinatorRecord) -> None:
        kind = record.record_type
        if kind in (records.OFFSET_COMMIT, records.OFFSET_COMMIT_LEGACY):
            self._replay_offset(record)
        elif kind == records.GROUP_METADATA:
            group_id = record.key.group
            if record.value is None:
                self.groups.pop(group_id, None)
            else:
                self.groups[group_id] = ClassicGroup.from_record_value(group_id, record.value, self.now_ms())
        else:
            group_id = record.key.group_id
            group = self.groups.get(group_id)
            if not isinstance(group, ConsumerGroup):
                group = self.groups[group_id] = ConsumerGroup(group_id, state_timestamp_ms=self.now_ms())
            group.replay(record)
            if group.deleted:
                del self.groups[group_id]

    def _replay_offset(self, record: records.CoordinatorRecord) -> None:
        self.offsets.replay(record)
        if record.value is not None and record.key.group not in self.groups:
            # A group known only by its offsets: a "simple" group, as Kafka makes one on replay.
            self.groups[record.key.group] = ClassicGroup(record.key.group, state_timestamp_ms=self.now_ms())

    # ---- the requests (Kafka's GroupCoordinator interface) -------------------------------------------------------

    def _serve(self, operation: Callable[[], T], answer_error: Callable[[KafkaError], T]) -> T:
        """Run a request's operation under the lock once the state is loaded (COORDINATOR_LOAD_IN_PROGRESS until
        then); a Kafka error it raises becomes its answer."""
        with self._lock:
            try:
                if not self._loaded.is_set():
                    raise CoordinatorLoadInProgressError("the group coordinator is loading __consumer_offsets")
                return operation()
            except KafkaError as exc:
                return answer_error(exc)

    def join_group(self, request: JoinGroupRequest, version: int, client_id: str, client_host: str,
                   respond: JoinRespond) -> None:
        """Answered through `respond`, now or once the rebalance completes (possibly from the timer thread)."""
        self._serve(lambda: self.classic.join(request, version, client_id, client_host, respond),
                    lambda exc: respond(join_error(exc.code, request.member_id)))

    def sync_group(self, request: SyncGroupRequest, respond: SyncRespond) -> None:
        """Answered through `respond`, now or once the leader's assignment is stored."""
        self._serve(lambda: self.classic.sync(request, respond), lambda exc: respond(sync_error(exc.code)))

    def heartbeat(self, request: HeartbeatRequest) -> int:
        """The heartbeat's error code."""
        return self._serve(lambda: self.classic.heartbeat(request), lambda exc: exc.code)

    def leave_group(self, group_id: str, leaving: list[tuple[str, str | None, str | None]]
                    ) -> tuple[int, list[LeaveGroupResponse.MemberResponse]]:
        """(top-level error, one response per (member id, group instance id, reason))."""
        return self._serve(lambda: self.classic.leave(group_id, leaving), lambda exc: (exc.code, []))

    def consumer_group_heartbeat(self, request: ConsumerGroupHeartbeatRequest, client_id: str,
                                 client_host: str) -> ConsumerGroupHeartbeatResponse:
        return self._serve(lambda: self.consumer.heartbeat(request, client_id, client_host),
                           lambda exc: ConsumerGroupHeartbeatResponse(error_code=exc.code, error_message=str(exc)))

    def commit_offsets(self, group_id: str, member_id: str, group_instance_id: str | None, generation_or_epoch: int,
                       retention_ms: int, commits: list[PartitionCommit], api_version: int
                       ) -> dict[tuple[str, int], int]:
        """Error code per (topic, partition); a group-level failure gives every partition that code."""
        return self._serve(
            lambda: offset_metadata_manager.commit(self, group_id, member_id, group_instance_id, generation_or_epoch,
                                                   retention_ms, commits, api_version),
            lambda exc: {(p.topic, p.partition): exc.code for p in commits})

    def fetch_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None, member_id: str | None = None,
                      member_epoch: int = -1) -> tuple[int, list[tuple[str, list[FetchedOffset]]]]:
        """(group error, [(topic, offsets)]); topics None means every partition the group committed."""
        return self._serve(lambda: offset_metadata_manager.fetch(self, group_id, topics, member_id, member_epoch),
                           lambda exc: (exc.code, []))

    def delete_offsets(self, group_id: str, partitions: Iterable[tuple[str, int]]
                       ) -> tuple[int, dict[tuple[str, int], int]]:
        """(group error, error per partition) of an OffsetDelete."""
        return self._serve(lambda: offset_metadata_manager.delete(self, group_id, partitions),
                           lambda exc: (exc.code, {}))

    def describe_groups(self, group_ids: list[str]) -> list[DescribeGroupsResponse.DescribedGroup]:
        return self._serve(lambda: [group_admin.describe(self, group_id) for group_id in group_ids],
                           lambda exc: [group_admin.describe_error(group_id, exc.code) for group_id in group_ids])

    def consumer_group_describe(self, group_ids: list[str]) -> list[ConsumerGroupDescribeResponse.DescribedGroup]:
        return self._serve(
            lambda: [group_admin.describe_consumer_group(self, group_id) for group_id in group_ids],
            lambda exc: [group_admin.describe_consumer_group_error(group_id, exc) for group_id in group_ids])

    def list_groups(self, states: list[str], types: list[str]) -> tuple[int, list[ListGroupsResponse.ListedGroup]]:
        """(error, groups) filtered by state and type."""
        return self._serve(lambda: (ErrorCode.NONE, group_admin.list_groups(self, states, types)),
                           lambda exc: (exc.code, []))

    def delete_groups(self, group_ids: list[str]) -> list[tuple[str, int]]:
        """(group id, error code) for each group asked for, in order."""
        return self._serve(lambda: [(group_id, group_admin.delete_group(self, group_id)) for group_id in group_ids],
                           lambda exc: [(group_id, exc.code) for group_id in group_ids])

    # ---- services for the protocol managers ----------------------------------------------------------------------

    def now_ms(self) -> int:
        return self.timer.now_ms()

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        def locked() -> None:
            with self._lock:
                fn()

        self.timer.schedule(key, delay_ms, locked)

    def cancel(self, key: Hashable) -> None:
        self.timer.cancel(key)

    def is_scheduled(self, key: Hashable) -> bool:
        return self.timer.is_scheduled(key)

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self.record_log.num_partitions)

    def write(self, group_id: str, out: list[records.CoordinatorRecord]) -> None:
        """Append records for `group_id`; offset commits among them are applied once written."""
        if not out:
            return
        self.record_log.append(self.partition_for(group_id), out)
        for record in out:
            if record.record_type in (records.OFFSET_COMMIT, records.OFFSET_COMMIT_LEGACY):
                self._replay_offset(record)

    def write_consumer_group(self, group: ConsumerGroup, out: list[records.CoordinatorRecord]) -> None:
        if not out:
            return
        self.record_log.append(self.partition_for(group.group_id), out)
        for record in out:
            group.replay(record)
        if group.deleted and self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]

    def group(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def classic_group(self, group_id: str) -> ClassicGroup:
        """The classic group a SyncGroup/Heartbeat/LeaveGroup names: UNKNOWN_MEMBER_ID if there is none."""
        group = self.groups.get(group_id)
        if not isinstance(group, ClassicGroup):
            raise UnknownMemberIdError(f"group {group_id} is not a classic group this coordinator knows")
        return group

    def classic_group_for_join(self, group_id: str, create: bool) -> ClassicGroup:
        group = self.groups.get(group_id)
        if isinstance(group, ConsumerGroup):  # an empty one (a JoinGroup to a live one is served by it)
            self.write_consumer_group(group, group.group_tombstones())
            group = None
        if group is None:
            if not create:
                raise UnknownMemberIdError(f"group {group_id} does not exist")
            group = self.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.now_ms())
        return group

    def consumer_group(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if isinstance(group, ClassicGroup):
            if create and not group.is_empty() and group_conversion.can_upgrade(self, group):
                return group_conversion.upgrade(self, group)
            if not (create and group.is_empty() and group.is_in(ClassicGroupState.EMPTY)):
                raise GroupIdNotFoundError(f"Group {group_id} is not a consumer group.")
            log.info("empty classic group %s becomes a consumer group (its offsets stay)", group_id)
            self.write(group_id, [records.group_metadata_tombstone(group_id)])
            group = None
        if group is None:
            if not create:
                raise GroupIdNotFoundError(f"Group {group_id} not found.")
            group = self.groups[group_id] = ConsumerGroup(group_id, state_timestamp_ms=self.now_ms())
        return group

    # ---- deleting groups and expiring offsets --------------------------------------------------------------------

    def delete_group(self, group: Group) -> None:
        """Tombstones for the group's offsets and metadata, then the group is gone."""
        out = self.offsets.tombstones(group.group_id)
        if isinstance(group, ConsumerGroup):
            out += group.group_tombstones()
        else:
            out.append(records.group_metadata_tombstone(group.group_id))
            group.state = ClassicGroupState.DEAD
        self.write(group.group_id, out)
        if isinstance(group, ConsumerGroup):
            group.deleted = True
        self.groups.pop(group.group_id, None)
        log.info("group %s deleted", group.group_id)

    def _expire_periodically(self) -> None:
        self.expire_offsets()
        self.schedule("expire-offsets", self.config.offsets_retention_check_interval_ms, self._expire_periodically)

    def expire_offsets(self) -> int:
        """Delete expired offsets (offsets.retention.minutes); returns how many went."""
        with self._lock:
            return self._expire_offsets()

    def _expire_offsets(self) -> int:
        removed = 0
        now = self.now_ms()
        for group_id in list(self.offsets.group_ids()):
            group = self.groups.get(group_id)
            if group is not None and not group.is_empty():
                continue
            empty_since = None
            if isinstance(group, ClassicGroup) and group.protocol_type is not None:
                empty_since = group.state_timestamp_ms
            expired = self.offsets.expired(group_id, now, self.config.offsets_retention_ms, empty_since)
            if expired:
                log.info("expiring %d offsets of group %s (offsets.retention.minutes)", len(expired), group_id)
                self.write(group_id, self.offsets.tombstones(group_id, expired))
                removed += len(expired)
            if group is not None and group.is_empty() and not self.offsets.has_offsets(group_id):
                self.delete_group(group)
        return removed
