"""One partition replica on this broker (Kafka's Partition): its log, its role, and as leader the in-sync replicas.

The controller decides (LeaderAndIsr) who leads at which leader epoch, the assigned replicas, the ISR and the
partition epoch (the version of that state); `make_leader` / `make_follower` apply a decision.

As leader (Kafka's makeLeader): the new epoch starts at the log end offset in the leader epoch cache, so a follower
that asks OffsetForLeaderEpoch for an older epoch learns where that epoch ended here. The leader tracks each
follower (follower_state.py) from its Fetch requests and keeps the high watermark at the smallest log end offset
of the in-sync replicas (`_maybe_increment_high_watermark`; it never moves back). A follower that reaches the high
watermark (and this epoch's start) is proposed for the ISR; one that has not caught up for replica.lag.time.max.ms
is proposed out of it (`maybe_shrink_isr`). Proposals go to the controller through the AlterPartition sender; until
it answers, the high watermark counts the larger of the two sets (Kafka's maximal ISR), and the committed ISR
changes only with the controller's answer. acks=all needs min.insync.replicas in the committed ISR before the
append (NOT_ENOUGH_REPLICAS) and in the maximal ISR when the high watermark passes it
(NOT_ENOUGH_REPLICAS_AFTER_APPEND).

As follower: batches fetched from the leader are appended as they are, and the high watermark is the leader's,
capped at our log end offset. Produce and consumer fetches get NOT_LEADER_OR_FOLLOWER.

On a single broker the partition is made leader with itself as the only replica, so the high watermark follows
the log end offset as soon as an append lands. Requests naming a leader epoch are checked against ours first
(KIP-320): an older epoch is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.

Changes that can complete waiting requests (a high watermark move, an ISR change, a lost leadership) call
`on_state_change` after the partition's lock is released, so the purgatories never run under it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from wirebroker.log.fetch_data import FetchDataInfo
from wirebroker.log.log import Log, LogAppendInfo
from wirebroker.log.producer_state import AppendOrigin
from wirebroker.log.verification_guard import VerificationGuard
from wirebroker.protocol.errors import (
    ErrorCode,
    FencedLeaderEpochError,
    NotEnoughReplicasError,
    NotLeaderOrFollowerError,
    UnknownLeaderEpochError,
)
from wirebroker.protocol.records import BATCH_HEADER_SIZE, read_header
from wirebroker.replica.follower_state import FollowerState

log = logging.getLogger(__name__)

NO_EPOCH = -1
NO_LEADER = -1
ACKS_ALL = -1
_ALL_BYTES = 2**31 - 1
READ_UNCOMMITTED = 0
READ_COMMITTED = 1
FETCH_LOG_END = -1  # a follower's fetch: up to the log end offset (Kafka's FetchIsolation.LOG_END)
REPLICA_LAG_TIME_MAX_MS_DEFAULT = 30000


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    """The controller's state of a partition: a LeaderAndIsr partition state, or an AlterPartition answer."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...] = ()


class AlterPartitionSender(Protocol):
    """Sends a leader's ISR proposal to the controller and calls `partition.on_alter_partition_response` later."""

    def submit(self, partition: Partition, proposed_isr: tuple[int, ...]) -> None: ...


def _now_ms() -> int:
    return int(time.time() * 1000)


