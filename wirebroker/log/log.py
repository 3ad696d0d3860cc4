"""The log of one partition replica (Kafka's UnifiedLog with LocalLog): segments, offsets, producer state, epochs.

Offsets, as in Kafka:

    log_start_offset <= last_stable_offset <= high_watermark <= log_end_offset
    recovery_point: everything below it is flushed to disk (recovery after a crash starts there)

Appends (`append_as_leader`) validate the batch, assign offsets and the leader epoch in place (the CRC does not cover
them), check idempotent/transactional producer state, roll the segment if needed and write the bytes. A retried batch
that producer state recognises is not written again: the append returns the offsets of the original. The high
watermark is the caller's (the replica layer advances it with `update_high_watermark`).

Reads (`read`) return a FileRegion of a segment file up to an upper bound offset (the high watermark for consumers,
the last stable offset for read_committed, the log end offset for followers) and raise OffsetOutOfRangeError outside
[log_start_offset, log_end_offset].

Thread-safety: one lock per log serializes appends, rolls, truncation, retention and flushes. Reads take no lock: the
segment list and the log end offset are immutable values replaced by writers, and segment files removed by retention
or truncation stay open for file.delete.delay.ms, so a read that raced a deletion still sends valid bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from typing import NamedTuple

from wirebroker.log.batch_records import offset_of_max_timestamp
from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo, LogOffsetMetadata
from wirebroker.log.file_records import TimestampAndOffset
from wirebroker.log.files import (
    DELETED_FILE_SUFFIX,
    TopicPartition,
    delete_file_if_exists,
    log_file,
    offset_index_file,
    parse_delete_dir_name,
    parse_partition_dir_name,
    time_index_file,
    txn_index_file,
)
from wirebroker.log.leader_epoch_cache import (
    UNDEFINED_EPOCH_OFFSET,
    LeaderEpochFileCache,
)
from wirebroker.log.loader import LogLoader, rebuild_producer_state
from wirebroker.log.metadata_files import (
    read_partition_metadata,
    write_partition_metadata,
)
from wirebroker.log.producer_state import (
    PRODUCER_ID_EXPIRATION_MS_DEFAULT,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateEntry,
    ProducerStateManager,
)
from wirebroker.log.scheduler import Scheduler
from wirebroker.log.segment import LogSegment
from wirebroker.log.segments import LogSegments
from wirebroker.log.txn_index import AbortedTxn
from wirebroker.protocol.errors import (
    CorruptMessageError,
    InconsistentTopicIdError,
    InvalidTimestampError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
)
from wirebroker.protocol.records import (
    BatchHeader,
    assign_offsets,
    crc_is_valid,
    read_header,
    set_log_append_time,
    validate_batches,
)

log = logging.getLogger(__name__)

NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
INT32_MAX = 2**31 - 1

# ListOffsets special timestamps (Kafka's ListOffsetsRequest).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3  # KIP-734
EARLIEST_LOCAL_TIMESTAMP = -4  # KIP-405
LATEST_TIERED_TIMESTAMP = -5  # KIP-1005
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6  # KIP-1023


def now_ms() -> int:
    return time.time_ns() // 1_000_000


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


class _StagedBatch(NamedTuple):
    position: int
    header: BatchHeader  # with the offsets and leader epoch assigned


class Log:
    """Use `Log.open` to load or create a partition's log."""

    def __init__(self, directory: str, config: LogConfig, topic_partition: TopicPartition, segments: LogSegments,
                 leader_epoch_cache: LeaderEpochFileCache, producer_state: ProducerStateManager,
                 log_start_offset: int, recovery_point: int, log_end_offset_metadata: LogOffsetMetadata,
                 topic_id: uuid.UUID | None, scheduler: Scheduler | None) -> None:
        self.dir = directory
        self.config = config
        self.topic_partition = topic_partition
        self.segments = segments
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state = producer_state
        self.topic_id = topic_id
        self._scheduler = scheduler
        self._lock = threading.RLock()
        self._log_start_offset = log_start_offset
        self._recovery_point = recovery_point
        self._leo = log_end_offset_metadata
        self._high_watermark = LogOffsetMetadata(log_start_offset)
        self._first_unstable_offset: int | None = None
        self._last_flush_ms = now_ms()
        self._offset_metadata_cache = log_end_offset_metadata
        self._closed = False
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
        topic_partition = _topic_partition_of(directory)
        name = str(topic_partition)
        topic_id = _check_topic_id(directory, topic_id, name)
        leader_epoch_cache = LeaderEpochFileCache(directory, name)
        producer_state = ProducerStateManager(directory, name, producer_id_expiration_ms)
        segments = LogSegments()
        loaded = LogLoader(directory, name, config, segments, log_start_offset, recovery_point, had_clean_shutdown,
                           leader_epoch_cache, producer_state, now).load()
        log.info("Loaded log %s: log start offset %d, log end offset %d, recovery point %d, %d segments", name,
                 loaded.log_start_offset, loaded.next_offset_metadata.message_offset, loaded.recovery_point,
                 len(segments))
        return cls(directory, config, topic_partition, segments, leader_epoch_cache, producer_state,
                   loaded.log_start_offset, loaded.recovery_point, loaded.next_offset_metadata, topic_id, scheduler)

    def __repr__(self) -> str:
        return f"Log({self.topic_partition}, start={self._log_start_offset}, end={self.log_end_offset})"

    # --- offsets ---

    @property
    def name(self) -> str:
        return str(self.topic_partition)

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._leo.message_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self._leo

    @property
    def high_watermark(self) -> int:
        return self._high_watermark.message_offset

    @property
    def recovery_point(self) -> int:
        return self._recovery_point

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

    def unflushed_messages(self) -> int:
        return self.log_end_offset - self._recovery_point

    def update_high_watermark(self, high_watermark: int) -> int:
        """Set the high watermark, clamped to [log_start_offset, log_end_offset]; returns the value set."""
        with self._lock:
            leo = self._leo
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
                         origin: AppendOrigin = AppendOrigin.CLIENT) -> LogAppendInfo:
        """Append a produce request's records for this partition as the leader.

        `records` is modified in place (offsets, leader epoch, LogAppendTime) and written as it is."""
        now = _now_if_none(now_ms)
        view = memoryview(records)
        headers = (validate_batches(view, self.config.max_message_bytes) if origin is AppendOrigin.CLIENT
                   else _scan_batches(view))
        if len(view) > self.config.segment_size:
            raise RecordListTooLargeError(f"Message batch size is {len(view)} bytes in append to partition "
                                          f"{self.name}, which exceeds the maximum configured segment size of "
                                          f"{self.config.segment_size}")
        if not self.config.log_append_time:
            self._check_timestamps(headers, now)
        with self._lock:
            self._check_open()
            staged = self._assign_offsets(view, headers, leader_epoch, now)
            first, last = staged[0].header, staged[-1].header
            max_batch = max(staged, key=lambda b: b.header.max_timestamp)  # the first batch on ties
            duplicate = self._find_duplicate(staged) if origin is AppendOrigin.CLIENT else None
            if duplicate is not None:
                return LogAppendInfo(duplicate.first_offset, duplicate.last_offset, duplicate.timestamp,
                                     duplicate.last_offset, duplicate.timestamp, self._log_start_offset, 0, 0,
                                     last.partition_leader_epoch, is_duplicate=True)
            segment = self._maybe_roll(len(view), max_batch.header.max_timestamp, last.last_offset, now)
            producer_updates, completed_txns = self._check_producer_state(view, staged, origin)
            for batch in staged:
                if batch.header.partition_leader_epoch >= 0:
                    self.leader_epoch_cache.assign(batch.header.partition_leader_epoch, batch.header.base_offset)
            segment.append(last.last_offset, max_batch.header.max_timestamp, max_batch.header.last_offset, view)
            self._leo = LogOffsetMetadata(last.next_offset, segment.base_offset, segment.size)
            self._apply_producer_state(segment, producer_updates, completed_txns, last.next_offset)
            info = LogAppendInfo(first.base_offset, last.last_offset, max_batch.header.max_timestamp,
                                 max_batch.header.last_offset, now if self.config.log_append_time else NO_TIMESTAMP,
                                 self._log_start_offset, len(view), sum(b.header.records_count for b in staged),
                                 last.partition_leader_epoch)
            if self.unflushed_messages() >= self.config.flush_messages:
                self.flush()
            return info

    def _check_timestamps(self, headers: list[BatchHeader], now: int) -> None:
        """message.timestamp.before/after.max.ms for CreateTime, checked on each batch's first and max timestamp
        (Kafka checks every record; producers stamp the first record as the base, so the range is the same)."""
        for header in headers:
            if header.is_control:
                continue
            if header.base_timestamp < now - self.config.message_timestamp_before_max_ms:
                raise InvalidTimestampError(
                    f"Timestamp {header.base_timestamp} of message with offset {header.base_offset} is out of range: "
                    f"it is more than {self.config.message_timestamp_before_max_ms} ms before the broker's time {now}")
            if header.max_timestamp > now + self.config.message_timestamp_after_max_ms:
                raise InvalidTimestampError(
                    f"Timestamp {header.max_timestamp} of message with offset {header.base_offset} is out of range: "
                    f"it is more than {self.config.message_timestamp_after_max_ms} ms after the broker's time {now}")

    def _assign_offsets(self, view: memoryview, headers: list[BatchHeader], leader_epoch: int,
                        now: int) -> list[_StagedBatch]:
        staged = []
        position, next_offset = 0, self._leo.message_offset
        for header in headers:
            assign_offsets(view, position, next_offset, leader_epoch)
            if self.config.log_append_time and not header.is_control:
                set_log_append_time(view, position, now)
            assigned = read_header(view, position)
            staged.append(_StagedBatch(position, assigned))
            position += assigned.size
            next_offset = assigned.next_offset
        return staged

    def _find_duplicate(self, staged: list[_StagedBatch]) -> BatchMetadata | None:
        for batch in staged:
            header = batch.header
            if header.producer_id == NO_PRODUCER_ID:
                continue
            entry = self.producer_state.last_entry(header.producer_id)
            duplicate = entry.find_duplicate_batch(header.producer_epoch, header.base_sequence,
                                                   header.last_sequence) if entry else None
            if duplicate is not None:
                log.debug("Duplicate batch of producer %d (sequences %d..%d) on %s, answering with offsets %d..%d",
                          header.producer_id, header.base_sequence, header.last_sequence, self.name,
                          duplicate.first_offset, duplicate.last_offset)
                return duplicate
        return None

    def _check_producer_state(self, view: memoryview, staged: list[_StagedBatch],
                              origin: AppendOrigin) -> tuple[dict[int, ProducerAppendInfo], list[CompletedTxn]]:
        updates: dict[int, ProducerAppendInfo] = {}
        completed = []
        for batch in staged:
            header = batch.header
            if header.producer_id == NO_PRODUCER_ID:
                continue
            append_info = updates.get(header.producer_id)
            if append_info is None:
                append_info = updates[header.producer_id] = self.producer_state.prepare_update(header.producer_id,
                                                                                               origin)
            completed_txn = append_info.append(header, view[batch.position:batch.position + header.size])
            if completed_txn is not None:
                completed.append(completed_txn)
        return updates, completed

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
            self._check_open()
            new_offset = self.log_end_offset
            active = self.segments.last
            assert active is not None
            if active.base_offset == new_offset and active.size == 0:
                return active  # the active segment is already an empty one at the log end
            active.on_become_inactive_segment()
            for path in (log_file(self.dir, new_offset), offset_index_file(self.dir, new_offset),
                         time_index_file(self.dir, new_offset), txn_index_file(self.dir, new_offset)):
                if delete_file_if_exists(path):
                    log.warning("Deleted stale file %s before rolling %s", path, self.name)
            segment = LogSegment(self.dir, new_offset, self.config, now)
            self.segments.add(segment)
            self._leo = LogOffsetMetadata(new_offset, segment.base_offset, 0)
            self.producer_state.update_map_end_offset(new_offset)
            self.producer_state.take_snapshot()
            log.info("Rolled new log segment of %s at offset %d", self.name, new_offset)
        self._run_later("flush-log", lambda: self.flush(new_offset), 0)
        return segment

    # --- reading ---

    def read(self, start_offset: int, max_bytes: int, upper_bound_offset: int | None = None,
             min_one_message: bool = True, include_aborted_transactions: bool = False) -> FetchDataInfo:
        """Records from `start_offset`, at most `max_bytes` (but a whole first batch if min_one_message), never past
        `upper_bound_offset` (None: the log end offset)."""
        log_start, leo = self._log_start_offset, self._leo
        segments = self.segments
        segment = segments.floor_segment(start_offset)
        if start_offset < log_start or start_offset > leo.message_offset or segment is None:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.name}, but we only have log "
                f"segments upto {leo.message_offset} and starting from {log_start}")
        upper = leo if upper_bound_offset is None else self._offset_metadata(min(upper_bound_offset,
                                                                                 leo.message_offset))
        if start_offset >= upper.message_offset:
            at = upper if start_offset == upper.message_offset else self._offset_metadata(start_offset)
            return FetchDataInfo(at, b"")
        while segment is not None:
            max_position = (upper.relative_position_in_segment if upper.segment_base_offset == segment.base_offset
                            else segment.size)
            info = segment.read(start_offset, max_bytes, max_position, min_one_message)
            if info is not None:
                if include_aborted_transactions:
                    info = info._replace(aborted_transactions=self._aborted_transactions_for(segment, info,
                                                                                           start_offset))
                return info
            segment = segments.higher_segment(segment.base_offset)
        return FetchDataInfo(leo, b"")

    def _offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """Where `offset` sits in the log (Kafka's convertToOffsetMetadataOrThrow), cached for repeated bounds."""
        leo = self._leo
        if offset == leo.message_offset:
            return leo
        cached = self._offset_metadata_cache
        if cached.message_offset == offset and self.segments.get(cached.segment_base_offset) is not None:
            return cached
        segment = self.segments.floor_segment(offset)
        while segment is not None:
            found = segment.translate_offset(offset)
            if found is not None:
                metadata = LogOffsetMetadata(offset, segment.base_offset, found.position)
                self._offset_metadata_cache = metadata
                return metadata
            segment = self.segments.higher_segment(segment.base_offset)
        return LogOffsetMetadata(offset)

    def _aborted_transactions_for(self, segment: LogSegment, info: FetchDataInfo,
                                  start_offset: int) -> list[AbortedTxn]:
        start = segment.translate_offset(start_offset)
        upper = (segment.offset_index.fetch_upper_bound_offset(start, len(info.records)) if start else None)
        if upper is not None:
            upper_bound = upper.offset
        else:
            higher = self.segments.higher_segment(segment.base_offset)
            upper_bound = higher.base_offset if higher is not None else self.log_end_offset
        return self.collect_aborted_transactions(start_offset, upper_bound)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [start_offset, upper_bound_offset), from the transaction indexes."""
        found: list[AbortedTxn] = []
        segment = self.segments.floor_segment(start_offset)
        while segment is not None:
            result = segment.collect_aborted_txns(start_offset, upper_bound_offset)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
            segment = self.segments.higher_segment(segment.base_offset)
        return found

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
            return self._max_timestamp_record()
        for segment in list(self.segments):
            if segment.largest_timestamp() >= target_timestamp:
                # Kafka stops at the first such segment; one whose records all lie below the log start offset (not
                # yet removed by retention) has no answer, so the search goes on to the next.
                found = segment.find_offset_by_timestamp(target_timestamp, self._log_start_offset)
                if found is not None:
                    return found
        return None

    def _max_timestamp_record(self) -> TimestampAndOffset | None:
        segments = list(self.segments)
        best = segments[0]
        for segment in segments[1:]:
            if segment.max_timestamp_so_far > best.max_timestamp_so_far:
                best = segment
        max_ts = best.read_max_timestamp_and_offset_so_far()
        position = best.offset_index.lookup(max_ts.offset).position
        for batch in best.log.batches(position):
            header = batch.header
            if header.max_timestamp == max_ts.timestamp:
                offset = offset_of_max_timestamp(best.log.read(batch.position, header.size), header)
                if offset is None:
                    return None
                epoch = header.partition_leader_epoch
                return TimestampAndOffset(header.max_timestamp, offset, epoch if epoch >= 0 else None)
        return None

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
        offset = self.log_end_offset if up_to is None else up_to
        if offset <= self._recovery_point:
            return
        for segment in self.segments.values(self._recovery_point, offset):
            segment.flush()
        with self._lock:
            if offset > self._recovery_point:
                self._recovery_point = offset
                self._last_flush_ms = now_ms()

    def flush_if_due(self, now: int) -> None:
        """The flush.ms policy, called periodically by the log manager."""
        if now - self._last_flush_ms >= self.config.flush_ms:
            self.flush()
            self._last_flush_ms = now

    # --- retention and truncation ---

    def delete_old_segments(self, now_ms: int | None = None) -> int:
        """Apply retention: segments wholly before the log start offset, then by retention.bytes and retention.ms
        (delete policy only). Segments at or past the high watermark are never deleted. Returns how many went."""
        now = _now_if_none(now_ms)
        deleted = self._delete_log_start_offset_breached_segments(now)
        if self.config.delete:
            deleted += self._delete_retention_size_breached_segments(now)
            deleted += self._delete_retention_ms_breached_segments(now)
        return deleted

    def _delete_log_start_offset_breached_segments(self, now: int) -> int:
        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return next_segment is not None and next_segment.base_offset <= self._log_start_offset
        return self._delete_old_segments(breached, "log start offset breach", now)

    def _delete_retention_size_breached_segments(self, now: int) -> int:
        retention_bytes = self.config.retention_bytes
        size = self.size
        if retention_bytes < 0 or size < retention_bytes:
            return 0
        excess = size - retention_bytes

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            nonlocal excess
            if excess - segment.size < 0:
                return False
            excess -= segment.size
            return True
        return self._delete_old_segments(breached, f"retention size {retention_bytes} breach", now)

    def _delete_retention_ms_breached_segments(self, now: int) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0

        def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
            return now - segment.largest_timestamp() > retention_ms
        return self._delete_old_segments(breached, f"retention time {retention_ms}ms breach", now)

    def _delete_old_segments(self, predicate: Callable[[LogSegment, LogSegment | None], bool], reason: str,
                             now: int) -> int:
        with self._lock:
            self._check_open()
            deletable = self._deletable_segments(predicate)
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
                self._remove_and_delete_segments(deletable)
            return count

    def _deletable_segments(self, predicate: Callable[[LogSegment, LogSegment | None], bool]) -> list[LogSegment]:
        segments = list(self.segments)
        deletable = []
        high_watermark = self.high_watermark
        for i, segment in enumerate(segments):
            next_segment = segments[i + 1] if i + 1 < len(segments) else None
            upper_bound = next_segment.base_offset if next_segment is not None else self.log_end_offset
            is_last_and_empty = next_segment is None and segment.size == 0
            if high_watermark >= upper_bound and predicate(segment, next_segment) and not is_last_and_empty:
                deletable.append(segment)
            else:
                break
        return deletable

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
            self._recovery_point = max(self._recovery_point, new_log_start_offset)
            log.info("Incremented log start offset of %s to %d", self.name, new_log_start_offset)
            return True

    def truncate_to(self, target_offset: int, now_ms: int | None = None) -> bool:
        """Remove every offset >= target_offset (a follower diverged from its leader); False if none was there."""
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.name} to a negative offset ({target_offset})")
        now = _now_if_none(now_ms)
        with self._lock:
            self._check_open()
            if target_offset >= self.log_end_offset:
                return False
            first = self.segments.first
            assert first is not None
            if first.base_offset > target_offset:
                self.truncate_fully_and_start_at(target_offset, now)
                return True
            log.info("Truncating %s to offset %d", self.name, target_offset)
            self._remove_and_delete_segments([s for s in self.segments if s.base_offset > target_offset])
            active = self.segments.last
            assert active is not None
            active.truncate_to(target_offset, now)
            self._leo = LogOffsetMetadata(target_offset, active.base_offset, active.size)
            self._recovery_point = min(self._recovery_point, target_offset)
            self._log_start_offset = min(self._log_start_offset, target_offset)
            self.leader_epoch_cache.truncate_from_end(target_offset)
            rebuild_producer_state(self.producer_state, self.segments, self._log_start_offset, target_offset, now,
                                   False, self.name)
            if self.high_watermark >= target_offset:
                self._high_watermark = self._leo
            self._offset_metadata_cache = self._leo
            self._update_first_unstable_offset()
            return True

    def truncate_fully_and_start_at(self, new_offset: int, now_ms: int | None = None) -> None:
        """Delete everything and start an empty log at `new_offset`."""
        now = _now_if_none(now_ms)
        with self._lock:
            self._check_open()
            log.info("Truncating %s fully and starting at offset %d", self.name, new_offset)
            old_segments = list(self.segments)
            segment = LogSegment(self.dir, new_offset, self.config, now)
            self._remove_and_delete_segments(old_segments)
            self.segments.add(segment)
            self._leo = LogOffsetMetadata(new_offset, new_offset, 0)
            self.leader_epoch_cache.clear_and_flush()
            self.producer_state.truncate_fully_and_start_at(new_offset)
            self._log_start_offset = self._recovery_point = new_offset
            self._high_watermark = self._offset_metadata_cache = self._leo
            self._update_first_unstable_offset()

    def _remove_and_delete_segments(self, segments: list[LogSegment]) -> None:
        """Take segments out of the log now; rename their files *.deleted and remove them after
        file.delete.delay.ms, so reads that already hold them finish first."""
        if not segments:
            return
        for segment in segments:
            self.segments.remove(segment.base_offset)
        for segment in segments:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
        snapshots = self.producer_state.remove_snapshots_for_deletion(s.base_offset for s in segments)

        def delete_files() -> None:
            for segment in segments:
                segment.delete_if_exists()
            for path in snapshots:
                delete_file_if_exists(path)
        self._run_later("delete-file", delete_files, self.config.file_delete_delay_ms)

    def _run_later(self, name: str, fn: Callable[[], None], delay_ms: int) -> None:
        scheduler = self._scheduler
        if scheduler is not None and scheduler.is_started:
            scheduler.schedule_once(f"{name}-{self.name}", fn, delay_ms)
        else:
            fn()

    # --- configuration and lifecycle ---

    def update_config(self, config: LogConfig) -> None:
        """Apply a changed topic configuration (AlterConfigs); new segments pick up the new values."""
        with self._lock:
            self.config = config

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"Log {self.name} is closed")

    def close(self) -> None:
        """Flush, write a producer snapshot at the log end (so the next start replays nothing) and close the files."""
        with self._lock:
            if self._closed:
                return
            self.flush()
            self.producer_state.take_snapshot()
            self.segments.close()
            self._closed = True

    def rename_dir(self, name: str) -> None:
        """Move the partition directory to a sibling called `name` (deletion, or the end of a replica move)."""
        with self._lock:
            new_dir = os.path.join(os.path.dirname(self.dir), name)
            os.rename(self.dir, new_dir)
            self.dir = new_dir
            for segment in self.segments:
                segment.update_dir(new_dir)
            self.producer_state.update_dir(new_dir)
            self.leader_epoch_cache.update_dir(new_dir)

    def delete(self) -> None:
        """Close the files and remove the directory and everything in it."""
        with self._lock:
            if not self._closed:
                for segment in self.segments:
                    segment.close_handlers()
                self._closed = True
            self.segments.clear()
            shutil.rmtree(self.dir, ignore_errors=True)


def _now_if_none(now: int | None) -> int:
    return now_ms() if now is None else now


def _topic_partition_of(directory: str) -> TopicPartition:
    name = os.path.basename(os.path.normpath(directory))
    parsed = parse_partition_dir_name(name) or parse_delete_dir_name(name)
    if parsed is None:
        raise ValueError(f"Found directory {directory}, '{name}' is not in the form of topic-partition")
    return parsed


def _check_topic_id(directory: str, topic_id: uuid.UUID | None, name: str) -> uuid.UUID | None:
    """The topic id of the partition: the one on disk must match the one given; a new one is written."""
    recorded = read_partition_metadata(directory)
    if recorded is not None and topic_id is not None and recorded != topic_id:
        raise InconsistentTopicIdError(f"Tried to assign topic ID {topic_id} to log for topic partition {name}, "
                                       f"but log already contained topic ID {recorded}")
    if recorded is None and topic_id is not None:
        write_partition_metadata(directory, topic_id)
    return topic_id if topic_id is not None else recorded


def _scan_batches(view: memoryview) -> list[BatchHeader]:
    """The batches of an append from inside the broker (coordinators, transaction markers): whole, with valid CRCs."""
    headers, position = [], 0
    while position < len(view):
        header = read_header(view, position)
        if not crc_is_valid(view, position, header):
            raise CorruptMessageError(f"Record batch at position {position} is incomplete or fails its CRC")
        headers.append(header)
        position += header.size
    if not headers:
        raise CorruptMessageError("An append must hold at least one record batch")
    return headers
