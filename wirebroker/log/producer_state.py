"""Idempotent and transactional producer state of one partition (Kafka's ProducerStateManager, ProducerStateEntry,
ProducerAppendInfo).

For each producer id the partition remembers its epoch, the metadata (sequence range, offsets, timestamp) of its last
five batches, the epoch of the transaction coordinator that wrote its last marker and the first offset of its open
transaction. Every batch a client appends is checked against that state, as Kafka does:

  * a batch whose epoch and sequence range equal one of the last five is a duplicate (a retry): the caller does not
    append it and answers with the offsets the original got (`ProducerStateEntry.find_duplicate_batch`);
  * an epoch older than the producer's raises InvalidProducerEpochError (the producer was fenced);
  * a new epoch must start at sequence 0, and within an epoch each batch must start right after the last one
    (sequences wrap from 2^31 - 1 to 0); anything else raises OutOfOrderSequenceNumberError.

Transactions: a transactional batch opens a transaction at its base offset; a COMMIT/ABORT marker closes it and
yields a CompletedTxn (an aborted one goes to the segment's transaction index). The first offset of the oldest open or
not yet replicated transaction is the first unstable offset, which bounds the last stable offset.

The state is snapshotted to <offset>.snapshot files (format in producer_snapshot.py) when a segment rolls and when the
log closes, so that loading a log replays at most the batches written since the latest snapshot. Producers idle for
producer.id.expiration.ms with no open transaction are expired.
"""

from __future__ import annotations

import collections
import enum
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from wirebroker.log.batch_records import EndTransactionMarker, end_txn_marker
from wirebroker.log.files import (
    DELETED_FILE_SUFFIX,
    delete_file_if_exists,
    is_snapshot_file,
    offset_from_file_name,
    producer_snapshot_file,
)
from wirebroker.log.producer_snapshot import (
    CorruptSnapshotError,
    SnapshotEntry,
    read_snapshot,
    write_snapshot,
)
from wirebroker.log.verification_guard import SENTINEL, VerificationGuard, VerificationStateEntry
from wirebroker.protocol.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from wirebroker.protocol.records import BatchHeader

log = logging.getLogger(__name__)

NUM_BATCHES_TO_RETAIN = 5  # Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: max.in.flight.requests of idempotence
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1
PRODUCER_ID_EXPIRATION_MS_DEFAULT = 86_400_000  # Kafka's producer.id.expiration.ms
MAX_TRANSACTION_TIMEOUT_MS_DEFAULT = 900_000  # Kafka's transaction.max.timeout.ms


class AppendOrigin(enum.Enum):
    """Where an append comes from; it decides how strictly producer state is checked."""

    CLIENT = "client"  # a produce request: full sequence and epoch checks
    REPLICATION = "replication"  # a follower copying the leader: already checked, never rejected
    COORDINATOR = "coordinator"  # the group/transaction coordinator: epochs checked, no sequences


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return sequence - decrement + INT32_MAX + 1
    return sequence - decrement


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class BatchMetadata(NamedTuple):
    """What is remembered of one appended batch of a producer."""

    last_seq: int
    last_offset: int
    offset_delta: int  # last_offset - first offset
    timestamp: int  # the batch's max timestamp

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _retained_batches() -> collections.deque[BatchMetadata]:
    return collections.deque(maxlen=NUM_BATCHES_TO_RETAIN)