class Partition:
    def __init__(self, topic: str, index: int, topic_id: bytes, log: Log, local_broker_id: int = 0,
                 replica_lag_time_max_ms: int = REPLICA_LAG_TIME_MAX_MS_DEFAULT,
                 alter_partition: AlterPartitionSender | None = None,
                 on_state_change: Callable[[Partition], None] | None = None,
                 is_broker_alive: Callable[[int], bool] = lambda broker_id: True) -> None:
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.log = log
        self.local_broker_id = local_broker_id
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self._alter_partition = alter_partition
        self._on_state_change = on_state_change
        self._is_broker_alive = is_broker_alive
        self._lock = threading.RLock()
        self.leader_id = NO_LEADER
        self.leader_epoch = NO_EPOCH
        self.partition_epoch = NO_EPOCH
        self.leader_epoch_start_offset: int | None = None
        self.replicas: tuple[int, ...] = ()
        self.isr: tuple[int, ...] = ()  # committed by the controller
        self.pending_isr: tuple[int, ...] | None = None  # proposed, not answered yet
        self.followers: dict[int, FollowerState] = {}
        # Kafka's BrokerTopicMetrics, counted here by the replica manager and summed per topic when metrics are
        # read (server/web/metrics.py): plain ints, since under the GIL an int attribute's += is not interrupted by
        # a thread switch (CPython checks for one only at calls and backward jumps).
        self.bytes_in = self.messages_in = self.bytes_out = self.replication_bytes_out = 0

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    # ---- offsets -------------------------------------------------------------------------------------------

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    # ---- role ----------------------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.local_broker_id

    @property
    def maximal_isr(self) -> frozenset[int]:
        """The committed ISR joined with a proposal in flight: what the high watermark waits for."""
        return frozenset(self.isr) | frozenset(self.pending_isr or ())

    def make_leader(self, state: LeaderAndIsr) -> bool:
        """Lead at the state's epoch; True if this broker was not the leader before."""
        with self._lock:
            is_new_leader = not self.is_leader
            now = _now_ms()
            end = self.log.log_end_offset
            self._assign(state)
            self.leader_id = self.local_broker_id
            self.leader_epoch_start_offset = end
            self.log.leader_epoch_cache.assign(state.leader_epoch, end)
            followers = {}
            for replica in state.replicas:
                if replica == self.local_broker_id:
                    continue
                follower = self.followers.get(replica) if not is_new_leader else None
                if follower is None:
                    follower = FollowerState(replica)
                    follower.reset(now, end, replica in state.isr)
                followers[replica] = follower
            self.followers = followers
            self._maybe_increment_high_watermark(now)
        self._state_changed()
        return is_new_leader

    def make_follower(self, state: LeaderAndIsr) -> bool:
        """Follow `state.leader`; True if the leader or its epoch changed (the fetcher must start over)."""
        with self._lock:
            changed = state.leader != self.leader_id or state.leader_epoch != self.leader_epoch
            self._assign(state)
            self.leader_id = state.leader
            self.leader_epoch_start_offset = None
            self.followers = {}
        self._state_changed()  # acks=all requests waiting here are answered NOT_LEADER_OR_FOLLOWER
        return changed

    def stop_hosting(self) -> None:
        """The partition leaves this broker (its log is deleted): no longer leader or follower, and requests waiting
        on it are answered (NOT_LEADER_OR_FOLLOWER for acks=all)."""
        with self._lock:
            self.leader_id = NO_LEADER
            self.followers = {}
            self.pending_isr = None
        self._state_changed()

    def _assign(self, state: LeaderAndIsr) -> None:
        self.leader_epoch = state.leader_epoch
        self.partition_epoch = state.partition_epoch
        self.replicas = tuple(state.replicas)
        self.isr = tuple(state.isr)
        self.pending_isr = None

    def check_leader(self) -> None:
        if not self.is_leader:
            raise NotLeaderOrFollowerError(
                f"Broker {self.local_broker_id} is not the leader of {self.topic}-{self.index} "
                f"(leader {self.leader_id}, epoch {self.leader_epoch})")

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        if current_leader_epoch == NO_EPOCH or current_leader_epoch == self.leader_epoch:
            return
        if current_leader_epoch < self.leader_epoch:
            raise FencedLeaderEpochError(
                f"{self}: the request's leader epoch {current_leader_epoch} is older than {self.leader_epoch}"
            )
        raise UnknownLeaderEpochError(
            f"{self}: the request's leader epoch {current_leader_epoch} is newer than {self.leader_epoch}"
        )

    # ---- leader: appends and acknowledgements --------------------------------------------------------------

    def append_records_as_leader(self, records: memoryview, required_acks: int = 1,
                                 origin: AppendOrigin = AppendOrigin.CLIENT,
                                 verification_guard: VerificationGuard | None = None) -> LogAppendInfo:
        """Append batches at our leader epoch (a produce request's, or the coordinators' and transaction markers'
        with `origin` COORDINATOR); the high watermark moves if the ISR allows. `verification_guard`: that of a
        transactional produce verified at the coordinator (Log.append_as_leader)."""
        with self._lock:
            self.check_leader()
            min_isr = self.log.config.min_insync_replicas
            if required_acks == ACKS_ALL and len(self.isr) < min_isr:
                raise NotEnoughReplicasError(
                    f"The size of the current ISR {list(self.isr)} is insufficient to satisfy the min.isr "
                    f"requirement of {min_isr} for partition {self.topic}-{self.index}")
            info = self.log.append_as_leader(records, self.leader_epoch, _now_ms(), origin, verification_guard)
            moved = self._maybe_increment_high_watermark(_now_ms())
        if moved:
            self._state_changed()
        return info

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, int]:
        """(done, error code) for an acks=all append ending at `required_offset` (Kafka's method of this name)."""
        if not self.is_leader:
            return False, ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.log.high_watermark < required_offset:
            return False, ErrorCode.NONE
        if len(self.maximal_isr) < self.log.config.min_insync_replicas:
            return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return True, ErrorCode.NONE

    # ---- leader: followers and the ISR ---------------------------------------------------------------------

    def update_follower_fetch_state(self, replica_id: int, fetch_offset: int) -> None:
        """A follower fetched at `fetch_offset` (its log end offset): maybe grow the ISR, maybe move the HW."""
        with self._lock:
            self.check_leader()
            follower = self.followers.get(replica_id)
            if follower is None:
                raise NotLeaderOrFollowerError(f"Broker {replica_id} is not a replica of {self.topic}-{self.index} "
                                               f"(replicas {list(self.replicas)})")
            now = _now_ms()
            follower.update_fetch_state(fetch_offset, self.log.log_end_offset, now)
            self._maybe_expand_isr(follower)
            moved = self._maybe_increment_high_watermark(now)
        if moved:
            self._state_changed()

    def _maybe_expand_isr(self, follower: FollowerState) -> None:
        if self.pending_isr is not None or follower.broker_id in self.isr:
            return
        start = self.leader_epoch_start_offset
        if follower.log_end_offset >= self.log.high_watermark and start is not None and follower.log_end_offset >= start:
            log.info("Expanding ISR of %s-%d from %s to %s (follower %d reached offset %d)", self.topic, self.index,
                     list(self.isr), list(self.isr) + [follower.broker_id], follower.broker_id,
                     follower.log_end_offset)
            self._propose_isr(self.isr + (follower.broker_id,))

    def maybe_shrink_isr(self) -> None:
        """Propose the ISR without the followers that have not caught up for replica.lag.time.max.ms."""
        with self._lock:
            if not self.is_leader or self.pending_isr is not None:
                return
            now, end = _now_ms(), self.log.log_end_offset
            lagging = [r for r in self.isr if r != self.local_broker_id and not (
                r in self.followers and self.followers[r].is_caught_up(end, now, self.replica_lag_time_max_ms))]
            if not lagging:
                return
            shrunk = tuple(r for r in self.isr if r not in lagging)
            log.info("Shrinking ISR of %s-%d from %s to %s: out-of-sync replicas %s (%s), leader high watermark %d, "
                     "log end offset %d", self.topic, self.index, list(self.isr), list(shrunk), lagging,
                     ", ".join(f"{r}: log end offset {self.followers[r].log_end_offset}, last caught up "
                               f"{now - self.followers[r].last_caught_up_time_ms} ms ago"
                               for r in lagging if r in self.followers),
                     self.log.high_watermark, end)
            self._propose_isr(shrunk)

    def _propose_isr(self, proposed: tuple[int, ...]) -> None:
        if self._alter_partition is None:
            log.warning("ISR change of %s-%d to %s not proposed: no controller channel", self.topic, self.index,
                        list(proposed))
            return
        self.pending_isr = proposed
        self._alter_partition.submit(self, proposed)

    def on_alter_partition_response(self, proposed: tuple[int, ...], error_code: int,
                                    result: LeaderAndIsr | None) -> None:
        """The controller's answer to our proposal: commit its ISR and partition epoch, or drop the proposal."""
        with self._lock:
            if self.pending_isr is None or self.pending_isr != proposed:
                return  # a newer LeaderAndIsr replaced the state this proposal was based on
            self.pending_isr = None
            if error_code or result is None:
                log.warning("The controller refused the ISR %s for %s-%d: %s; keeping %s (partition epoch %d)",
                            list(proposed), self.topic, self.index, ErrorCode(error_code).name, list(self.isr),
                            self.partition_epoch)
            elif result.leader_epoch != self.leader_epoch or result.partition_epoch < self.partition_epoch:
                log.info("Ignoring the ISR %s for %s-%d from the controller: leader epoch %d, partition epoch %d, "
                         "ours %d and %d", list(result.isr), self.topic, self.index, result.leader_epoch,
                         result.partition_epoch, self.leader_epoch, self.partition_epoch)
            else:
                log.info("ISR of %s-%d updated to %s, partition epoch %d (leader %d, leader epoch %d)", self.topic,
                         self.index, list(result.isr), result.partition_epoch, self.local_broker_id,
                         self.leader_epoch)
                self.isr = tuple(result.isr)
                self.partition_epoch = result.partition_epoch
            self._maybe_increment_high_watermark(_now_ms())
        self._state_changed()

    def _maybe_increment_high_watermark(self, now: int) -> bool:
        """HW = the smallest log end offset of the maximal ISR, and of caught-up followers about to join it.

        A follower outside the ISR is waited for only while its broker is alive (Kafka's isReplicaIsrEligible):
        a dead broker's last fetch keeps it "caught up" for replica.lag.time.max.ms, which must not hold back the
        high watermark of the partitions it left.
        """
        if not self.is_leader:
            return False
        end = self.log.log_end_offset
        high_watermark = end
        maximal = self.maximal_isr
        for replica, follower in self.followers.items():
            if follower.log_end_offset < high_watermark and (
                    replica in maximal or (follower.is_caught_up(end, now, self.replica_lag_time_max_ms)
                                           and self._is_broker_alive(replica))):
                high_watermark = follower.log_end_offset
        if high_watermark > self.log.high_watermark:
            self.log.update_high_watermark(high_watermark)
            return True
        return False

    def _state_changed(self) -> None:
        if self._on_state_change is not None:
            self._on_state_change(self)

    # ---- follower ------------------------------------------------------------------------------------------

    def append_records_as_follower(self, records: memoryview, leader_high_watermark: int,
                                   leader_log_start_offset: int = -1) -> LogAppendInfo | None:
        """Append what the leader sent; our high watermark is the leader's, capped at our log end offset, and our
        log start offset follows the leader's as far as our high watermark (records it deleted go here too)."""
        with self._lock:
            if self.is_leader:
                raise NotLeaderOrFollowerError(f"{self} is led here now; a stale fetch response is dropped")
            info = None
            if len(records):
                self._start_at_first_batch_if_empty(records)
                info = self.log.append_as_follower(records)
            self.log.update_high_watermark(min(leader_high_watermark, self.log.log_end_offset))
            if self.log.log_start_offset < leader_log_start_offset <= self.log.high_watermark:
                self.log.increment_log_start_offset(leader_log_start_offset)
            return info

    def _start_at_first_batch_if_empty(self, records: memoryview) -> None:
        """An empty log whose start falls inside the leader's first batch (DeleteRecords cut it) starts at that
        batch's base offset, as Kafka does on UnexpectedAppendOffsetException: the batch comes whole."""
        end = self.log.log_end_offset
        if end != self.log.log_start_offset or len(records) < BATCH_HEADER_SIZE:
            return
        first = read_header(records)
        if first.base_offset < end <= first.last_offset:
            log.info("%s-%d: the leader's first batch starts at %d, before our empty log's start %d; starting the "
                     "log there", self.topic, self.index, first.base_offset, end)
            self.log.truncate_fully_and_start_at(first.base_offset)

    def truncate_to(self, offset: int) -> None:
        with self._lock:
            self.log.truncate_to(offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        with self._lock:
            self.log.truncate_fully_and_start_at(offset)

    # ---- reads ---------------------------------------------------------------------------------------------

    def read(self, fetch_offset: int, max_bytes: int, isolation_level: int, min_one_message: bool) -> FetchDataInfo:
        committed = isolation_level == READ_COMMITTED
        if isolation_level == FETCH_LOG_END:
            upper_bound = None
        else:
            upper_bound = self.last_stable_offset if committed else self.high_watermark
        return self.log.read(fetch_offset, max_bytes, upper_bound, min_one_message,
                             include_aborted_transactions=committed)

    def bytes_available_after(self, fetch_offset: int, isolation_level: int) -> int:
        """How many bytes a fetch at `fetch_offset` could read now (the fetch purgatory's test).

        A read returns a file range, so measuring it copies nothing.
        """
        return len(self.read(fetch_offset, _ALL_BYTES, isolation_level, True).records)
