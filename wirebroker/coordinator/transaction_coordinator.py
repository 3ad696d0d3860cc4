"""The transaction coordinator (Kafka's TransactionCoordinator and TransactionStateManager, transaction protocols 1
and 2: the EndTxn's version picks one per request, as Kafka's TransactionVersion.transactionVersionForEndTxn).

It owns the transactional ids of the `__transaction_state` partitions this broker leads (an id lives in the partition
its hash names, as a group in `__consumer_offsets`): all of them on a single broker; in a cluster those it is
elected for (`on_election`, `on_resignation`). An id of a partition not owned is NOT_COORDINATOR, of one still
loading COORDINATOR_LOAD_IN_PROGRESS. The internal topic (creation, writes with acks=all, loading), the timers and
the partition of a key are the ones the group coordinator uses (internal_topic.py, timer.py).

Every change is prepared under the lock (the id gets a pending state: concurrent requests for it are
CONCURRENT_TRANSACTIONS), written to `__transaction_state` outside it, then applied (transaction_state.py). So:
- InitProducerId: a new id gets a producer id and epoch 0; an id with nothing open gets its epoch bumped (a new
  producer id when the epoch is exhausted), fencing the producer that had it; an id with an open transaction has it
  aborted with a bumped epoch first (the markers fence the zombie on every partition) and the new producer is told
  CONCURRENT_TRANSACTIONS until the abort is complete, then retries and gets the next epoch.
- AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with the partitions added (nothing written when all are in already).
  Under protocol 2 (KIP-890 part 2) the producer sends neither: the partition leaders add them as its records (and
  TxnOffsetCommit v5's offsets) arrive (transaction_partition_adds.py), with the same checks and answers.
- EndTxn: PrepareCommit or PrepareAbort is written and answered; the markers then go to every partition's leader
  (transaction_markers.py), and when all are written CompleteCommit or CompleteAbort. A retried EndTxn of a
  completed transaction is answered NONE; one of the other outcome INVALID_TXN_STATE.
- EndTxn under protocol 2 (v5, KIP-890 part 2): Prepare* is written with the epoch bumped (and a next producer id
  when the epoch is exhausted, taken at Complete*), the markers carry that epoch and transaction version 2, and the
  answer the producer id and epoch to go on with. A retry comes with the epoch before the bump (or the old id at its
  last epoch after a rotation); an abort is allowed with nothing open. The records are TransactionLogValue v1.
- Every `transaction.abort.timed.out.transaction.cleanup.interval.ms` an Ongoing transaction older than its timeout
  is aborted with a bumped epoch (its producer is fenced, as in Kafka); every
  `transaction.remove.expired.transaction.cleanup.interval.ms` an id idle past `transactional.id.expiration.ms` with
  nothing open is removed (a tombstone).
- A partition taken over is loaded from the log; transactions found in PrepareCommit or PrepareAbort get their
  markers sent again (Kafka's loadTransactionsForTxnTopicPartition), open ones are left to time out.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from wirebroker.coordinator import transaction_log
from wirebroker.coordinator.internal_topic import InternalTopicSpec
from wirebroker.coordinator.partition_ownership import (
    OwnedPartition,
    PartitionOwnership,
)
from wirebroker.coordinator.transaction_markers import TxnMarkers
from wirebroker.coordinator.transaction_state import (
    MAX_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TRANSACTION_VERSION_2,
    TopicPartition,
    TransactionMetadata,
    TransactionState,
    TxnTransit,
    is_epoch_exhausted,
)
from wirebroker.protocol.errors import (
    ConcurrentTransactionsError,
    InvalidProducerIdMappingError,
    InvalidRequestError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    KafkaError,
    NotCoordinatorError,
    ProducerFencedError,
    TransactionalIdNotFoundError,
)
from wirebroker.protocol.primitives import DecodeError

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC = "__transaction_state"
COMPLETION_RETRY_MS = 1000  # a CompleteCommit/CompleteAbort that could not be written is tried again after this
_S = TransactionState


@dataclass(frozen=True, slots=True)
class TransactionConfig:
    """The broker settings the transaction coordinator acts on, by Kafka's key names (Kafka's defaults)."""

    transactional_id_expiration_ms: int = 604_800_000
    transaction_max_timeout_ms: int = 900_000
    abort_timed_out_transaction_cleanup_interval_ms: int = 10_000
    remove_expired_transaction_cleanup_interval_ms: int = 3_600_000
    num_partitions: int = 50
    replication_factor: int = 3
    min_isr: int = 2
    segment_bytes: int = 100 * 1024 * 1024
    request_timeout_ms: int = 30_000  # a write to __transaction_state, a WriteTxnMarkers

    @classmethod
    def from_broker(cls, config: Any) -> TransactionConfig:
        return cls(
            transactional_id_expiration_ms=config["transactional.id.expiration.ms"],
            transaction_max_timeout_ms=config["transaction.max.timeout.ms"],
            abort_timed_out_transaction_cleanup_interval_ms=config[
                "transaction.abort.timed.out.transaction.cleanup.interval.ms"],
            remove_expired_transaction_cleanup_interval_ms=config[
                "transaction.remove.expired.transaction.cleanup.interval.ms"],
            num_partitions=config["transaction.state.log.num.partitions"],
            replication_factor=config["transaction.state.log.replication.factor"],
            min_isr=config["transaction.state.log.min.isr"],
            segment_bytes=config["transaction.state.log.segment.bytes"],
            request_timeout_ms=config["request.timeout.ms"],
        )

    def topic_spec(self) -> InternalTopicSpec:
        """`__transaction_state` as Kafka creates it (TransactionStateManager.transactionTopicConfigs)."""
        return InternalTopicSpec(TRANSACTION_STATE_TOPIC, self.num_partitions, self.replication_factor,
                                 self.request_timeout_ms,
                                 {"cleanup.policy": "compact", "compression.type": "uncompressed",
                                  "min.insync.replicas": str(self.min_isr),
                                  "segment.bytes": str(self.segment_bytes),
                                  "unclean.leader.election.enable": "false"},
                                 "transaction coordinator")


class StateLog(Protocol):
    """Where the coordinator's records go: `__transaction_state` (an InternalTopic) or, in tests, memory."""

    @property
    def num_partitions(self) -> int: ...

    def partition_for(self, key: str) -> int: ...

    def append_records(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> None: ...

    def read_all(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]: ...


class MarkerChannel(Protocol):
    def send(self, markers: TxnMarkers, on_done: Callable[[], None]) -> None: ...

    def start(self) -> None: ...

    def shutdown(self) -> None: ...


class Timer(Protocol):
    def now_ms(self) -> int: ...

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None: ...

    def start(self) -> None: ...

    def shutdown(self) -> None: ...


class TransactionCoordinator:
    def __init__(self, config: TransactionConfig, state_log: StateLog, timer: Timer, markers: MarkerChannel,
                 allocate_producer_id: Callable[[], int]) -> None:
        self.config = config
        self.state_log = state_log
        self.timer = timer
        self.markers = markers
        self._allocate_producer_id = allocate_producer_id
        self._lock = threading.RLock()
        self._owned = PartitionOwnership(TRANSACTION_STATE_TOPIC, self._lock, self._load,
                                         "transaction-coordinator-loader")
        self._txns: dict[str, TransactionMetadata] = {}

    # ---- lifecycle: the partitions this coordinator owns -----------------------------------------------------------

    def start(self, load_in_background: bool = True, own_every_partition: bool = True) -> None:
        self._owned.load_in_background = load_in_background
        self.timer.start()
        self.markers.start()
        self._every(self.config.abort_timed_out_transaction_cleanup_interval_ms, self.abort_timed_out_transactions)
        self._every(self.config.remove_expired_transaction_cleanup_interval_ms, self.remove_expired_transactional_ids)
        if own_every_partition:
            with self._owned.electing():  # one line once every partition has loaded
                for partition in range(self.state_log.num_partitions):
                    self.on_election(partition, 0)

    def shutdown(self) -> None:
        self.timer.shutdown()
        self.markers.shutdown()
        self._owned.shutdown()

    def _every(self, interval_ms: int, task: Callable[[], None]) -> None:
        def run() -> None:
            try:
                task()
            finally:
                self.timer.schedule(task.__name__, interval_ms, run)

        self.timer.schedule(task.__name__, interval_ms, run)

    def on_election(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads `partition` of `__transaction_state`: load its transactional ids."""
        self._owned.elect(partition, leader_epoch)

    def on_resignation(self, partition: int, leader_epoch: int | None = None) -> None:
        """This broker no longer leads `partition`: its ids are dropped from memory (the new leader loads them)."""
        with self._lock:
            if not self._owned.resign(partition, leader_epoch):
                return
            dropped = [txn_id for txn_id in self._txns if self.state_log.partition_for(txn_id) == partition]
            for txn_id in dropped:
                del self._txns[txn_id]
        log.log(logging.INFO if dropped else logging.DEBUG,
                "Unloaded %d transactional ids of %s-%d: this broker no longer leads it", len(dropped),
                TRANSACTION_STATE_TOPIC, partition)

    def _load(self, partition: int, load: OwnedPartition) -> None:
        loaded: dict[str, TransactionMetadata] = {}
        try:
            for key, value in self.state_log.read_all(partition):
                try:
                    record = transaction_log.decode(key, value)
                except DecodeError as exc:
                    log.error("skipping an unreadable record of %s-%d: %s", TRANSACTION_STATE_TOPIC, partition, exc)
                    continue
                if record.transit is None:
                    loaded.pop(record.transactional_id, None)
                else:
                    loaded[record.transactional_id] = TransactionMetadata(record.transactional_id, record.transit)
        except Exception:
            log.exception("loading %s-%d failed; its transactional ids start empty", TRANSACTION_STATE_TOPIC,
                          partition)
        with self._lock:
            if not self._owned.is_current(partition, load):
                return
            self._txns.update(loaded)
            load.loaded = True
            completing = [m for m in loaded.values() if m.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT)]
        for metadata in completing:
            self._send_markers(metadata, metadata.current)
        if loaded:
            log.info("Loaded %d transactional ids from %s-%d (%d completing)", len(loaded), TRANSACTION_STATE_TOPIC,
                     partition, len(completing))

    def _metadata(self, transactional_id: str) -> TransactionMetadata | None:
        """The id's state (None: unknown), or NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS. Under the lock."""
        self._owned.check(self.state_log.partition_for(transactional_id), f"transactional id {transactional_id}")
        return self._txns.get(transactional_id)

    # ---- writes: prepared under the lock, written outside it, then applied ----------------------------------------

    def _write(self, metadata: TransactionMetadata, transit: TxnTransit) -> None:
        txn_id = metadata.transactional_id
        try:
            self.state_log.append_records(self.state_log.partition_for(txn_id),
                                          [(transaction_log.key_bytes(txn_id), transaction_log.value_bytes(transit))])
        except KafkaError:
            with self._lock:
                metadata.abort_transition()
            raise
        with self._lock:
            if self._txns.get(txn_id) is not metadata:  # the partition was given up (or reloaded) meanwhile
                metadata.abort_transition()
                raise NotCoordinatorError(f"this broker is no longer the coordinator of transactional id {txn_id}")
            metadata.complete_transition(transit)
            if transit.state is _S.DEAD:
                del self._txns[txn_id]

    def _end_with_markers(self, metadata: TransactionMetadata, transit: TxnTransit) -> None:
        """Write PrepareCommit/PrepareAbort, then send its markers."""
        self._write(metadata, transit)
        log.debug("%s: %s written, sending markers to %d partitions", metadata.transactional_id,
                  transit.state.state_name, len(transit.partitions))
        self._send_markers(metadata, transit)

    def _send_markers(self, metadata: TransactionMetadata, transit: TxnTransit) -> None:
        with self._lock:
            owned = self._owned.get(self.state_log.partition_for(metadata.transactional_id))
            coordinator_epoch = owned.leader_epoch if owned is not None else 0
        markers = TxnMarkers(metadata.transactional_id, transit.producer_id, transit.producer_epoch,
                             transit.state is _S.PREPARE_COMMIT, coordinator_epoch, transit.partitions,
                             transit.client_transaction_version)
        self.markers.send(markers, lambda: self._complete(metadata, transit))

    def _complete(self, metadata: TransactionMetadata, prepared: TxnTransit) -> None:
        """Every marker is written: CompleteCommit or CompleteAbort (retried until written or given up here)."""
        with self._lock:
            if (self._txns.get(metadata.transactional_id) is not metadata or metadata.current != prepared
                    or metadata.pending_state is not None):
                return
            transit = metadata.prepare_complete(self.timer.now_ms())
        try:
            self._write(metadata, transit)
        except NotCoordinatorError:
            return
        except KafkaError as exc:
            log.warning("Writing %s of transactional id %r failed (%s); retrying in %d ms", transit.state.state_name,
                        metadata.transactional_id, exc, COMPLETION_RETRY_MS)
            self.timer.schedule(("complete", metadata.transactional_id), COMPLETION_RETRY_MS,
                                lambda: self._complete(metadata, prepared))
            return
        log.debug("%s: %s", metadata.transactional_id, transit.state.state_name)

    # ---- the requests ------------------------------------------------------------------------------------------

    def init_producer_id(self, transactional_id: str, txn_timeout_ms: int, expected_producer_id: int = -1,
                         expected_epoch: int = -1) -> tuple[int, int]:
        """InitProducerId with a transactional id: (producer id, epoch), or the error raised."""
        if not transactional_id:
            raise InvalidRequestError("the transactional id is empty")
        if not 0 < txn_timeout_ms <= self.config.transaction_max_timeout_ms:
            raise InvalidTransactionTimeoutError(
                f"transaction timeout {txn_timeout_ms} ms is outside (0, transaction.max.timeout.ms = "
                f"{self.config.transaction_max_timeout_ms}]")
        expected = expected_epoch if expected_producer_id >= 0 else None
        now = self.timer.now_ms()
        with self._lock:
            metadata = self._metadata(transactional_id)
            if metadata is None:
                metadata = TransactionMetadata.new(transactional_id, self._allocate_producer_id(), txn_timeout_ms,
                                                   now)
                self._txns[transactional_id] = metadata
            transit = self._prepare_init(metadata, txn_timeout_ms, expected_producer_id, expected, now)
        if transit.state is _S.PREPARE_ABORT:
            log.info("Aborting the open transaction of transactional id %r (producer id %d, epoch %d) before a new "
                     "producer takes it over; that producer retries until the abort is complete", transactional_id,
                     transit.producer_id, transit.producer_epoch - 1)
            self._end_with_markers(metadata, transit)
            raise ConcurrentTransactionsError(f"the open transaction of {transactional_id} is being aborted")
        self._write(metadata, transit)
        return transit.producer_id, transit.producer_epoch

    def _prepare_init(self, metadata: TransactionMetadata, txn_timeout_ms: int, expected_producer_id: int,
                      expected_epoch: int | None, now: int) -> TxnTransit:
        """Kafka's prepareInitProducerIdTransit."""
        if metadata.pending_state is not None or metadata.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"transactional id {metadata.transactional_id} is completing a "
                                              "transaction")
        if expected_epoch is not None and not (
                metadata.producer_epoch == -1 or expected_producer_id == metadata.producer_id
                or (expected_producer_id == metadata.previous_producer_id
                    and is_epoch_exhausted(expected_epoch))):
            raise ProducerFencedError(f"producer id {expected_producer_id} is not the current producer of "
                                      f"{metadata.transactional_id}")
        if metadata.state is _S.ONGOING:
            return metadata.prepare_fenced_abort(now)
        if metadata.is_epoch_exhausted and expected_epoch in (None, metadata.producer_epoch):
            return metadata.prepare_producer_id_rotation(self._allocate_producer_id(), txn_timeout_ms, now,
                                                         record_last_epoch=expected_epoch is not None)
        transit = metadata.prepare_increment_producer_epoch(txn_timeout_ms, expected_epoch, now)
        if transit is None:
            raise ProducerFencedError(f"epoch {expected_epoch} of {metadata.transactional_id} is fenced by epoch "
                                      f"{metadata.producer_epoch}")
        return transit

    def _check_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> TransactionMetadata:
        """The id's state for a request of its producer (AddPartitionsToTxn, EndTxn), or the error. Under the lock."""
        if not transactional_id:
            raise InvalidRequestError("the transactional id is empty")
        metadata = self._metadata(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            raise InvalidProducerIdMappingError(f"producer id {producer_id} is not the one of transactional id "
                                                f"{transactional_id}")
        if metadata.producer_epoch != producer_epoch:
            raise ProducerFencedError(f"epoch {producer_epoch} of transactional id {transactional_id} is fenced by "
                                      f"epoch {metadata.producer_epoch}")
        if metadata.pending_state is not None or metadata.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is completing a transaction")
        return metadata

    def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                       partitions: set[TopicPartition], transaction_version: int = 0) -> None:
        """AddPartitionsToTxn (and AddOffsetsToTxn, with the group's `__consumer_offsets` partition), or a partition
        leader's add for a producer of transaction protocol 2 (`transaction_version` 2: AddPartitionsToTxn v4+
        without verify_only, as Kafka's TransactionVersion.transactionVersionForAddPartitionsToTxn)."""
        with self._lock:
            metadata = self._check_producer(transactional_id, producer_id, producer_epoch)
            if metadata.state is _S.ONGOING and partitions <= metadata.partitions:
                return
            transit = metadata.prepare_add_partitions(partitions, self.timer.now_ms(), transaction_version)
        self._write(metadata, transit)

    def verify_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: set[TopicPartition]) -> dict[TopicPartition, bool]:
        """AddPartitionsToTxn v4+ verify_only (KIP-890 part 1): which partitions are in the transaction."""
        with self._lock:
            metadata = self._metadata(transactional_id)
            if metadata is None or metadata.producer_id != producer_id:
                raise InvalidProducerIdMappingError(f"producer id {producer_id} is not the one of {transactional_id}")
            if metadata.producer_epoch != producer_epoch:
                raise ProducerFencedError(f"epoch {producer_epoch} of {transactional_id} is fenced")
            if metadata.state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):  # a pending write is not looked at (Kafka)
                raise ConcurrentTransactionsError(f"transactional id {transactional_id} is completing a transaction")
            return {tp: metadata.state is _S.ONGOING and tp in metadata.partitions for tp in partitions}

    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool,
                        transaction_version: int = 0) -> tuple[int, int]:
        """EndTxn: answered once PrepareCommit/PrepareAbort is written (the markers follow) with the producer id and
        epoch the producer goes on with (bumped under transaction protocol 2, `transaction_version` 2)."""
        with self._lock:
            if not transactional_id:
                raise InvalidRequestError("the transactional id is empty")
            metadata = self._metadata(transactional_id)
            if transaction_version >= TRANSACTION_VERSION_2:
                transit = self._prepare_end_tv2(metadata, transactional_id, producer_id, producer_epoch, commit)
            else:
                transit = self._prepare_end_tv1(metadata, transactional_id, producer_id, producer_epoch, commit)
            if transit is None:  # a retry of an EndTxn that completed
                return metadata.producer_id, metadata.producer_epoch
        self._end_with_markers(metadata, transit)
        return transit.producer_id, transit.producer_epoch

    def _prepare_end_tv1(self, metadata: TransactionMetadata | None, transactional_id: str, producer_id: int,
                         producer_epoch: int, commit: bool) -> TxnTransit | None:
        """Kafka's endTransactionWithTV1: the epoch must be the current one; None for a retry. Under the lock."""
        if metadata is None or metadata.producer_id != producer_id:
            raise InvalidProducerIdMappingError(f"producer id {producer_id} is not the one of {transactional_id}")
        if metadata.producer_epoch != producer_epoch:
            raise ProducerFencedError(f"epoch {producer_epoch} of {transactional_id} is fenced by epoch "
                                      f"{metadata.producer_epoch}")
        self._check_not_changing(metadata)
        wanted, done = _end_states(commit)
        if metadata.state is done:
            return None
        if metadata.state is wanted:
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is completing a transaction")
        if metadata.state is not _S.ONGOING:
            raise _cannot_end(metadata, commit)
        return metadata.prepare_abort_or_commit(wanted, self.timer.now_ms())

    def _prepare_end_tv2(self, metadata: TransactionMetadata | None, transactional_id: str, producer_id: int,
                         producer_epoch: int, commit: bool) -> TxnTransit | None:
        """Kafka's endTransaction under transaction protocol 2 (KIP-890): every end bumps the epoch, so a retry of an
        end that went through comes with the epoch before the current one (or, after the producer id was rotated,
        with the old id at the last epoch it had); an abort is allowed with no transaction open. None for a retry
        of a completed end. Under the lock."""
        if metadata is None:
            raise InvalidProducerIdMappingError(f"producer id {producer_id} is not the one of {transactional_id}")
        retry_on_overflow = (metadata.previous_producer_id == producer_id and metadata.producer_epoch == 0
                             and producer_epoch == MAX_PRODUCER_EPOCH - 1)
        retry_on_bump = metadata.producer_epoch == producer_epoch + 1
        state = metadata.state
        if state in (_S.PREPARE_COMMIT, _S.PREPARE_ABORT):
            valid_epoch = retry_on_bump
        elif state in (_S.COMPLETE_COMMIT, _S.COMPLETE_ABORT):
            valid_epoch = retry_on_bump or retry_on_overflow or producer_epoch == metadata.producer_epoch
        else:
            valid_epoch = producer_epoch == metadata.producer_epoch
        if metadata.producer_id != producer_id and not retry_on_overflow:
            raise InvalidProducerIdMappingError(f"producer id {producer_id} is not the one of {transactional_id}")
        if not valid_epoch:
            raise ProducerFencedError(f"epoch {producer_epoch} of {transactional_id} is fenced by epoch "
                                      f"{metadata.producer_epoch}")
        self._check_not_changing(metadata)
        is_retry = retry_on_bump or retry_on_overflow
        wanted, done = _end_states(commit)
        if state is wanted:
            raise ConcurrentTransactionsError(f"transactional id {transactional_id} is completing a transaction")
        if state is done and is_retry:
            return None
        if state is _S.ONGOING or (not commit and not is_retry and state in (_S.EMPTY, _S.COMPLETE_COMMIT,
                                                                             _S.COMPLETE_ABORT)):
            next_producer_id = self._allocate_producer_id() if metadata.is_epoch_exhausted else NO_PRODUCER_ID
            return metadata.prepare_abort_or_commit(wanted, self.timer.now_ms(), TRANSACTION_VERSION_2,
                                                    next_producer_id)
        raise _cannot_end(metadata, commit)

    @staticmethod
    def _check_not_changing(metadata: TransactionMetadata) -> None:
        if metadata.pending_state is not None:
            raise ConcurrentTransactionsError(f"transactional id {metadata.transactional_id} is changing state")

    def describe(self, transactional_id: str) -> TransactionMetadata:
        with self._lock:
            metadata = self._metadata(transactional_id)
            if metadata is None or metadata.state is _S.DEAD:
                raise TransactionalIdNotFoundError(f"transactional id {transactional_id} is not known")
            return metadata

    def list_transactions(self, states: set[TransactionState], producer_ids: set[int],
                          min_duration_ms: int = -1) -> list[TransactionMetadata]:
        """Kafka's listTransactionStates: every loaded id matching the filters (empty filters match all)."""
        now = self.timer.now_ms()
        with self._lock:
            return [m for m in self._txns.values()
                    if self._owned.is_loaded(self.state_log.partition_for(m.transactional_id))
                    and (not states or m.state in states) and (not producer_ids or m.producer_id in producer_ids)
                    and (min_duration_ms < 0 or (m.state is _S.ONGOING
                                                 and now - m.txn_start_timestamp > min_duration_ms))]

    def is_loading(self) -> bool:
        with self._lock:
            return not self._owned.all_loaded()

    # ---- the periodic tasks ------------------------------------------------------------------------------------

    def abort_timed_out_transactions(self) -> None:
        """Kafka's abortTimedOutTransactions: open past its timeout, aborted with a bumped epoch."""
        now = self.timer.now_ms()
        with self._lock:
            timed_out = [m for m in self._txns.values() if m.state is _S.ONGOING and m.pending_state is None
                         and m.txn_start_timestamp + m.txn_timeout_ms < now]
            aborts = [(m, m.prepare_fenced_abort(now)) for m in timed_out]
        for metadata, transit in aborts:
            log.info("Aborting the transaction of transactional id %r (producer id %d, epoch %d): open for more than "
                     "its timeout of %d ms; its producer is fenced", metadata.transactional_id, transit.producer_id,
                     transit.producer_epoch - 1, metadata.txn_timeout_ms)
            try:
                self._end_with_markers(metadata, transit)
            except KafkaError as exc:
                log.warning("Aborting the timed-out transaction of %r failed (%s); trying again later",
                            metadata.transactional_id, exc)

    def remove_expired_transactional_ids(self) -> None:
        """Kafka's removeExpiredTransactionalIds: nothing open and idle past transactional.id.expiration.ms."""
        now = self.timer.now_ms()
        with self._lock:
            expired = [m for m in self._txns.values() if m.state.expiration_allowed and m.pending_state is None
                       and m.txn_last_update_timestamp + self.config.transactional_id_expiration_ms <= now]
            removals = [(m, m.prepare_dead()) for m in expired]
        for metadata, transit in removals:
            try:
                self._write(metadata, transit)
                log.info("Removed transactional id %r: unused for transactional.id.expiration.ms (%d ms)",
                         metadata.transactional_id, self.config.transactional_id_expiration_ms)
            except KafkaError as exc:
                log.warning("Removing the expired transactional id %r failed (%s)", metadata.transactional_id, exc)


def _end_states(commit: bool) -> tuple[TransactionState, TransactionState]:
    """The Prepare and the Complete state of ending a transaction with this outcome."""
    return (_S.PREPARE_COMMIT, _S.COMPLETE_COMMIT) if commit else (_S.PREPARE_ABORT, _S.COMPLETE_ABORT)


def _cannot_end(metadata: TransactionMetadata, commit: bool) -> InvalidTxnStateError:
    return InvalidTxnStateError(f"transactional id {metadata.transactional_id} is {metadata.state.state_name}: cannot "
                                f"{'commit' if commit else 'abort'}")
