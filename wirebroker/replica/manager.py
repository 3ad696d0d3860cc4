"""The replica manager (Kafka's ReplicaManager): the partitions this broker hosts and the produce/fetch paths.

It creates a partition's log when the metadata says the partition exists, deletes it when the topic goes, and
serves the two hot paths: `append_records` (append each partition's batches, answer now or park the request in
the produce purgatory until acks=all is met) and `fetch_messages` (read each partition, answer now or park the
request in the fetch purgatory until min_bytes arrive or max_wait_ms passes). A fetch with a replica id is a
follower's: it reads up to the log end offset and tells the partition how far the follower got. Appends wake the
fetch purgatory; high-watermark moves, ISR changes and lost leaderships wake both purgatories.

Transaction markers (`append_txn_markers`, Kafka's appendRecords with origin COORDINATOR and requiredAcks=-1, as
handleWriteTxnMarkersRequest calls it): one COMMIT/ABORT control batch per partition, checked against producer state
(INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED), answered once the high watermark passes it. The
WriteTxnMarkers API and the group coordinator (its `__consumer_offsets` markers) write markers through it.

On a single broker every partition is led here with this broker as its only replica (`make_partitions`). In a
cluster the controller decides (`become_leader_or_follower` for LeaderAndIsr, `stop_replicas` for StopReplica, as
Kafka's ReplicaManager); `start_replication` gives the manager its follower fetchers, its AlterPartition channel
to the controller and the ISR expiration task.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING

from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo
from wirebroker.log.log import LogAppendInfo
from wirebroker.log.manager import LogManager
from wirebroker.log.producer_state import AppendOrigin
from wirebroker.log.verification_guard import VerificationGuard
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidRecordError,
    KafkaError,
    NotLeaderOrFollowerError,
    StaleControllerEpochError,
    UnknownTopicOrPartitionError,
)
from wirebroker.protocol.primitives import UUID_ZERO
from wirebroker.protocol.records import build_control_batch
from wirebroker.replica.delayed import (
    UNKNOWN_REPLICA_HIGH_WATERMARK,
    DelayedFetch,
    DelayedProduce,
    FetchPartitionStatus,
    ProducePartitionStatus,
)
from wirebroker.replica.partition import (
    ACKS_ALL,
    FETCH_LOG_END,
    REPLICA_LAG_TIME_MAX_MS_DEFAULT,
    LeaderAndIsr,
    Partition,
)
from wirebroker.replica.purgatory import DelayedOperationPurgatory

if TYPE_CHECKING:  # a cluster member's parts (server/cluster_member.py): a single node never imports them
    from wirebroker.replica.alter_partition import AlterPartitionManager
    from wirebroker.replica.fetcher_manager import InitialFetchState, ReplicaFetcherManager

log = logging.getLogger(__name__)

CONSUMER_REPLICA_ID = -1
NO_EPOCH = -1  # StopReplica before v3 carries no leader epoch: no check
EPOCH_DURING_DELETE = -2  # Kafka's LeaderAndIsr.EpochDuringDelete: a topic deletion stops every replica
INITIAL_CONTROLLER_EPOCH = 0


@dataclass(slots=True)
class AppendResult:
    error_code: int
    message: str | None = None
    info: LogAppendInfo | None = None  # set when the append succeeded


@dataclass(slots=True)
class FetchRead:
    """One partition's part of a fetch: what to read, then what was read."""

    topic: str
    partition_index: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    partition: Partition | None = None
    error_code: int = ErrorCode.NONE
    data: FetchDataInfo | None = None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    replica_high_watermark: int = UNKNOWN_REPLICA_HIGH_WATERMARK  # a follower's own (Fetch v18+, KIP-1166)