@dataclass(slots=True)
class ProducerStateEntry:
    """The state of one producer id; `batch_metadata` runs from the oldest retained batch to the newest (a bounded
    deque: appending the sixth drops the oldest)."""

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = NO_TIMESTAMP
    current_txn_first_offset: int | None = None
    batch_metadata: collections.deque[BatchMetadata] = field(default_factory=_retained_batches)

    @property
    def is_empty(self) -> bool:
        return not self.batch_metadata

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self.batch_metadata[0].first_offset if self.batch_metadata else -1

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    def without_batches(self) -> ProducerStateEntry:
        """A copy with the same epochs and transaction but no batch metadata (what an append starts from)."""
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch, self.last_timestamp,
                                  self.current_txn_first_offset)

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        if self.producer_epoch == producer_epoch:
            return False
        self.batch_metadata.clear()
        self.producer_epoch = producer_epoch
        return True

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int, offset_delta: int,
                  timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def update(self, newer: ProducerStateEntry) -> None:
        """Take in the state an append produced (see ProducerAppendInfo.to_entry)."""
        self.maybe_update_producer_epoch(newer.producer_epoch)
        self.batch_metadata.extend(newer.batch_metadata)
        self.coordinator_epoch = newer.coordinator_epoch
        self.current_txn_first_offset = newer.current_txn_first_offset
        self.last_timestamp = newer.last_timestamp

    def end_transaction(self, producer_epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = None
        self.last_timestamp = timestamp

    def find_duplicate_batch(self, producer_epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """The retained batch with exactly this epoch and sequence range: the original of a retried batch."""
        if producer_epoch != self.producer_epoch:
            return None
        # The stored last_seq first: first_seq is derived, and almost every batch is new (no last_seq matches).
        for batch in self.batch_metadata:
            if batch.last_seq == last_seq and batch.first_seq == first_seq:
                return batch
        return None


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int  # offset of the marker
    is_aborted: bool


@dataclass
class TxnMetadata:
    producer_id: int
    first_offset: int
    last_offset: int | None = None  # set when the marker is written


class ProducerAppendInfo:
    """Checks one producer's batches of an append against its state and collects the state they lead to."""

    def __init__(self, producer_id: int, current_entry: ProducerStateEntry, origin: AppendOrigin,
                 partition: str = "") -> None:
        self.producer_id = producer_id
        self.origin = origin
        self._current = current_entry
        self._updated = current_entry.without_batches()
        self._partition = partition
        self.started_transactions: list[TxnMetadata] = []
        self.marker_epoch: int | None = None  # the epoch of the last COMMIT/ABORT marker of this append

    def to_entry(self) -> ProducerStateEntry:
        return self._updated

    def append(self, header: BatchHeader, batch: bytes | memoryview) -> CompletedTxn | None:
        """Check and record one batch of this producer; a COMMIT/ABORT marker may complete a transaction."""
        if header.is_control:
            marker = end_txn_marker(batch, header)
            if marker is None:  # an empty control batch: the cleaner removed the transaction's records
                return None
            return self.append_end_txn_marker(marker, header.producer_epoch, header.base_offset, header.max_timestamp)
        self.append_data_batch(header.producer_epoch, header.base_sequence, header.last_sequence,
                               header.max_timestamp, header.base_offset, header.last_offset, header.is_transactional)
        return None

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, last_timestamp: int, first_offset: int,
                          last_offset: int, is_transactional: bool) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        self._updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp)
        if self._updated.current_txn_first_offset is not None and not is_transactional:
            raise InvalidTxnStateError(f"Expected transactional write from producer {self.producer_id} at offset "
                                       f"{first_offset} in partition {self._partition}")
        if self._updated.current_txn_first_offset is None and is_transactional:
            self._updated.current_txn_first_offset = first_offset
            self.started_transactions.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(self, marker: EndTransactionMarker, producer_epoch: int, offset: int,
                              timestamp: int) -> CompletedTxn | None:
        """Close the producer's transaction; None if it had none open (nothing to index)."""
        self._check_producer_epoch(producer_epoch, offset)
        self._check_coordinator_epoch(marker, offset)
        self.marker_epoch = producer_epoch
        first_offset = self._updated.current_txn_first_offset
        completed = None
        if first_offset is not None:
            completed = CompletedTxn(self.producer_id, first_offset, offset, not marker.is_commit)
        self._updated.end_transaction(producer_epoch, marker.coordinator_epoch, timestamp)
        return completed

    def _check_producer_epoch(self, producer_epoch: int, offset: int) -> None:
        current = self._updated.producer_epoch
        if producer_epoch >= current:
            return
        message = (f"Epoch of producer {self.producer_id} at offset {offset} in {self._partition} is "
                   f"{producer_epoch}, which is smaller than the last seen epoch {current}")
        if self.origin is AppendOrigin.REPLICATION:
            log.warning(message)
        else:
            raise InvalidProducerEpochError(message)

    def _check_sequence(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        if producer_epoch != self._updated.producer_epoch:
            if first_seq != 0 and self._updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceNumberError(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at offset {offset} in "
                    f"partition {self._partition}: {producer_epoch} (request epoch), {first_seq} (seq. number), "
                    f"{self._updated.producer_epoch} (current producer epoch)")
            return
        if self._updated.batch_metadata:
            current_last_seq = self._updated.batch_metadata[-1].last_seq
        elif producer_epoch == self._current.producer_epoch:
            current_last_seq = self._current.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        # With no known epoch (all of the producer's data was deleted by retention or DeleteRecords) any sequence goes.
        if self._current.producer_epoch != NO_PRODUCER_EPOCH and not in_sequence(current_last_seq, first_seq):
            raise OutOfOrderSequenceNumberError(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} in partition "
                f"{self._partition}: {first_seq} (incoming seq. number), {current_last_seq} (current end sequence "
                f"number)")

    def _check_coordinator_epoch(self, marker: EndTransactionMarker, offset: int) -> None:
        if self._updated.coordinator_epoch <= marker.coordinator_epoch:
            return
        message = (f"Invalid coordinator epoch for producerId {self.producer_id} at offset {offset} in partition "
                   f"{self._partition}: {marker.coordinator_epoch} (zombie), {self._updated.coordinator_epoch} "
                   f"(current)")
        if self.origin is AppendOrigin.REPLICATION:
            log.info(message)
        else:
            raise TransactionCoordinatorFencedError(message)


