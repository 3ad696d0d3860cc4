"""The log of one partition replica (Kafka's UnifiedLog): offsets, producer state, leader epochs, retention.

Offsets, as in Kafka:

    log_start_offset <= last_stable_offset <= high_watermark <= log_end_offset
    recovery_point: everything below it is flushed to disk (recovery after a crash starts there)

Its LocalLog (local_log.py) holds the segment files, the log end offset and the recovery point, and rolls, reads,
truncates, deletes segments and flushes; this class decides what it does and when, as UnifiedLog drives LocalLog.

Appends (`append_as_leader`) validate the batches, assign offsets and the leader epoch in place and check
idempotent/transactional producer state (validator.py), roll the segment if needed and write the bytes. A retried
batch that producer state recognises is not written again: the append returns the offsets of the original. The high
watermark is the caller's (the replica layer advances it with `update_high_watermark`).

Reads (`read`) return a FileRegion of a segment file up to an upper bound offset (the high watermark for consumers,
the last stable offset for read_committed, the log end offset for followers) and raise OffsetOutOfRangeError outside
[log_start_offset, log_end_offset].

Thread-safety: one lock per log serializes appends, rolls, truncation, retention and flushes, in this class and in
its LocalLog, which takes none of its own. Reads take no lock (see local_log.py).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from operator import attrgetter
from typing import NamedTuple

from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo, LogOffsetMetadata
from wirebroker.log.file_records import TimestampAndOffset
from wirebroker.log.leader_epoch_cache import (
    UNDEFINED_EPOCH_OFFSET,
    LeaderEpochFileCache,
)
from wirebroker.log.loader import LogLoader, rebuild_producer_state
from wirebroker.log.local_log import LocalLog, now_ms, parse_topic_partition_name
from wirebroker.log.metadata_files import check_topic_id
from wirebroker.log.producer_state import (
    PRODUCER_ID_EXPIRATION_MS_DEFAULT,
    AppendOrigin,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateEntry,
    ProducerStateManager,
)
from wirebroker.log.retention import SegmentPredicate, deletable_segments, retention_ms_breach, retention_size_breach
from wirebroker.log.scheduler import Scheduler
from wirebroker.log.segment import LogSegment
from wirebroker.log.segments import LogSegments
from wirebroker.log.txn_index import AbortedTxn
from wirebroker.log.validator import (
    ValidatedBatch,
    analyze_and_validate_producer_state,
    assign_offsets_and_epoch,
    check_keys_for_compaction,
    check_timestamps,
    find_duplicate,
    follower_batches,
    scan_batches,
)
from wirebroker.log.verification_guard import SENTINEL, VerificationGuard
from wirebroker.protocol.errors import OffsetOutOfRangeError, RecordListTooLargeError
from wirebroker.protocol.records import validate_batches

log = logging.getLogger(__name__)

_max_timestamp = attrgetter("max_timestamp")

NO_TIMESTAMP = -1

# ListOffsets special timestamps (Kafka's ListOffsetsRequest).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3  # KIP-734
EARLIEST_LOCAL_TIMESTAMP = -4  # KIP-405
LATEST_TIERED_TIMESTAMP = -5  # KIP-1005
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6  # KIP-1023


class LogAppendInfo(NamedTuple):
    """The outcome of an append. For a duplicate batch, the offsets (and timestamp) of the original append."""

    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time: int  # the broker time stamped on LogAppendTime batches, else -1 (Kafka's RecordBatch.NO_TIMESTAMP)
    log_start_offset: int
    valid_bytes: int
    num_messages: int
    last_leader_epoch: int
    is_duplicate: bool = False


class Log:
    """Use `Log.open` to load or create a partition's log."""

    def __init__(self, log_start_offset: int, local_log: LocalLog, leader_epoch_cache: LeaderEpochFileCache,
                 producer_state: ProducerStateManager, topic_id: uuid.UUID | None) -> None:
        self._local = local_log
        # The LocalLog's config and segments, held here too because every append and read uses them (update_config
        # changes both; the LogSegments object is never replaced).
        self.config = local_log.config
        self.segments = local_log.segments
        self.topic_partition = local_log.topic_partition
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state = producer_state
        self.topic_id = topic_id
        self._lock = threading.RLock()
        self._log_start_offset = log_start_offset
        self._high_watermark = LogOffsetMetadata(log_start_offset)
        self._first_unstable_offset: int | None = None
        # The lowest offset this log was truncated to since the log cleaner last looked (Kafka's
        # LogCleanerManager.maybeTruncateCheckpoint: a cleaned offset above it no longer stands for cleaned data).
        self._truncated_to: int | None = None
        self._update_first_unstable_offset()

    @classmethod
    def open(cls, directory: str, config: LogConfig, topic_id: uuid.UUID | None = None, recovery_point: int = 0,
             log_start_offset: int = 0, now_ms: int | None = None, scheduler: Scheduler | None = None,
             had_clean_shutdown: bool = False,
             producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS_DEFAULT) -> Log:
        """Load the log in `directory` (created if missing), recovering what an unclean shutdown left behind.

        `recovery_point` and `log_start_offset` come from the log dir's checkpoints; `scheduler` runs deferred file
        deletions and post-roll flushes (without one they happen at once)."""
        now = _now_if_none(now_ms)
        os.makedirs(directory, exist_ok=True)
        topic_partition = parse_topic_partition_name(directory)
        name = str(topic_partition)
        topic_id = check_topic_id(directory, topic_id, name)
        leader_epoch_cache = LeaderEpochFileCache(directory, name)
        producer_state = ProducerStateManager(directory, name, producer_id_expiration_ms)
        segments = LogSegments()
        loaded = LogLoader(directory, name, config, segments, log_start_offset, recovery_point, had_clean_shutdown,
                           leader_epoch_cache, producer_state, now).load()
        log.info("Loaded log %s: log start offset %d, log end offset %d, recovery point %d, %d segments", name,
                 loaded.log_start_offset, loaded.next_offset_metadata.message_offset, loaded.recovery_point,
                 len(segments))
        local_log = LocalLog(directory, config, topic_partition, segments, loaded.recovery_point,
                             loaded.next_offset_metadata, scheduler, producer_state.remove_snapshots_for_deletion)
        return cls(loaded.log_start_offset, local_log, leader_epoch_cache, producer_state, topic_id)

    def __repr__(self) -> str:
        return f"Log({self.topic_partition}, start={self._log_start_offset}, end={self.log_end_offset})"

    # --- offsets ---

    @property
    def name(self) -> str:
        return str(self.topic_partition)

    @property
    def dir(self) -> str:
        return self._local.dir

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._local.log_end_offset_metadata.message_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._local.log_end_offset_metadata

    @property
    def high_watermark(self) -> int:
        return self._high_watermark.message_offset

    @property
    def recovery_point(self) -> int:
        return self._local.recovery_point

    @property
    def last_stable_offset(self) -> int:
        """The offset below which every transaction is decided and replicated (read_committed upper bound)."""
        first_unstable = self._first_unstable_offset
        hw = self.high_watermark
        return first_unstable if first_unstable is not None and first_unstable < hw else hw

    @property
    def size(self) -> int:
        return self.segments.size_in_bytes()

    @property
    def number_of_segments(self) -> int:
        return len(self.segments)

    @property
    def latest_epoch(self) -> int | None:
        return self.leader_epoch_cache.latest_epoch

    def update_high_watermark(self, high_watermark: int) -> int:
        """Set the high watermark, clamped to [log_start_offset, log_end_offset]; returns the value set."""
        with self._lock:
            leo = self._local.log_end_offset_metadata
            if high_watermark >= leo.message_offset:
                metadata = leo
            else:
                metadata = LogOffsetMetadata(max(high_watermark, self._log_start_offset))
            self._high_watermark = metadata
            self.producer_state.on_high_watermark_updated(metadata.message_offset)
            self._update_first_unstable_offset()
            return metadata.message_offset

    def _update_first_unstable_offset(self) -> None:
        first = self.producer_state.first_unstable_offset
        self._first_unstable_offset = None if first is None else max(first, self._log_start_offset)

    # --- appending ---

    def append_as_leader(self, records: bytearray | memoryview, leader_epoch: int, now_ms: int | None = None,
                         origin: AppendOrigin = AppendOrigin.CLIENT,
                         verification_guard: VerificationGuard | None = None) -> LogAppendInfo:
        """Append a produce request's records for this partition as the leader.

        `records` is modified in place (offsets, leader epoch, LogAppendTime) and written as it is. A transactional
        append verified at the coordinator carries the guard its verification started with (see validator)."""
        now = _now_if_none(now_ms)
        view = memoryview(records)
        headers = (validate_batches(view, self.config.max_message_bytes) if origin is AppendOrigin.CLIENT
                   else scan_batches(view))
        if not self.config.log_append_time:
            check_timestamps(headers, self.config, now)
        if self.config.compact:
            check_keys_for_compaction(view, headers, self.topic_partition)
        with self._lock:
            self._local.check_open()
            batches = assign_offsets_and_epoch(view, headers, self.log_end_offset, leader_epoch, self.config, now)
            duplicate = (find_duplicate(self.producer_state, batches, self.topic_partition)
                         if origin is AppendOrigin.CLIENT else None)
            if duplicate is not None:
                return LogAppendInfo(duplicate.first_offset, duplicate.last_offset, duplicate.timestamp,
                                     duplicate.last_offset, duplicate.timestamp, self._log_start_offset, 0, 0,
                                     batches[-1].header.partition_leader_epoch, is_duplicate=True)
            return self._append_validated(view, batches, origin, now, verification_guard)

    def maybe_start_transaction_verification(self, producer_id: int, producer_epoch: int,
                                             supports_epoch_bump: bool, now_ms: int | None = None) -> VerificationGuard:
        """The guard a transactional append verified at the coordinator carries back here: SENTINEL when the
        producer's transaction is open here at this epoch (nothing to verify), else its pending verification's
        (Kafka's maybeStartTransactionVerification)."""
        with self._lock:
            if self.producer_state.has_ongoing_transaction(producer_id, producer_epoch):
                return SENTINEL
            return self.producer_state.maybe_create_verification_state_entry(
                producer_id, producer_epoch, supports_epoch_bump, _now_if_none(now_ms)).guard

    def append_as_follower(self, records: bytes | memoryview) -> LogAppendInfo | None:
        """Append batches fetched from the leader with the leader's offsets, epochs and timestamps (Kafka's
        appendAsFollower); None when no whole batch was there (a partial last batch waits for the next fetch)."""
        with self._lock:
            self._local.check_open()
            view, batches = follower_batches(memoryview(records), self.log_end_offset)
            return self._append_validated(view, batches, AppendOrigin.REPLICATION, now_ms()) if batches else None

    def _append_validated(self, view: memoryview, batches: list[ValidatedBatch], origin: AppendOrigin,
                          now: int, verification_guard: VerificationGuard | None = None) -> LogAppendInfo:
        """Write batches with offsets and epochs set (roll, producer state, leader epochs); the lock is held."""
        if len(view) > self.config.segment_size:
            raise RecordListTooLargeError(f"Message batch size is {len(view)} bytes in append to partition "
                                          f"{self.name}, which exceeds the maximum configured segment size of "
                                          f"{self.config.segment_size}")
        # Each header value once (the header's offsets are properties); a client's append holds one batch.
        headers = [batch.header for batch in batches]
        first, last = headers[0], headers[-1]
        last_offset = last.last_offset
        max_header = max(headers, key=_max_timestamp)  # the first batch on ties
        max_timestamp, offset_of_max_timestamp = max_header.max_timestamp, max_header.last_offset
        segment = self._maybe_roll(len(view), max_timestamp, last_offset, now)
        producer_updates, completed_txns = analyze_and_validate_producer_state(self.producer_state, view, batches,
                                                                              origin, verification_guard)
        for header in headers:
            if header.partition_leader_epoch >= 0:
                self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        self._local.append(segment, last_offset, max_timestamp, offset_of_max_timestamp, view)
        self._apply_producer_state(segment, producer_updates, completed_txns, last_offset + 1)
        info = LogAppendInfo(first.base_offset, last_offset, max_timestamp, offset_of_max_timestamp,
                             now if self.config.log_append_time else NO_TIMESTAMP, self._log_start_offset, len(view),
                             sum(header.records_count for header in headers), last.partition_leader_epoch)
        if self._local.unflushed_messages() >= self.config.flush_messages:
            self.flush()
        return info

    def _apply_producer_state(self, segment: LogSegment, updates: dict[int, ProducerAppendInfo],
                              completed_txns: list[CompletedTxn], next_offset: int) -> None:
        for append_info in updates.values():
            self.producer_state.update(append_info)
        for completed in completed_txns:
            segment.update_txn_index(completed, self.producer_state.last_stable_offset(completed))
            self.producer_state.complete_txn(completed)
        self.producer_state.update_map_end_offset(next_offset)
        self._update_first_unstable_offset()

    # --- rolling ---

    def _maybe_roll(self, messages_size: int, max_timestamp: int, max_offset: int, now: int) -> LogSegment:
        segment = self.segments.last
        assert segment is not None
        if segment.should_roll(self.config, max_timestamp, max_offset, messages_size, now):
            log.debug("Rolling new log segment of %s (log_size = %d/%d, offset_index_size = %d/%d, "
                      "time_index_size = %d/%d)", self.name, segment.size, self.config.segment_size,
                      segment.offset_index.entries, segment.offset_index.max_entries, segment.time_index.entries,
                      segment.time_index.max_entries)
            return self.roll(now)
        return segment

    def roll(self, now_ms: int | None = None) -> LogSegment:
        """Start a new active segment at the log end offset; the old one is sealed and flushed in the background."""
        now = _now_if_none(now_ms)
        with self._lock:
            self._local.check_open()
            active = self.segments.last
            segment = self._local.roll(now)
            if segment is active:
                return segment  # the active segment is already an empty one at the log end
            new_offset = segment.base_offset
            self.producer_state.update_map_end_offset(new_offset)
            self.producer_state.take_snapshot()
        self._local.schedule_once("flush-log", lambda: self.flush(new_offset), 0)
        return segment

    # --- reading ---

    def read(self, start_offset: int, max_bytes: int, upper_bound_offset: int | None = None,
             min_one_message: bool = True, include_aborted_transactions: bool = False) -> FetchDataInfo:
        """Records from `start_offset`, at most `max_bytes` (but a whole first batch if min_one_message), never past
        `upper_bound_offset` (None: the log end offset)."""
        return self._local.read(start_offset, max_bytes, upper_bound_offset, min_one_message,
                                include_aborted_transactions, self._log_start_offset)

    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets: -2 earliest, -1 latest, -3 the record with the max timestamp, or the first record with a
        timestamp >= target; None when no record qualifies."""
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            earliest = self.leader_epoch_cache.earliest_entry()
            epoch = earliest.epoch if earliest is not None and earliest.start_offset <= self._log_start_offset \
                else None
            return TimestampAndOffset(NO_TIMESTAMP, self._log_start_offset, epoch)
        if target_timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self.log_end_offset, self.leader_epoch_cache.latest_epoch)
        if target_timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
            return TimestampAndOffset(NO_TIMESTAMP, -1, -1)  # no tiered storage: what Kafka answers without it
        if target_timestamp == MAX_TIMESTAMP:
            return self._local.max_timestamp_record()
        return self._local.find_offset_by_timestamp(target_timestamp, self._log_start_offset)

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """(end offset, epoch) for OffsetForLeaderEpoch, or None when the epoch is unknown."""
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch, self.log_end_offset)
        return None if offset == UNDEFINED_EPOCH_OFFSET else (offset, epoch)

    # --- producers ---

    def active_producers(self) -> dict[int, ProducerStateEntry]:
        with self._lock:
            return dict(self.producer_state.producers)

    def remove_expired_producers(self, now_ms: int | None = None) -> None:
        with self._lock:
            self.producer_state.remove_expired_producers(_now_if_none(now_ms))

    def take_producer_snapshot(self) -> None:
        with self._lock:
            self.producer_state.take_snapshot()

    # --- flushing ---

    def flush(self, up_to: int | None = None) -> None:
        """Fsync the segments holding offsets below `up_to` (default: the log end offset) and move the recovery
        point there."""
        local = self._local
        offset = local.log_end_offset if up_to is None else up_to
        if offset <= local.recovery_point:
            return
        local.flush(offset)
        with self._lock:
            local.mark_flushed(offset)

    def flush_if_due(self, now: int) -> None:
        """The flush.ms policy, called periodically by the log manager."""
        if now - self._local.last_flush_ms >= self.config.flush_ms:
            self.flush()
            self._local.last_flush_ms = now

    # --- retention and truncation ---

    def delete_old_segments(self, now_ms: int | None = None) -> int:
        """Apply retention (retention.py): segments wholly before the log start offset, then by retention.bytes and
        retention.ms (delete policy only). Returns how many segments went."""
        now = _now_if_none(now_ms)
        deleted = self._delete_old_segments(self._below_log_start_offset, "log start offset breach", now)
        if self.config.delete:
            retention_bytes = self.config.retention_bytes
            deleted += self._delete_old_segments(retention_size_breach(self.size, retention_bytes),
                                                 f"retention size {retention_bytes} breach", now)
            retention_ms = self.config.retention_ms
            deleted += self._delete_old_segments(retention_ms_breach(now, retention_ms),
                                                 f"retention time {retention_ms}ms breach", now)
        return deleted

    def _below_log_start_offset(self, segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return next_segment is not None and next_segment.base_offset <= self._log_start_offset

    def _delete_old_segments(self, predicate: SegmentPredicate | None, reason: str, now: int) -> int:
        if predicate is None:
            return 0
        with self._lock:
            self._local.check_open()
            deletable = deletable_segments(self.segments, self.high_watermark, self.log_end_offset, predicate)
            if not deletable:
                return 0
            count = len(deletable)
            if len(self.segments) == count:
                # A log keeps at least one segment: roll first, unless the last deletable one is that empty segment.
                new_segment = self.roll(now)
                if deletable[-1].base_offset == new_segment.base_offset:
                    deletable.pop()
            if deletable:
                following = self.segments.higher_segment(deletable[-1].base_offset)
                assert following is not None
                self.increment_log_start_offset(following.base_offset)
                log.info("Deleting segments of %s due to %s: %s", self.name, reason, deletable)
                self._local.remove_and_delete_segments(deletable)
            return count

    def increment_log_start_offset(self, new_log_start_offset: int) -> bool:
        """Move the log start offset forward (DeleteRecords, retention); it may not pass the high watermark."""
        with self._lock:
            if new_log_start_offset > self.high_watermark:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {new_log_start_offset} of partition {self.name} "
                    f"since it is larger than the high watermark {self.high_watermark}")
            if new_log_start_offset <= self._log_start_offset:
                return False
            self._log_start_offset = new_log_start_offset
            self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
            self.producer_state.on_log_start_offset_incremented(new_log_start_offset)
            self._update_first_unstable_offset()
            self._local.recovery_point = max(self._local.recovery_point, new_log_start_offset)
            log.info("Incremented log start offset of %s to %d", self.name, new_log_start_offset)
            return True

    def truncate_to(self, target_offset: int, now_ms: int | None = None) -> bool:
        """Remove every offset >= target_offset (a follower diverged from its leader); False if none was there."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.name} to a negative offset ({target_offset})")
        now = _now_if_none(now_ms)
        with self._lock:
            local = self._local
            local.check_open()
            if target_offset >= local.log_end_offset:
                return False
            first = self.segments.first
            assert first is not None
            if first.base_offset > target_offset:
                self.truncate_fully_and_start_at(target_offset, now)
                return True
            log.info("Truncating %s to offset %d", self.name, target_offset)
            self._note_truncation(target_offset)
            local.truncate_to(target_offset, now)
            self._log_start_offset = min(self._log_start_offset, target_offset)
            self.leader_epoch_cache.truncate_from_end(target_offset)
            rebuild_producer_state(self.producer_state, self.segments, self._log_start_offset, target_offset, now,
                                   False, self.name)
            if self.high_watermark >= target_offset:
                self._high_watermark = local.log_end_offset_metadata
            self._update_first_unstable_offset()
            return True

    def truncate_fully_and_start_at(self, new_offset: int, now_ms: int | None = None) -> None:
        """Delete everything and start an empty log at `new_offset`."""
        now = _now_if_none(now_ms)
        with self._lock:
            local = self._local
            local.check_open()
            log.info("Truncating %s fully and starting at offset %d", self.name, new_offset)
            self._note_truncation(new_offset)
            local.truncate_fully_and_start_at(new_offset, now)
            self.leader_epoch_cache.clear_and_flush()
            self.producer_state.truncate_fully_and_start_at(new_offset)
            self._log_start_offset = new_offset
            self._high_watermark = local.log_end_offset_metadata
            self._update_first_unstable_offset()

    # --- compaction (the log cleaner, compaction.py) ---

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        return self._local.collect_aborted_transactions(start_offset, upper_bound_offset)

    def replace_segments(self, new_segment: LogSegment, old_segments: list[LogSegment], old_sizes: list[int]) -> bool:
        """Swap a cleaned segment in for `old_segments`; False (nothing changed) if retention or truncation removed
        or cut any of them since the cleaner read them at `old_sizes`."""
        with self._lock:
            if not self.holds_segments(old_segments, old_sizes):
                return False
            self._local.replace_segments(new_segment, old_segments)
            return True

    def holds_segments(self, segments: list[LogSegment], sizes: list[int]) -> bool:
        """Whether the (open) log still holds exactly these segments at these sizes."""
        return not self._local.closed and all(self.segments.get(s.base_offset) is s and s.size == size
                                              for s, size in zip(segments, sizes))

    def _note_truncation(self, offset: int) -> None:
        self._truncated_to = offset if self._truncated_to is None else min(self._truncated_to, offset)

    def take_truncation_point(self) -> int | None:
        """The lowest offset truncated to since the last call (the log cleaner's), or None."""
        with self._lock:
            offset, self._truncated_to = self._truncated_to, None
            return offset

    # --- configuration and lifecycle ---

    def update_config(self, config: LogConfig) -> None:
        """Apply a changed topic configuration (AlterConfigs); new segments pick up the new values."""
        with self._lock:
            self.config = config
            self._local.update_config(config)

    def close(self) -> None:
        """Flush, write a producer snapshot at the log end (so the next start replays nothing) and close the files."""
        with self._lock:
            if self._local.closed:
                return
            self.flush()
            self.producer_state.take_snapshot()
            self._local.close()

    def rename_dir(self, name: str) -> None:
        """Move the partition directory to a sibling called `name` (deletion, or the end of a replica move)."""
        with self._lock:
            new_dir = self._local.rename_dir(name)
            self.producer_state.update_dir(new_dir)
            self.leader_epoch_cache.update_dir(new_dir)

    def delete(self) -> None:
        """Close the files and remove the directory and everything in it."""
        with self._lock:
            self._local.delete()


def _now_if_none(now: int | None) -> int:
    return now_ms() if now is None else now