@dataclass(slots=True)
class Replication:
    """What a cluster member replicates with: set by `start_replication`, absent on a single broker."""

    fetcher_manager: ReplicaFetcherManager
    alter_partition: AlterPartitionManager
    leader_endpoint: Callable[[int], tuple[str, int] | None]  # broker id -> its inter-broker endpoint, if alive
    in_cluster: Callable[[str, int], bool] = lambda topic, index: False  # the partition exists (metadata cache)

    def is_broker_alive(self, broker_id: int) -> bool:
        return self.leader_endpoint(broker_id) is not None


LeadershipListener = Callable[[list[Partition], list[Partition]], None]


@dataclass(frozen=True, slots=True)
class PartitionDecision:
    """One partition of a LeaderAndIsr request."""

    topic: str
    index: int
    topic_id: bytes
    state: LeaderAndIsr
    is_new: bool = False


@dataclass(frozen=True, slots=True)
class StopReplica:
    """One partition of a StopReplica request."""

    topic: str
    index: int
    leader_epoch: int = NO_EPOCH
    delete: bool = False


class ReplicaManager:
    def __init__(self, log_manager: LogManager, broker_log_config: LogConfig, node_id: int = 0,
                 replica_lag_time_max_ms: int = REPLICA_LAG_TIME_MAX_MS_DEFAULT) -> None:
        self.log_manager = log_manager
        self.broker_log_config = broker_log_config
        self.node_id = node_id
        self.replica_lag_time_max_ms = replica_lag_time_max_ms
        self._partitions: dict[tuple[str, int], Partition] = {}
        self._lock = threading.Lock()
        self.produce_purgatory = DelayedOperationPurgatory("Produce", log_manager.clock)  # the broker's clock
        self.fetch_purgatory = DelayedOperationPurgatory("Fetch", log_manager.clock)
        self.replication: Replication | None = None
        # A topic's config overrides in a cluster (the controller's store); a single broker passes TopicMetadata.
        self.topic_configs: Callable[[str], Mapping[str, str]] = lambda topic: {}
        self._isr_expiration_stop = threading.Event()
        self._state_change_lock = threading.Lock()  # Kafka's replicaStateChangeLock
        self.controller_epoch = INITIAL_CONTROLLER_EPOCH
        # Told (leaders, no longer leaders) after each LeaderAndIsr and StopReplica, as Kafka's onLeadershipChange
        # callback: the server wires the group coordinator here, so it follows __consumer_offsets leadership.
        self.leadership_listeners: list[LeadershipListener] = []

    def start_replication(self, replication: Replication) -> None:
        """Become a cluster member: follow leaders with fetcher threads, and as a leader check every
        replica.lag.time.max.ms / 2 for followers to drop from the ISR (Kafka's isr-expiration task)."""
        self.replication = replication
        threading.Thread(target=self._isr_expiration, name="isr-expiration", daemon=True).start()

    def _isr_expiration(self) -> None:
        under_replicated: list[str] = []
        while not self._isr_expiration_stop.wait(self.replica_lag_time_max_ms / 2000):
            for partition in self.all_partitions():
                try:
                    partition.maybe_shrink_isr()
                except Exception:
                    log.exception("checking the ISR of %s failed", partition)
            now_under = self.under_replicated_partitions()
            if now_under != under_replicated:
                log.info("Broker %d leads %d under-replicated partitions%s", self.node_id, len(now_under),
                         ": " + ", ".join(now_under) if now_under else "")
                under_replicated = now_under

    def under_replicated_partitions(self) -> list[str]:
        """The partitions led here whose ISR lacks some assigned replica (Kafka's UnderReplicatedPartitions)."""
        return sorted(f"{p.topic}-{p.index} (ISR {list(p.isr)} of {list(p.replicas)})" for p in self.all_partitions()
                      if p.is_leader and len(p.isr) < len(p.replicas))

    # ---- partitions ----------------------------------------------------------------------------------------

    def partition(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def online_partition(self, topic: str, index: int) -> Partition:
        partition = self._partitions.get((topic, index))
        if partition is None:
            if self.replication is not None and self.replication.in_cluster(topic, index):
                # Kafka's getPartitionOrError: the partition exists, on other brokers.
                raise NotLeaderOrFollowerError(f"Broker {self.node_id} is not a replica of {topic}-{index}")
            raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {topic}-{index}")
        return partition

    def leader_partition(self, topic: str, index: int) -> Partition:
        """The partition if this broker leads it (NOT_LEADER_OR_FOLLOWER otherwise)."""
        partition = self.online_partition(topic, index)
        partition.check_leader()
        return partition

    def partitions_of(self, topic: str) -> list[Partition]:
        return [p for (name, _), p in sorted(self._partitions.items()) if name == topic]

    def all_partitions(self) -> list[Partition]:
        return list(self._partitions.values())

    def log_config(self, topic: TopicMetadata) -> LogConfig:
        return self.broker_log_config.with_overrides(topic.configs)

    def new_partition(self, topic: str, index: int, topic_id: bytes, config: LogConfig) -> Partition:
        """Host a partition (its log created if missing), in no role until made leader or follower."""
        log_ = self.log_manager.get_or_create_log(topic, index, topic_id, config)
        replication = self.replication
        partition = Partition(topic, index, topic_id, log_, self.node_id, self.replica_lag_time_max_ms,
                              replication.alter_partition if replication else None, self._on_partition_state_change,
                              replication.is_broker_alive if replication else lambda broker_id: True)
        self._partitions[(topic, index)] = partition
        return partition

    def make_partitions(self, topic: TopicMetadata) -> None:
        """Single broker: lead every partition of the topic not hosted yet, this broker its only replica."""
        config = self.log_config(topic)
        alone = (self.node_id,)
        with self._lock:
            for index in range(topic.partitions):
                if (topic.name, index) not in self._partitions:
                    partition = self.new_partition(topic.name, index, topic.topic_id, config)
                    partition.make_leader(LeaderAndIsr(self.node_id, 0, alone, 0, alone))

    def update_topic_config(self, topic: TopicMetadata) -> None:
        config = self.log_config(topic)
        for partition in self.partitions_of(topic.name):
            partition.log.update_config(config)

    def remove_topic(self, topic: TopicMetadata) -> None:
        with self._lock:
            removed = [self._partitions.pop((topic.name, i)) for i in range(topic.partitions)
                       if (topic.name, i) in self._partitions]
        for partition in removed:
            self.delete_partition(partition)

    def remove_partition(self, topic: str, index: int) -> Partition | None:
        with self._lock:
            return self._partitions.pop((topic, index), None)

    def delete_partition(self, partition: Partition) -> None:
        """Delete the log of a partition no longer hosted; requests waiting on it finish now."""
        self.log_manager.delete_log(partition.topic, partition.index)
        partition.stop_hosting()

    def _on_partition_state_change(self, partition: Partition) -> None:
        key = (partition.topic, partition.index)
        self.produce_purgatory.check_and_complete(key)
        self.fetch_purgatory.check_and_complete(key)

    def shutdown(self) -> None:
        self._isr_expiration_stop.set()
        if self.replication is not None:
            self.replication.fetcher_manager.shutdown()
            self.replication.alter_partition.shutdown()
        self.produce_purgatory.shutdown()
        self.fetch_purgatory.shutdown()

    # ---- produce -------------------------------------------------------------------------------------------

    def append_records(
        self,
        entries: Sequence[tuple[str, int, memoryview | None]],
        acks: int,
        timeout_ms: int,
        respond: Callable[[list[AppendResult]], None],
        origin: AppendOrigin = AppendOrigin.CLIENT,
        verification_guards: Sequence[VerificationGuard] | None = None,
    ) -> None:
        """Append each (topic, partition, records) and call `respond` with one AppendResult per entry, in order:
        at once, or from the produce purgatory when acks=all has to wait for the high watermark.
        `verification_guards`, one per entry, come with a transactional produce verified at the coordinator."""
        guards = repeat(None) if verification_guards is None else verification_guards
        results = [self._append(topic, index, records, acks, origin, guard)
                   for (topic, index, records), guard in zip(entries, guards)]
        appended = [(entries[i], r) for i, r in enumerate(results) if r.error_code == ErrorCode.NONE]
        for (topic, index, _), _result in appended:
            self.fetch_purgatory.check_and_complete((topic, index))
        if acks != ACKS_ALL or not appended:
            respond(results)
            return
        statuses = [
            ProducePartitionStatus(self._partitions[(topic, index)], result.info.last_offset + 1, result)
            for (topic, index, _), result in appended
        ]

        def respond_when_acknowledged(done: list[ProducePartitionStatus]) -> None:
            for status in done:
                if status.error_code:
                    status.result.error_code = status.error_code
            respond(results)

        operation = DelayedProduce(timeout_ms, statuses, respond_when_acknowledged)
        self.produce_purgatory.try_complete_else_watch(operation, [(t, i) for (t, i, _), _ in appended])

    def append_txn_markers(self, producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool,
                           partitions: Sequence[tuple[str, int]], timeout_ms: int,
                           respond: Callable[[dict[tuple[str, int], int]], None]) -> None:
        """Write a transaction's COMMIT (else ABORT) marker to each (topic, partition) led here and call `respond`
        with the error code of each, once the high watermark passes every marker written (REQUEST_TIMED_OUT after
        `timeout_ms`)."""
        kind = "COMMIT" if commit else "ABORT"
        now = int(time.time() * 1000)
        entries = [(topic, index, memoryview(bytearray(build_control_batch(
            commit, producer_id, producer_epoch, coordinator_epoch, timestamp=now)))) for topic, index in partitions]

        def answer(results: list[AppendResult]) -> None:
            for (topic, index, _), result in zip(entries, results):
                if result.error_code:
                    log.warning("Writing the %s marker of producer %d (epoch %d, coordinator epoch %d) to %s-%d "
                                "failed: %s (%s)", kind, producer_id, producer_epoch, coordinator_epoch, topic, index,
                                ErrorCode(result.error_code).name, result.message)
            respond({(topic, index): result.error_code for (topic, index, _), result in zip(entries, results)})

        self.append_records(entries, ACKS_ALL, timeout_ms, answer, AppendOrigin.COORDINATOR)

    def _append(self, topic: str, index: int, records: memoryview | None, acks: int,
                origin: AppendOrigin, verification_guard: VerificationGuard | None = None) -> AppendResult:
        try:
            partition = self.online_partition(topic, index)
            if records is None:
                raise InvalidRecordError("the produce request carries no records for this partition")
            info = partition.append_records_as_leader(records, acks, origin, verification_guard)
            partition.bytes_in += len(records)
            partition.messages_in += info.num_messages
        except KafkaError as exc:
            return AppendResult(exc.code, str(exc))
        except Exception:
            log.exception("appending to %s-%d failed; answering UNKNOWN_SERVER_ERROR", topic, index)
            return AppendResult(ErrorCode.UNKNOWN_SERVER_ERROR, "unexpected error appending to the log")
        # No produce purgatory check here: an acks=all wait ends only when the high watermark moves, and the
        # partition's state-change callback checks both purgatories then (Kafka's addCompletePurgatoryAction).
        return AppendResult(ErrorCode.NONE, None, info)

    # ---- fetch ---------------------------------------------------------------------------------------------

    def fetch_messages(
        self,
        reads: list[FetchRead],
        max_bytes: int,
        min_bytes: int,
        max_wait_ms: int,
        isolation_level: int,
        respond: Callable[[list[FetchRead]], None],
        replica_id: int = CONSUMER_REPLICA_ID,
    ) -> None:
        """Read every partition and call `respond` with the reads filled in: at once when min_bytes are there,
        max_wait_ms is 0 or a partition failed; otherwise when enough bytes arrive or max_wait_ms passes.

        A follower's fetch (replica_id >= 0) reads up to the log end offset, and its fetch offsets are the
        follower's log end offsets, which may grow the ISR and move the high watermark."""
        if replica_id >= 0:
            isolation_level = FETCH_LOG_END
        read_bytes, errors = self._read_all(reads, max_bytes, isolation_level, replica_id)
        # KIP-1166: a follower whose high watermark is behind the leader's learns the new one at once.
        follower_behind = replica_id >= 0 and any(r.high_watermark > r.replica_high_watermark for r in reads)
        if max_wait_ms <= 0 or not reads or read_bytes >= min_bytes or errors or follower_behind:
            _count_bytes_out(reads, replica_id)
            respond(reads)
            return
        statuses = [FetchPartitionStatus(r.partition, r.fetch_offset, r.replica_high_watermark)
                    for r in reads if r.partition is not None]

        def complete() -> None:
            self._read_all(reads, max_bytes, isolation_level, replica_id)
            _count_bytes_out(reads, replica_id)
            respond(reads)

        operation = DelayedFetch(max_wait_ms, min_bytes, isolation_level, statuses, complete)
        self.fetch_purgatory.try_complete_else_watch(operation, [(r.topic, r.partition_index) for r in reads])

    def _read_all(self, reads: list[FetchRead], max_bytes: int, isolation_level: int,
                  replica_id: int) -> tuple[int, bool]:
        """Fill in each read; the first partition with data may exceed the limits by one batch (KIP-74).
        Returns the bytes read and whether any partition failed."""
        remaining = max_bytes
        failed = False
        for read in reads:
            read.error_code = ErrorCode.NONE
            read.data = None
            try:
                partition = read.partition or self.online_partition(read.topic, read.partition_index)
                read.partition = partition
                partition.check_leader()
                partition.check_leader_epoch(read.current_leader_epoch)
                min_one_message = remaining == max_bytes
                data = partition.read(read.fetch_offset, min(read.max_bytes, max(remaining, 0)),
                                      isolation_level, min_one_message)
                if data.first_entry_incomplete:  # a partial batch would stop a consumer: none at all (KIP-74)
                    data = FetchDataInfo(data.fetch_offset_metadata, b"")
                read.data = data
                if replica_id >= 0:  # a fetch offset the read accepted is the follower's log end offset
                    partition.update_follower_fetch_state(replica_id, read.fetch_offset)
                partition_log = partition.log  # the log's own properties: one call each, not two
                read.high_watermark = partition_log.high_watermark
                read.last_stable_offset = partition_log.last_stable_offset
                read.log_start_offset = partition_log.log_start_offset
            except KafkaError as exc:
                read.error_code = exc.code
                failed = True
                continue
            remaining -= len(read.data.records)
        return max_bytes - remaining, failed

    # ---- the controller's decisions (Kafka's becomeLeaderOrFollower and stopReplicas) -----------------------

    def check_controller_epoch(self, controller_id: int, controller_epoch: int, request: str) -> None:
        """Refuse a request from a controller older than the newest one seen; remember a newer one."""
        with self._state_change_lock:
            self._fence(controller_id, controller_epoch, request)

    def _fence(self, controller_id: int, controller_epoch: int, request: str) -> None:
        if controller_epoch < self.controller_epoch:
            log.warning("Ignoring %s from controller %d: its controller epoch %d is older than %d", request,
                        controller_id, controller_epoch, self.controller_epoch)
            raise StaleControllerEpochError(
                f"{request} from controller {controller_id} with controller epoch {controller_epoch} is stale: "
                f"the latest known controller epoch is {self.controller_epoch}")
        self.controller_epoch = controller_epoch

    def become_leader_or_follower(self, controller_id: int, controller_epoch: int,
                                  decisions: Sequence[PartitionDecision],
                                  live_leaders: Mapping[int, tuple[str, int]] | None = None
                                  ) -> dict[tuple[str, int], int]:
        """Apply a LeaderAndIsr request: per partition, an error code (NONE when applied). A follower fetches from
        its leader's inter-broker endpoint in the metadata cache, else the one the request's live leaders give."""
        with self._state_change_lock:
            self._fence(controller_id, controller_epoch, "LeaderAndIsr")
            errors: dict[tuple[str, int], int] = {}
            leading, following = [], []
            for decision in decisions:
                key = (decision.topic, decision.index)
                errors[key] = self._admit(controller_id, decision)
                if errors[key] == ErrorCode.NONE:
                    (leading if decision.state.leader == self.node_id else following).append(decision)
            self._make_leaders(leading)
            self._make_followers(following, live_leaders or {})
            if self.replication is not None:
                self.replication.fetcher_manager.shutdown_idle_fetcher_threads()
            self._tell_leadership_listeners([self._partitions[(d.topic, d.index)] for d in leading],
                                            [self._partitions[(d.topic, d.index)] for d in following])
            return errors

    def _tell_leadership_listeners(self, leaders: list[Partition], not_leaders: list[Partition]) -> None:
        for listener in self.leadership_listeners:
            try:
                listener(leaders, not_leaders)
            except Exception:
                log.exception("a leadership change listener failed for leaders %s and followers %s",
                              [str(p) for p in leaders], [str(p) for p in not_leaders])

    def _admit(self, controller_id: int, decision: PartitionDecision) -> int:
        """Whether a partition's new state applies here (Kafka's checks, in Kafka's order), hosting it if new."""
        name = f"{decision.topic}-{decision.index}"
        partition = self._partitions.get((decision.topic, decision.index))
        if partition is not None and decision.topic_id != UUID_ZERO and partition.topic_id != UUID_ZERO \
                and partition.topic_id != decision.topic_id:
            log.error("LeaderAndIsr from controller %d names topic id %s for %s, which has %s here", controller_id,
                      decision.topic_id.hex(), name, partition.topic_id.hex())
            return ErrorCode.INCONSISTENT_TOPIC_ID
        current_epoch = partition.leader_epoch if partition is not None else -1
        if decision.state.leader_epoch <= current_epoch:
            log.info("Ignoring LeaderAndIsr from controller %d for %s: its leader epoch %d is not newer than %d",
                     controller_id, name, decision.state.leader_epoch, current_epoch)
            return ErrorCode.STALE_CONTROLLER_EPOCH
        if self.node_id not in decision.state.replicas:
            log.warning("Ignoring LeaderAndIsr from controller %d for %s: broker %d is not in the replicas %s",
                        controller_id, name, self.node_id, list(decision.state.replicas))
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if partition is None:
            if not decision.is_new and self.log_manager.get_log(decision.topic, decision.index) is None:
                log.warning("%s is not new but has no log on broker %d (lost log dir?): the replica starts empty and "
                            "fetches everything from the leader", name, self.node_id)
            try:
                config = self.broker_log_config.with_overrides(self.topic_configs(decision.topic))
                with self._lock:
                    self.new_partition(decision.topic, decision.index, decision.topic_id, config)
            except KafkaError as exc:
                log.error("Cannot host %s for controller %d: %s", name, controller_id, exc)
                return exc.code
        return ErrorCode.NONE

    def _make_leaders(self, decisions: list[PartitionDecision]) -> None:
        if self.replication is not None:
            self.replication.fetcher_manager.remove_fetcher_for_partitions([(d.topic, d.index) for d in decisions])
        for decision in decisions:
            partition = self._partitions[(decision.topic, decision.index)]
            partition.make_leader(decision.state)
            log.info("Broker %d leads %s-%d at leader epoch %d from offset %d (high watermark %d): replicas %s, "
                     "ISR %s, partition epoch %d", self.node_id, decision.topic, decision.index,
                     decision.state.leader_epoch, partition.leader_epoch_start_offset, partition.high_watermark,
                     list(decision.state.replicas), list(decision.state.isr), decision.state.partition_epoch)

    def _make_followers(self, decisions: list[PartitionDecision], live_leaders: Mapping[int, tuple[str, int]]) -> None:
        from wirebroker.replica.fetcher_manager import InitialFetchState  # a cluster member has loaded it

        restart: dict[tuple[str, int], InitialFetchState] = {}
        for decision in decisions:
            key = (decision.topic, decision.index)
            partition = self._partitions[key]
            if not partition.make_follower(decision.state):
                continue
            leader = decision.state.leader
            endpoint = (self.replication.leader_endpoint(leader) or live_leaders.get(leader)
                        if self.replication is not None else None)
            log.info("Broker %d follows leader %d for %s-%d at leader epoch %d from offset %d%s", self.node_id,
                     leader, decision.topic, decision.index, decision.state.leader_epoch, partition.log_end_offset,
                     "" if endpoint else " (no fetcher: the leader is not alive, or this broker is not replicating)")
            if endpoint is not None:
                restart[key] = InitialFetchState(leader, endpoint[0], endpoint[1], decision.state.leader_epoch,
                                                 partition.log_end_offset)
        if self.replication is not None:
            self.replication.fetcher_manager.remove_fetcher_for_partitions([(d.topic, d.index) for d in decisions])
            self.replication.fetcher_manager.add_fetcher_for_partitions(restart)

    def stop_replicas(self, controller_id: int, controller_epoch: int,
                      partitions: Sequence[StopReplica]) -> dict[tuple[str, int], int]:
        """Apply a StopReplica request: stop fetching, and delete the logs the controller says to delete."""
        with self._state_change_lock:
            self._fence(controller_id, controller_epoch, "StopReplica")
            return self._stop_replicas(controller_id, partitions)

    def _stop_replicas(self, controller_id: int, partitions: Sequence[StopReplica]) -> dict[tuple[str, int], int]:
        errors: dict[tuple[str, int], int] = {}
        stopping = []
        for stop in partitions:
            key = (stop.topic, stop.index)
            partition = self._partitions.get(key)
            if partition is not None and stop.leader_epoch not in (EPOCH_DURING_DELETE, NO_EPOCH) \
                    and stop.leader_epoch < partition.leader_epoch:
                log.info("Ignoring StopReplica for %s-%d from controller %d: leader epoch %d is older than %d",
                         stop.topic, stop.index, controller_id, stop.leader_epoch, partition.leader_epoch)
                errors[key] = ErrorCode.FENCED_LEADER_EPOCH
                continue
            errors[key] = ErrorCode.NONE
            stopping.append(stop)
        if self.replication is not None:
            self.replication.fetcher_manager.remove_fetcher_for_partitions([(s.topic, s.index) for s in stopping])
        self._tell_leadership_listeners([], [p for p in (self._partitions.get((s.topic, s.index)) for s in stopping)
                                             if p is not None])
        for stop in stopping:
            if stop.delete:
                partition = self.remove_partition(stop.topic, stop.index)
                if partition is not None:
                    self.delete_partition(partition)
                else:
                    self.log_manager.delete_log(stop.topic, stop.index)
            log.info("Stopped replica %s-%d for controller %d%s", stop.topic, stop.index, controller_id,
                     ", log deleted" if stop.delete else "")
        return errors


def _count_bytes_out(reads: list[FetchRead], replica_id: int) -> None:
    """Kafka's BytesOutPerSec (a consumer's fetch) or ReplicationBytesOutPerSec (a follower's), per partition."""
    for read in reads:
        if read.data is not None:
            if replica_id >= 0:
                read.partition.replication_bytes_out += len(read.data.records)
            else:
                read.partition.bytes_out += len(read.data.records)
