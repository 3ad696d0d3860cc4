"""The share-partitions this broker leads and the share sessions of their consumers (KIP-932; Kafka's
SharePartitionManager and ShareSessionCache): what ShareFetch and ShareAcknowledge act on.

A share-partition (share_partition.py) is made at its group's first fetch here, from the state the share coordinator
persisted: the group's coordinator initialised it (share_state_initialization.py), at start offset -1 for a topic new
to the group, which is resolved here with `share.auto.offset.reset` of the group (latest: the high watermark;
earliest: the log start offset) and persisted with the first change. A share-partition with no state at all was
never initialised by the group (a fetch of a partition never assigned): UNKNOWN_SERVER_ERROR, as Kafka answers. The state goes through a persister: the share
coordinator itself on a single broker (share_coordinator.py), the persister RPCs to the key's share coordinator in a
cluster (share_persister_remote.py). Every write carries the state epoch the share-partition was read at: one an
admin reset since (AlterShareGroupOffsets) is FENCED_STATE_EPOCH, and so is FENCED_LEADER_EPOCH the write of a
leader whose topic partition a newer leader (its read records its leader epoch) has taken over: the share-partition
is dropped from memory to be read again, as Kafka's fenced share-partitions are. So is a share-partition whose topic partition this broker
stops leading (`leadership_lost`), and every share-partition of a group once its last share session here ends
(Kafka's ShareGroupListener.onEmpty): a later leader, or a later member, reads what was persisted.

Share sessions, one per (group, member): a ShareFetch at epoch 0 opens one with the partitions it names (and must
carry no acknowledgements: INVALID_REQUEST), replacing the member's session if it had one; at most
`group.share.max.share.sessions` sessions live on a broker, and a new one past that is SHARE_SESSION_LIMIT_REACHED
(Kafka's ShareSessionCache evicts none: a session ends only with its final epoch or its connection); later
requests carry the session's epoch (else INVALID_SHARE_SESSION_EPOCH; no session: SHARE_SESSION_NOT_FOUND), which
each bumps, and add partitions or forget them; epoch -1 closes it after its acknowledgements, releasing what the member still holds, and so does the close
of the connection that opened it (a member killed: its records come back at once, as in Kafka 4.x).

A fetch: acknowledgements first (persisted before the answer; a failed partition gets its AcknowledgeErrorCode),
then each session partition is read from its next fetch offset through the replica manager (waiting in the fetch
purgatory for min_bytes up to max_wait_ms, as a Fetch does), and what is AVAILABLE in the batches read is acquired
for the member, at most max_records offsets, under an acquisition lock of `share.record.lock.duration.ms` (the
group's config, else `group.share.record.lock.duration.ms`). With the group's `share.isolation.level=read_committed`
the reads stop at the last stable offset and the batches of aborted transactions are archived, never delivered. A lock
expiring releases what it still holds, and the change is persisted. The answer of a new session lists every
partition; a later one only the partitions acknowledged in the request or with records, an error or an
acknowledgement error, and once more a partition whose previous answer was an error (Kafka's ShareSessionContext
and CachedSharePartition.maybeUpdateResponseData; checked against Kafka 4.3.1). Locks run on the group coordinator's timer thread; every change takes
this manager's lock.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from wirebroker.coordinator.group import GroupConfig
from wirebroker.coordinator.group_runtime import Timer, TopicImage
from wirebroker.coordinator.share_coordinator import ShareKey, ShareState
from wirebroker.coordinator.share_partition import (
    AcquiredRecords,
    SharePartition,
    StateBatch,
)
from wirebroker.coordinator.share_state_initialization import (
    UNINITIALIZED_START_OFFSET,
)
from wirebroker.protocol.errors import (
    ErrorCode,
    FencedLeaderEpochError,
    FencedStateEpochError,
    InvalidRecordStateError,
    InvalidRequestError,
    InvalidShareSessionEpochError,
    KafkaError,
    ShareSessionLimitReachedError,
    ShareSessionNotFoundError,
    UnknownServerError,
    UnknownTopicIdError,
)
from wirebroker.protocol.records import BATCH_HEADER_SIZE, read_header

log = logging.getLogger(__name__)


class UninitializedSharePartitionError(UnknownServerError, code=ErrorCode.UNKNOWN_SERVER_ERROR):
    """A share-partition its group coordinator has not initialised (Kafka's fetch answers UNKNOWN_SERVER_ERROR)."""

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
LATEST, EARLIEST = "latest", "earliest"
READ_COMMITTED = "read_committed"  # share.isolation.level: records of aborted transactions are archived
MAX_SHARE_SESSIONS = 2000  # Kafka's group.share.max.share.sessions default
# the keys this manager puts on the group coordinator's timer start with one of these (close() cancels them)
TIMER_KINDS = frozenset({"share-connection-closed", "share-fetch-wait", "share-lock"})

# (topic id, partition) -> [(first offset, last offset, acknowledge types)]
Acknowledgements = Mapping[tuple[bytes, int], list[tuple[int, int, list[int]]]]


class LogReads(Protocol):
    """What the manager asks of the replica manager (apis/share_services.py adapts it)."""

    def leader_partition(self, topic: str, index: int) -> Any:
        """The partition led here (its log_start_offset, high_watermark, leader_epoch), or the Kafka error."""
        ...

    def fetch(self, reads: list[tuple[Any, int]], max_bytes: int, min_bytes: int, max_wait_ms: int,
              read_committed: bool, respond: Callable[[list[Any]], None]) -> None:
        """Read each (partition, offset) as a Fetch does (up to the last stable offset, with the aborted
        transactions, when read_committed), waiting for min_bytes up to max_wait_ms; respond with reads carrying
        error_code, data (FetchDataInfo) and log_start_offset, in order."""
        ...


class StatePersister(Protocol):
    """Where share-partition states are kept: the share coordinator (one broker) or its RPCs (a cluster)."""

    def read(self, key: ShareKey, leader_epoch: int = -1) -> ShareState | None: ...

    def write(self, key: ShareKey, start_offset: int, batches: Iterable[StateBatch], delivery_complete_count: int = -1,
              state_epoch: int | None = None, leader_epoch: int = -1) -> Any: ...

    def initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> None: ...

    def summaries(self, group_id: str, partitions: Iterable[tuple[bytes, int]]
                  ) -> dict[tuple[bytes, int], ShareState]: ...

    def delete(self, keys: Iterable[ShareKey]) -> None: ...

    def shutdown(self) -> None: ...


@dataclass(slots=True)
class PartitionResult:
    """One partition's part of a ShareFetch or ShareAcknowledge answer."""

    topic_id: bytes
    partition: int
    error_code: int = ErrorCode.NONE
    error_message: str | None = None
    acknowledge_error_code: int = ErrorCode.NONE
    acknowledge_error_message: str | None = None
    records: Any = b""  # bytes or a FileRegion of the log
    acquired: list[AcquiredRecords] = field(default_factory=list)
    leader_epoch: int = -1


@dataclass(slots=True)
class ShareSession:
    epoch: int
    partitions: list[tuple[bytes, int]]
    connection_id: str = ""  # the connection that opened it: its close ends the session
    errored: set[tuple[bytes, int]] = field(default_factory=set)  # answered with an error last time: answered again


class SharePartitionManager:
    def __init__(self, config: GroupConfig, logs: LogReads, topics: TopicImage, timer: Timer,
                 persister: StatePersister, group_config: Callable[[str, str], str | None],
                 max_share_sessions: int = MAX_SHARE_SESSIONS) -> None:
        self.config = config
        self.logs = logs
        self.topics = topics
        self.timer = timer
        self.persister = persister
        self.max_share_sessions = max_share_sessions
        self._group_config = group_config  # (group id, key) -> the group's config value, if set
        self._lock = threading.RLock()
        self._partitions: dict[ShareKey, SharePartition] = {}
        self._sessions: dict[tuple[str, str], ShareSession] = {}

    def _delivery_count_limit(self, group_id: str) -> int:
        value = self._group_config(group_id, "share.delivery.count.limit")
        return int(value) if value is not None else self.config.share_delivery_count_limit

    def lock_duration_ms(self, group_id: str) -> int:
        value = self._group_config(group_id, "share.record.lock.duration.ms")
        return int(value) if value is not None else self.config.share_record_lock_duration_ms

    # ---- sessions ------------------------------------------------------------------------------------------------

    def _session(self, group_id: str, member_id: str, epoch: int, added: Iterable[tuple[bytes, int]],
                 forgotten: Iterable[tuple[bytes, int]], has_acks: bool, connection_id: str = "") -> ShareSession:
        key = (group_id, member_id)
        if epoch == INITIAL_EPOCH:
            if has_acks:
                raise InvalidRequestError("acknowledgements cannot be sent with the initial share session epoch")
            self._sessions.pop(key, None)
            if len(self._sessions) >= self.max_share_sessions:
                log.warning("no share session for member %s of group %s: this broker holds %d, its "
                            "group.share.max.share.sessions", member_id, group_id, len(self._sessions))
                raise ShareSessionLimitReachedError(
                    f"the share session limit of {self.max_share_sessions} (group.share.max.share.sessions) is "
                    "reached on this broker")
            session = self._sessions[key] = ShareSession(1, list(dict.fromkeys(added)), connection_id)
            return session
        session = self._sessions.get(key)
        if session is None:
            raise ShareSessionNotFoundError(f"no share session for member {member_id} of group {group_id}")
        if epoch == FINAL_EPOCH:
            return session
        if epoch != session.epoch:
            raise InvalidShareSessionEpochError(f"share session epoch {epoch} is not {session.epoch}")
        session.epoch += 1
        gone = set(forgotten)
        session.partitions = [tp for tp in dict.fromkeys([*session.partitions, *added]) if tp not in gone]
        return session

    def connection_closed(self, connection_id: str) -> None:
        """A client's connection closed (a member killed, or gone): the share sessions it opened end, and what
        their members hold goes back to the others at once (Kafka's releaseSession), on the timer thread. The
        network thread that calls this takes no lock of the manager's: in a cluster its holder may be waiting for
        a persister write whose acks=all needs this very network thread to answer the followers' fetches."""
        def release() -> None:
            with self._lock:
                for group_id, member_id in [key for key, session in self._sessions.items()
                                            if session.connection_id == connection_id]:
                    log.info("share session of member %s of group %s ends: its connection %s closed", member_id,
                             group_id, connection_id)
                    self._close(group_id, member_id)

        self.timer.schedule(("share-connection-closed", connection_id), 0, release)

    def _close(self, group_id: str, member_id: str) -> None:
        """The final epoch: the session goes, and the member's records go back to the others."""
        session = self._sessions.pop((group_id, member_id), None)
        for topic_id, index in session.partitions if session else ():
            key = (group_id, topic_id, index)
            partition = self._partitions.get(key)
            if partition is not None and partition.release_member(member_id):
                self._persist_quietly(key, partition, f"member {member_id} closed its share session")
        if not any(g == group_id for g, _ in self._sessions):
            self._drop(key for key in self._partitions if key[0] == group_id)

    def close(self) -> None:
        """The broker shuts down (Kafka's SharePartitionManager.close): no lock expiry or fetch wait of ours fires
        any more, and the persister stops (its connections close)."""
        self.timer.cancel_where(lambda key: isinstance(key, tuple) and key[0] in TIMER_KINDS)
        self.persister.shutdown()

    # ---- the requests --------------------------------------------------------------------------------------------

    def fetch(self, group_id: str, member_id: str, epoch: int, requested: list[tuple[bytes, int]],
              forgotten: list[tuple[bytes, int]], acknowledgements: Acknowledgements, max_wait_ms: int,
              min_bytes: int, max_bytes: int, max_records: int,
              respond: Callable[[int, str | None, list[PartitionResult]], None], connection_id: str = "",
              record_limit: bool = False, renew_only: bool = False) -> None:
        """ShareFetch: answered through respond(error code, message, partitions), now or from the purgatory;
        `record_limit`: never more than max_records offsets, batches split (else whole batches); `renew_only`
        (IsRenewAck): the acknowledgements renew locks, and nothing is fetched."""
        with self._lock:
            try:
                session = self._session(group_id, member_id, epoch, requested, forgotten, bool(acknowledgements),
                                        connection_id)
            except KafkaError as exc:
                respond(exc.code, str(exc), [])
                return
            results = self._acknowledge(group_id, member_id, acknowledgements)
            if epoch == FINAL_EPOCH or renew_only:
                if epoch == FINAL_EPOCH:
                    self._close(group_id, member_id)
                respond(ErrorCode.NONE, None, list(results.values()))
                return
            # listed whatever comes of the fetch: the partitions acknowledged, every partition of a new session
            listed = set(results) if epoch != INITIAL_EPOCH else set(session.partitions)
            reads: list[tuple[PartitionResult, Any, int]] = []
            for topic_id, index in session.partitions:
                result = results.setdefault((topic_id, index), PartitionResult(topic_id, index))
                try:
                    partition, log_partition = self._share_partition(group_id, topic_id, index)
                except KafkaError as exc:
                    result.error_code, result.error_message = exc.code, str(exc)
                    continue
                result.leader_epoch = log_partition.leader_epoch
                offset = partition.next_fetch_offset()
                if offset is not None:
                    reads.append((result, log_partition, offset))
            answered = list(results.values())

        def acquire(done: list[Any]) -> None:
            with self._lock:
                remaining = max_records
                for (result, _, _), read in zip(reads, done, strict=False):
                    if read.error_code:
                        result.error_code = read.error_code
                    elif read.data is not None and remaining > 0:
                        self._acquire(group_id, member_id, result, read, remaining, record_limit)
                        remaining -= sum(r.last_offset - r.first_offset + 1 for r in result.acquired)
                answer = _must_respond(session, answered, listed)
            respond(ErrorCode.NONE, None, answer)

        if not reads:
            if max_wait_ms > 0 and not any(r.error_code or r.acknowledge_error_code for r in answered):
                self.timer.schedule(("share-fetch-wait", id(answered)), max_wait_ms, lambda: acquire([]))
            else:
                acquire([])
            return
        self.logs.fetch([(partition, offset) for _, partition, offset in reads], max_bytes, min_bytes, max_wait_ms,
                        self._group_config(group_id, "share.isolation.level") == READ_COMMITTED, acquire)

    def acknowledge(self, group_id: str, member_id: str, epoch: int, acknowledgements: Acknowledgements
                    ) -> tuple[int, str | None, list[PartitionResult]]:
        """ShareAcknowledge: (error code, message, partitions)."""
        with self._lock:
            try:
                if epoch == INITIAL_EPOCH:
                    raise InvalidShareSessionEpochError("ShareAcknowledge cannot open a share session (epoch 0)")
                self._session(group_id, member_id, epoch, (), (), True)
            except KafkaError as exc:
                return exc.code, str(exc), []
            results = self._acknowledge(group_id, member_id, acknowledgements)
            if epoch == FINAL_EPOCH:
                self._close(group_id, member_id)
            return ErrorCode.NONE, None, list(results.values())

    def _acknowledge(self, group_id: str, member_id: str, acknowledgements: Acknowledgements
                     ) -> dict[tuple[bytes, int], PartitionResult]:
        results: dict[tuple[bytes, int], PartitionResult] = {}
        for (topic_id, index), batches in acknowledgements.items():
            result = results[(topic_id, index)] = PartitionResult(topic_id, index)
            key = (group_id, topic_id, index)
            try:
                partition = self._acknowledged_partition(group_id, topic_id, index)
                renewed = partition.acknowledge(member_id, batches)
                if renewed:
                    self._schedule_lock(key, partition.renew_lock(renewed), self.lock_duration_ms(group_id))
                self._persist(key, partition)
            except KafkaError as exc:
                result.acknowledge_error_code, result.acknowledge_error_message = exc.code, str(exc)
        return results

    def _acknowledged_partition(self, group_id: str, topic_id: bytes, index: int) -> SharePartition:
        try:
            return self._share_partition(group_id, topic_id, index)[0]
        except UninitializedSharePartitionError:
            # Kafka keeps a share-partition its fetch could not initialise in its cache, empty: an acknowledgement
            # finds none of its offsets in flight (SharePartition.acknowledge, checked on Kafka 4.3.1)
            raise InvalidRecordStateError(f"no offset of {topic_id.hex()}-{index} is in flight for group "
                                          f"{group_id}: its group coordinator has not initialised it") from None

    # ---- share-partitions ----------------------------------------------------------------------------------------

    def _share_partition(self, group_id: str, topic_id: bytes, index: int) -> tuple[SharePartition, Any]:
        """The share-partition and the log partition it reads; made (and its start persisted) at first use."""
        topic = self.topics.topic_by_id(topic_id)
        if topic is None or not 0 <= index < topic.partitions:
            raise UnknownTopicIdError(f"no partition {index} of a topic with id {topic_id.hex()}")
        log_partition = self.logs.leader_partition(topic.name, index)
        key = (group_id, topic_id, index)
        partition = self._partitions.get(key)
        if partition is None:
            state = self.persister.read(key, log_partition.leader_epoch)
            if state is None:
                # Kafka's leader gets the share coordinator's INVALID_REQUEST here, which its fetch answers as
                # UNKNOWN_SERVER_ERROR (SharePartition.fetchPersisterError); a member is only ever assigned
                # share-partitions its group coordinator initialised, so only a stray fetch meets this
                log.info("share group %s fetched %s-%d, which its group coordinator has not initialised", group_id,
                         topic.name, index)
                raise UninitializedSharePartitionError("Read operation on uninitialized share partition not allowed.")
            if state.start_offset == UNINITIALIZED_START_OFFSET:
                reset = self._group_config(group_id, "share.auto.offset.reset") or LATEST
                start = log_partition.log_start_offset if reset == EARLIEST else log_partition.high_watermark
                log.info("share group %s starts %s-%d at offset %d (share.auto.offset.reset=%s)", group_id,
                         topic.name, index, start, reset)
                partition = SharePartition(start, self._delivery_count_limit(group_id),
                                           self.config.share_partition_max_record_locks, (), state.state_epoch)
            else:
                partition = SharePartition(state.start_offset, self._delivery_count_limit(group_id),
                                           self.config.share_partition_max_record_locks, state.batches,
                                           state.state_epoch)
                log.info("share group %s resumes %s-%d at offset %d (state epoch %d, %d offsets in flight)", group_id,
                         topic.name, index, state.start_offset, state.state_epoch,
                         partition.end_offset - partition.start_offset)
            partition.leader_epoch = log_partition.leader_epoch
            self._partitions[key] = partition
        return partition, log_partition

    def _acquire(self, group_id: str, member_id: str, result: PartitionResult, read: Any, limit: int,
                 record_limit: bool) -> None:
        data = read.data.records
        chunk = data if isinstance(data, (bytes, bytearray, memoryview)) else os.pread(data.fileno, data.size,
                                                                                         data.position)
        spans = []
        aborted = set()
        aborted_txns = read.data.aborted_transactions or ()
        pos = 0
        while pos + BATCH_HEADER_SIZE <= len(chunk):
            header = read_header(chunk, pos)
            if pos + header.size > len(chunk):
                break
            spans.append((header.base_offset, header.last_offset))
            if header.is_transactional and not header.is_control and any(
                    a.producer_id == header.producer_id and a.first_offset <= header.base_offset <= a.last_offset
                    for a in aborted_txns):
                aborted.add(spans[-1])
            pos += header.size
        key = (group_id, result.topic_id, result.partition)
        partition = self._partitions.get(key)
        if partition is None or not spans:
            return
        result.acquired, lock_id = partition.acquire(member_id, spans, limit, read.log_start_offset, record_limit,
                                                     frozenset(aborted))
        if result.acquired:
            result.records = data
            self._schedule_lock(key, lock_id, self.lock_duration_ms(group_id))

    def _schedule_lock(self, key: ShareKey, lock_id: int, duration_ms: int) -> None:
        def expired() -> None:
            with self._lock:
                partition = self._partitions.get(key)
                if partition is not None and partition.expire_lock(lock_id):
                    self._persist_quietly(key, partition, "an acquisition lock expired")

        self.timer.schedule(("share-lock", key, lock_id), duration_ms, expired)

    def _persist(self, key: ShareKey, partition: SharePartition) -> None:
        try:
            self.persister.write(key, partition.start_offset, partition.state_batches(),
                                 partition.delivery_complete_count(), partition.state_epoch, partition.leader_epoch)
        except (FencedStateEpochError, FencedLeaderEpochError) as exc:
            log.info("share-partition %s is fenced (%s: reset by an admin, or led by a newer leader); it is read again "
                     "at its next fetch", key, type(exc).__name__)
            self._drop([key])
            raise

    def _persist_quietly(self, key: ShareKey, partition: SharePartition, why: str) -> None:
        try:
            self._persist(key, partition)
        except KafkaError as exc:
            log.warning("persisting share-partition %s after %s failed (%s); it is persisted with its next "
                        "change", key, why, exc)

    # ---- admin (DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups) ----------

    def start_offsets(self, group_id: str, partitions: Iterable[tuple[bytes, int]]
                      ) -> dict[tuple[bytes, int], tuple[int, int]]:
        """(topic id, partition) -> (start offset, offsets done past it) of the group's share-partitions named that
        have a state (the start offset -1 until the leader's first fetch resolves it)."""
        wanted = list(partitions)
        with self._lock:
            offsets = {tp: (state.start_offset, max(state.delivery_complete_count, 0))
                       for tp, state in self.persister.summaries(group_id, wanted).items()}
            for topic_id, index in wanted:
                partition = self._partitions.get((group_id, topic_id, index))
                if partition is not None:
                    offsets[(topic_id, index)] = (partition.start_offset, partition.delivery_complete_count())
            return offsets

    def reset(self, group_id: str, start_offsets: Mapping[tuple[bytes, int], int]) -> None:
        """Start the share-partitions at new offsets (AlterShareGroupOffsets, on an empty group): a new state epoch,
        nothing in flight."""
        with self._lock:
            for (topic_id, index), offset in start_offsets.items():
                key = (group_id, topic_id, index)
                previous = self.persister.read(key)
                self.persister.initialize(key, previous.state_epoch + 1 if previous else 0, offset)
                self._partitions.pop(key, None)
                log.info("share group %s: share-partition %s-%d reset to offset %d", group_id, topic_id.hex(), index,
                         offset)

    def forget(self, keys: Iterable[ShareKey]) -> None:
        """Drop share-partitions from memory (their state was changed through the share coordinator's APIs): each is
        made again from the stored state at its next fetch."""
        with self._lock:
            self._drop(keys)

    def leadership_lost(self, topic_id: bytes, index: int) -> None:
        """This broker no longer leads the topic partition: its share-partitions go from memory (what they hold
        is persisted; the new leader reads it, and so would this broker if it leads again)."""
        with self._lock:
            self._drop(key for key in self._partitions if key[1:] == (topic_id, index))

    def _drop(self, keys: Iterable[ShareKey]) -> None:
        for key in list(keys):
            self._partitions.pop(key, None)

    def delete_state(self, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> None:
        """Delete the group's share-partition states named (DeleteShareGroupState): those its group coordinator
        initialised."""
        with self._lock:
            keys = [(group_id, topic_id, index) for topic_id, index in partitions]
            self.persister.delete(keys)
            self._drop(keys)


def _must_respond(session: ShareSession, results: list[PartitionResult], always: set[tuple[bytes, int]]
                  ) -> list[PartitionResult]:
    """The partitions a ShareFetch answer lists (Kafka's ShareSessionContext and
    CachedSharePartition.maybeUpdateResponseData): those `always` listed (acknowledged in the request, or all of a
    new session), those with records, an error or an acknowledgement error, and, once, one answered with an error
    last time (so that the client sees it cleared)."""
    listed = []
    for result in results:
        tp = (result.topic_id, result.partition)
        failed = bool(result.error_code or result.acknowledge_error_code)
        if result.acquired or failed or tp in session.errored or tp in always:
            listed.append(result)
        if failed:
            session.errored.add(tp)
        else:
            session.errored.discard(tp)
    return listed