class ProducerStateManager:
    """The producer state of one partition and its snapshot files. Callers hold the log's lock for updates."""

    def __init__(self, partition_dir: str, name: str = "",
                 producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS_DEFAULT,
                 max_transaction_timeout_ms: int = MAX_TRANSACTION_TIMEOUT_MS_DEFAULT) -> None:
        self.partition_dir = partition_dir
        self.name = name or os.path.basename(partition_dir)
        self.producer_id_expiration_ms = producer_id_expiration_ms
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self._ongoing_txns: dict[int, TxnMetadata] = {}  # by first offset
        self._unreplicated_txns: dict[int, TxnMetadata] = {}  # completed, marker above the high watermark
        self._verification_states: dict[int, VerificationStateEntry] = {}  # by producer id
        self._snapshots: dict[int, str] = self._scan_snapshots()
        self.map_end_offset = 0
        self._last_snap_offset = 0

    # --- snapshot files ---

    def _scan_snapshots(self) -> dict[int, str]:
        snapshots = {}
        for name in os.listdir(self.partition_dir):
            if is_snapshot_file(name):
                snapshots[offset_from_file_name(name)] = os.path.join(self.partition_dir, name)
        return dict(sorted(snapshots.items()))

    @property
    def latest_snapshot_offset(self) -> int | None:
        return max(self._snapshots) if self._snapshots else None

    @property
    def oldest_snapshot_offset(self) -> int | None:
        return min(self._snapshots) if self._snapshots else None

    def snapshot_offsets(self) -> list[int]:
        return sorted(self._snapshots)

    def take_snapshot(self) -> None:
        """Write the state up to map_end_offset, unless a snapshot there (or later) exists."""
        if self.map_end_offset <= self._last_snap_offset:
            return
        path = producer_snapshot_file(self.partition_dir, self.map_end_offset)
        write_snapshot(path, [_snapshot_entry(entry) for entry in self.producers.values()])
        log.debug("Wrote producer snapshot of %s at offset %d with %d producer ids", self.name, self.map_end_offset,
                  len(self.producers))
        self._snapshots[self.map_end_offset] = path
        self._last_snap_offset = self.map_end_offset

    def delete_snapshots_before(self, offset: int) -> None:
        for snapshot_offset in [o for o in self._snapshots if o < offset]:
            self._remove_and_delete_snapshot(snapshot_offset)

    def _remove_and_delete_snapshot(self, offset: int) -> None:
        path = self._snapshots.pop(offset, None)
        if path is not None:
            delete_file_if_exists(path)

    def remove_snapshots_for_deletion(self, offsets: Iterable[int]) -> list[str]:
        """Forget the snapshots at these offsets (of deleted segments) and rename them *.deleted; returns the new
        paths, for the caller to delete now or after file.delete.delay.ms."""
        renamed = []
        for offset in offsets:
            path = self._snapshots.pop(offset, None)
            if path is not None and os.path.exists(path):
                os.replace(path, path + DELETED_FILE_SUFFIX)
                renamed.append(path + DELETED_FILE_SUFFIX)
        return renamed

    def remove_stray_snapshots(self, segment_base_offsets: list[int]) -> None:
        """Delete snapshots that match no segment, except the latest one if it lies past every segment's base
        (a clean shutdown writes one there)."""
        self._snapshots = self._scan_snapshots()
        bases = set(segment_base_offsets)
        strays = [o for o in self._snapshots if o not in bases]
        keep_latest = bool(strays) and (not bases or strays[-1] > max(bases))
        for offset in strays[:-1] if keep_latest else strays:
            self._remove_and_delete_snapshot(offset)

    # --- loading ---

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int, now_ms: int) -> None:
        """Drop snapshots outside (log_start_offset, log_end_offset] and, unless the state already ends at
        log_end_offset, reload it from the latest remaining snapshot."""
        for offset in [o for o in self._snapshots if o > log_end_offset or o <= log_start_offset]:
            self._remove_and_delete_snapshot(offset)
        if log_end_offset != self.map_end_offset:
            self.producers.clear()
            self._ongoing_txns.clear()
            self._unreplicated_txns.clear()
            self._load_from_snapshot(log_start_offset, now_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def _load_from_snapshot(self, log_start_offset: int, now_ms: int) -> None:
        while self._snapshots:
            offset = max(self._snapshots)
            try:
                entries = read_snapshot(self._snapshots[offset])
            except (CorruptSnapshotError, OSError) as exc:
                log.warning("Failed to load producer snapshot %s of %s, trying an older one: %s",
                            self._snapshots[offset], self.name, exc)
                self._remove_and_delete_snapshot(offset)
                continue
            log.info("Loading producer state of %s from snapshot at offset %d", self.name, offset)
            for snapshot_entry in entries:
                entry = _entry_from_snapshot(snapshot_entry)
                if not self._is_expired(now_ms, entry):
                    self.load_producer_entry(entry)
            self._last_snap_offset = self.map_end_offset = offset
            return
        self._last_snap_offset = self.map_end_offset = log_start_offset

    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        self.producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            self._ongoing_txns[entry.current_txn_first_offset] = TxnMetadata(entry.producer_id,
                                                                             entry.current_txn_first_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        self.producers.clear()
        self._ongoing_txns.clear()
        self._unreplicated_txns.clear()
        for snapshot_offset in list(self._snapshots):
            self._remove_and_delete_snapshot(snapshot_offset)
        self._last_snap_offset = 0
        self.map_end_offset = offset

    # --- appends ---

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        current = self.producers.get(producer_id) or ProducerStateEntry(producer_id)
        return ProducerAppendInfo(producer_id, current, origin, self.name)

    def update(self, append_info: ProducerAppendInfo) -> None:
        if append_info.producer_id == NO_PRODUCER_ID:
            raise ValueError(f"Invalid producer id {append_info.producer_id} passed to update for {self.name}")
        updated = append_info.to_entry()
        current = self.producers.get(append_info.producer_id)
        if current is not None:
            current.update(updated)
        else:
            self.producers[append_info.producer_id] = updated
        for txn in append_info.started_transactions:
            self._ongoing_txns[txn.first_offset] = txn
        if self._verification_states and (append_info.started_transactions or append_info.marker_epoch is not None):
            self._clear_verification_after(append_info)

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    def complete_txn(self, completed: CompletedTxn) -> None:
        txn = self._ongoing_txns.pop(completed.first_offset, None)
        if txn is None:
            raise ValueError(f"Attempted to complete transaction {completed} on {self.name} which was not started")
        txn.last_offset = completed.last_offset
        self._unreplicated_txns[completed.first_offset] = txn

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """The LSO to record with an aborted transaction: the first open transaction of another producer, if any."""
        other = [o for o, txn in self._ongoing_txns.items() if txn.producer_id != completed.producer_id]
        return min(other) if other else completed.last_offset + 1

    # --- transaction verification (KIP-890 part 1) ---

    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether the producer's transaction is open here at this very epoch (Kafka's hasOngoingTransaction)."""
        entry = self.producers.get(producer_id)
        return (entry is not None and entry.current_txn_first_offset is not None
                and entry.producer_epoch == producer_epoch)

    def maybe_create_verification_state_entry(self, producer_id: int, producer_epoch: int, supports_epoch_bump: bool,
                                              now_ms: int) -> VerificationStateEntry:
        """The producer's pending verification, a new one (with a fresh guard) if it has none."""
        entry = self._verification_states.get(producer_id)
        if entry is None:
            entry = self._verification_states[producer_id] = VerificationStateEntry(now_ms, producer_epoch,
                                                                                    supports_epoch_bump)
        else:
            entry.maybe_update_epoch(producer_epoch)
        return entry

    def verification_guard(self, producer_id: int) -> VerificationGuard:
        """The guard of the producer's pending verification; SENTINEL (which verifies nothing) if it has none."""
        entry = self._verification_states.get(producer_id)
        return SENTINEL if entry is None else entry.guard

    def _clear_verification_after(self, append_info: ProducerAppendInfo) -> None:
        """The append started the producer's transaction or wrote its marker: its verification is used up. A marker of
        transaction protocol 2 at the entry's epoch is kept: the verification is for the next transaction, as the
        producer bumped its epoch when this one ended (Kafka's updateProducers)."""
        entry = self._verification_states.get(append_info.producer_id)
        if entry is None:
            return
        if (not append_info.started_transactions and entry.supports_epoch_bump
                and append_info.marker_epoch == entry.epoch):
            return
        del self._verification_states[append_info.producer_id]

    # --- transactions and the last stable offset ---

    @property
    def first_undecided_offset(self) -> int | None:
        return min(self._ongoing_txns) if self._ongoing_txns else None

    @property
    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest transaction that is open or whose marker is not yet replicated."""
        candidates = [*self._ongoing_txns, *self._unreplicated_txns]
        return min(candidates) if candidates else None

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        self._remove_unreplicated_transactions(high_watermark)

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        self._remove_unreplicated_transactions(log_start_offset)
        self.map_end_offset = max(self.map_end_offset, log_start_offset)
        latest = self.latest_snapshot_offset
        self._last_snap_offset = latest if latest is not None else log_start_offset

    def _remove_unreplicated_transactions(self, offset: int) -> None:
        for first_offset, txn in list(self._unreplicated_txns.items()):
            if txn.last_offset is not None and txn.last_offset < offset:
                del self._unreplicated_txns[first_offset]

    # --- expiration ---

    def _is_expired(self, now_ms: int, entry: ProducerStateEntry) -> bool:
        return (entry.current_txn_first_offset is None
                and now_ms - entry.last_timestamp >= self.producer_id_expiration_ms)

    def remove_expired_producers(self, now_ms: int) -> None:
        for producer_id in [pid for pid, entry in self.producers.items() if self._is_expired(now_ms, entry)]:
            del self.producers[producer_id]
        # A verification whose append never came (the producer gave up) lingers no longer than an idle producer.
        for producer_id in [pid for pid, entry in self._verification_states.items()
                            if now_ms - entry.timestamp >= self.producer_id_expiration_ms]:
            del self._verification_states[producer_id]

    def is_empty(self) -> bool:
        return not self.producers and not self._unreplicated_txns

    def update_dir(self, partition_dir: str) -> None:
        """Follow a renamed partition directory."""
        self.partition_dir = partition_dir
        self._snapshots = {o: os.path.join(partition_dir, os.path.basename(p)) for o, p in self._snapshots.items()}


def _snapshot_entry(entry: ProducerStateEntry) -> SnapshotEntry:
    txn_first = entry.current_txn_first_offset
    return SnapshotEntry(entry.producer_id, entry.producer_epoch, entry.last_seq, entry.last_data_offset,
                         entry.last_offset_delta, entry.last_timestamp, entry.coordinator_epoch,
                         -1 if txn_first is None else txn_first)


def _entry_from_snapshot(snapshot: SnapshotEntry) -> ProducerStateEntry:
    entry = ProducerStateEntry(snapshot.producer_id, snapshot.epoch, snapshot.coordinator_epoch, snapshot.timestamp,
                               snapshot.current_txn_first_offset if snapshot.current_txn_first_offset >= 0 else None)
    if snapshot.last_offset >= 0:
        entry.batch_metadata.append(BatchMetadata(snapshot.last_sequence, snapshot.last_offset, snapshot.offset_delta,
                                                  snapshot.timestamp))
    return entry
