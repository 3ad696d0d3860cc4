"""Compaction of one log (Kafka's Cleaner): keep the latest record of each key, write cleaned segments.

The cleaning itself runs in a cleaner process (cleaner_process.py), away from the broker's interpreter: it reads
sealed segment files and writes new ones, and needs nothing of the broker but a CleaningJob, the picture of the log
the broker took when the cleaning began (cleaner_jobs.py). One cleaning, over the dirty section [first dirty offset,
first uncleanable offset) chosen by the cleaner manager (cleaner_manager.py):

  1. build the offset map (cleaner_offset_map.py) over the dirty section: key hash -> the latest offset of that key,
     skipping aborted transactions; when the map is full the cleaning stops at the last offset it mapped (the end
     offset, which becomes the next first dirty offset);
  2. group the segments below the end offset so that each group fits one segment (segment.bytes, the index sizes,
     32-bit relative offsets), and clean each group into one new segment, <base>.log.cleaned with its indexes;
  3. for each batch, as Kafka's MemoryRecords.filterTo with the cleaner's filter:
       * a record is kept if it is past the map's range, or it is the latest of its key and not a tombstone whose
         delete horizon has passed (records without key are dropped: they cannot be in a compacted topic);
       * records of aborted transactions are dropped; a COMMIT/ABORT marker goes once nothing of its transaction is
         left and its delete horizon has passed;
       * a batch left with none of its records is dropped, except the last batch of each active producer (kept as
         an empty batch header, so the producer's epoch and last sequence survive: idempotence across cleaning) and
         the last batch of the cleaned range (so its end offset survives);
       * a batch that keeps every record and needs no delete horizon is copied as it is; otherwise it is rebuilt
         with its survivors at their offsets (gaps are normal), same codec, a new CRC; a batch with tombstones or
         a removable marker gets the delete horizon (KIP-534: attribute bit 6, baseTimestamp = now +
         delete.retention.ms) the first time it is cleaned, and they are removed by a cleaning after that time;
  4. the broker swaps each cleaned segment in (Log.replace_segments: .cleaned -> .swap -> the live name, old files
     -> .deleted), so a crash at any point recovers to either the old segments or the new one (loader.py).

Only the active segment of a log changes, and it is never cleaned, so the sealed segments are read without the
log's lock, through read-only files (a segment that retention removes meanwhile is never recreated). If retention
or truncation changed the segments meanwhile, the broker refuses the swap and the cleaning starts again later.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from wirebroker.log.batch_records import MAX_DECOMPRESSED_RECORDS_BYTES
from wirebroker.log.cleaner_offset_map import SkimpyOffsetMap
from wirebroker.log.cleaner_transactions import CleanedTransactionMetadata
from wirebroker.log.config import LogConfig
from wirebroker.log.file_records import FileRecords
from wirebroker.log.files import CLEANED_FILE_SUFFIX, TopicPartition, log_file
from wirebroker.log.producer_state import NO_PRODUCER_ID
from wirebroker.log.segment import LogSegment
from wirebroker.log.txn_index import AbortedTxn
from wirebroker.protocol.batch_rewrite import (
    ScannedRecord,
    build_empty_batch,
    build_retained_batch,
    scan_batch,
)
from wirebroker.protocol.records import BatchHeader, read_header

log = logging.getLogger(__name__)

INT32_MAX = 2**31 - 1


class LogCleaningAbortedError(Exception):
    """The cleaning of a log was aborted (the log is being deleted or paused, or its segments changed); its partial
    output is discarded."""


class Throttle(Protocol):
    """What the cleaner calls with every chunk of bytes it reads or writes (log.cleaner.io.max.bytes.per.second)."""

    def maybe_throttle(self, observed: int) -> None: ...


@dataclass
class CleanerStats:
    """Counts of one cleaning (Kafka's CleanerStats), for the log line and tests."""

    start_ms: float = field(default_factory=time.monotonic)
    map_complete_ms: float = 0.0
    end_ms: float = 0.0
    map_bytes_read: int = 0
    map_messages_read: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    messages_read: int = 0
    messages_written: int = 0
    invalid_messages: int = 0
    segments_read: int = 0
    segments_written: int = 0
    buffer_utilization: float = 0.0

    @property
    def elapsed_seconds(self) -> float:
        return self.end_ms - self.start_ms


@dataclass(frozen=True)
class SegmentToClean:
    """A sealed segment as a cleaning sees it: its size then (only that much is read, and the swap is refused if the
    segment changed), its index sizes (for grouping), its modification time (the cleaned segment keeps the newest of
    its group's, for retention by time and min.compaction.lag.ms) and the aborted transactions overlapping it."""

    base_offset: int
    size: int
    offset_index_bytes: int
    time_index_bytes: int
    last_modified_ms: int
    aborted_transactions: tuple[AbortedTxn, ...]  # overlapping [base_offset, the next segment's base offset)


@dataclass(frozen=True)
class CleaningJob:
    """Everything a cleaning needs of the log, taken by the broker when it begins (picklable: it goes to the cleaner
    process)."""

    topic_partition: TopicPartition
    log_name: str
    log_dir: str
    config: LogConfig
    first_dirty_offset: int
    first_uncleanable_offset: int  # a segment's base offset
    first_dirty_position: int  # the byte position to start mapping from in the first dirty offset's segment
    map_aborted_transactions: tuple[AbortedTxn, ...]  # overlapping the dirty section
    segments: tuple[SegmentToClean, ...]  # every segment below the first uncleanable offset
    last_records_of_active_producers: dict[int, tuple[int, int]]  # producer id -> (last data offset or -1, epoch)
    current_time: int


@dataclass(frozen=True)
class CleaningResult:
    """A finished cleaning: its cleaned segments, each <first base offset>.*.cleaned replacing the segments whose base
    offsets its group lists, to be swapped in by the broker in this order."""

    end_offset: int  # the first offset not cleaned: the next first dirty offset
    stats: CleanerStats
    groups: list[tuple[int, ...]]


class Cleaner:
    def __init__(self, cleaner_id: int, offset_map: SkimpyOffsetMap, dup_buffer_load_factor: float,
                 throttler: Throttle, check_done: Callable[[TopicPartition], None]) -> None:
        """`check_done` raises LogCleaningAbortedError when the partition's cleaning was aborted."""
        if offset_map.slots * dup_buffer_load_factor <= 1:
            raise ValueError("The offset map is too small to fit even a single message, so log cleaning would never "
                             "make progress: increase log.cleaner.dedupe.buffer.size or decrease log.cleaner.threads")
        self.id = cleaner_id
        self.offset_map = offset_map
        self.dup_buffer_load_factor = dup_buffer_load_factor
        self.throttler = throttler
        self.check_done = check_done

    def clean(self, job: CleaningJob) -> CleaningResult:
        """Write the cleaned segments of the job's log (the broker swaps them in); on any error none is left."""
        stats = CleanerStats()
        self.build_offset_map(job, stats)
        end_offset = self.offset_map.latest_offset + 1
        stats.map_complete_ms = time.monotonic()
        transactions = CleanedTransactionMetadata()
        groups = group_segments_by_size([s for s in job.segments if s.base_offset < end_offset],
                                        job.config.segment_size, job.config.segment_index_bytes,
                                        job.first_uncleanable_offset)
        written: list[tuple[int, ...]] = []
        try:
            for group in groups:
                self.clean_segments(job, group, stats, transactions)
                written.append(tuple(segment.base_offset for segment in group))
        except BaseException:
            for bases in written:
                discard_cleaned_segment(job.log_dir, job.config, bases[0])
            raise
        stats.buffer_utilization = self.offset_map.utilization
        stats.end_ms = time.monotonic()
        return CleaningResult(end_offset, stats, written)

    # --- the offset map ---

    def build_offset_map(self, job: CleaningJob, stats: CleanerStats) -> None:
        """Map each key of the dirty section to its latest offset, until the map holds slots * load factor keys."""
        offset_map = self.offset_map
        start, end = job.first_dirty_offset, job.first_uncleanable_offset
        offset_map.clear(start)
        dirty = segments_covering(job.segments, start, end)
        next_starts = [segment.base_offset for segment in dirty[1:]] + [end]
        transactions = CleanedTransactionMetadata()
        transactions.add_aborted_transactions(list(job.map_aborted_transactions))
        max_desired_map_size = int(offset_map.slots * self.dup_buffer_load_factor)
        for segment, next_start in zip(dirty, next_starts):
            position = job.first_dirty_position if segment.base_offset <= start else 0
            if self._map_segment(job, segment, position, next_start, max_desired_map_size, transactions, stats):
                log.debug("Offset map of %s is full; segment %d is partly mapped", job.log_name, segment.base_offset)
                return
        log.debug("Offset map of %s over [%d, %d) complete: %d keys", job.log_name, start, end, len(offset_map))

    def _map_segment(self, job: CleaningJob, segment: SegmentToClean, position: int, next_segment_start: int,
                     max_desired_map_size: int, transactions: CleanedTransactionMetadata, stats: CleanerStats) -> bool:
        """Add the segment's keys to the map; True if the map filled up on the way."""
        offset_map = self.offset_map
        start = job.first_dirty_offset
        with open_segment(job, segment) as records:
            for batch in records.batches(position, segment.size, with_data=True):
                self.check_done(job.topic_partition)
                header, data = batch.header, batch.data
                assert data is not None
                self.throttler.maybe_throttle(header.size)
                stats.map_bytes_read += header.size
                if header.is_control:
                    transactions.on_control_batch_read(header, data)
                    stats.map_messages_read += 1
                elif transactions.on_batch_read(header):
                    stats.map_messages_read += header.records_count  # aborted: its keys are not mapped
                else:
                    for record in scan_batch(data, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES).records:
                        if record.key is not None and record.offset >= start:
                            if len(offset_map) >= max_desired_map_size:
                                return True
                            offset_map.put(record.key, record.offset)
                        stats.map_messages_read += 1
                if header.last_offset >= start:
                    offset_map.update_latest_offset(header.last_offset)
        # Offsets may have gaps (an earlier cleaning): the mapped range reaches the next segment.
        offset_map.update_latest_offset(next_segment_start - 1)
        return False

    # --- rewriting ---

    def clean_segments(self, job: CleaningJob, segments: list[SegmentToClean], stats: CleanerStats,
                       transactions: CleanedTransactionMetadata) -> None:
        """Clean a group of segments into one new segment, <base>.*.cleaned, closed and ready to be swapped in."""
        cleaned = new_cleaned_segment(job.log_dir, job.config, segments[0].base_offset, job.current_time)
        transactions.cleaned_index = cleaned.txn_index
        try:
            for segment in segments:
                transactions.add_aborted_transactions(list(segment.aborted_transactions))
                self._clean_into(job, segment, cleaned, transactions, stats)
                stats.segments_read += 1
            cleaned.on_become_inactive_segment()
            cleaned.flush()
            # The cleaned segment keeps the age of the newest one it replaces (retention by time, min.compaction.lag).
            cleaned.set_last_modified(segments[-1].last_modified_ms)
            cleaned.close_handlers()
            stats.segments_written += 1
        except BaseException:
            cleaned.close_handlers()
            cleaned.delete_if_exists()
            raise

    def _clean_into(self, job: CleaningJob, source: SegmentToClean, dest: LogSegment,
                    transactions: CleanedTransactionMetadata, stats: CleanerStats) -> None:
        record_filter = _RecordFilter(self.offset_map, job.current_time, job.config.delete_retention_ms, transactions,
                                      job.last_records_of_active_producers, job.first_uncleanable_offset, stats)
        with open_segment(job, source) as records:
            for batch in records.batches(0, source.size, with_data=True):
                self.check_done(job.topic_partition)
                header, data = batch.header, batch.data
                assert data is not None
                self.throttler.maybe_throttle(header.size)
                stats.bytes_read += header.size
                retained = record_filter.filter(header, data)
                if retained is None:
                    continue
                kept, kept_header = retained
                dest.append(kept_header.last_offset, kept_header.max_timestamp, kept_header.last_offset, kept)
                self.throttler.maybe_throttle(len(kept))
                stats.bytes_written += len(kept)


class _RecordFilter:
    """The cleaner's decisions for one batch (Kafka's RecordFilter in Cleaner.cleanInto, applied as
    MemoryRecords.filterTo applies it)."""

    def __init__(self, offset_map: SkimpyOffsetMap, current_time: int, delete_retention_ms: int,
                 transactions: CleanedTransactionMetadata, last_records: dict[int, tuple[int, int]],
                 upper_bound_offset_of_round: int, stats: CleanerStats) -> None:
        self.offset_map = offset_map
        self.current_time = current_time
        self.delete_retention_ms = delete_retention_ms
        self.transactions = transactions
        self.last_records = last_records
        self.upper_bound_offset_of_round = upper_bound_offset_of_round
        self.stats = stats

    def filter(self, header: BatchHeader, data: memoryview) -> tuple[bytes | memoryview, BatchHeader] | None:
        """The batch to write for `header` (the original bytes, a rebuilt batch or an empty header), or None."""
        if header.is_control:
            can_discard = self.transactions.on_control_batch_read(header, data)
            discard_records = (can_discard and header.has_delete_horizon
                               and header.base_timestamp <= self.current_time)
        else:
            can_discard = self.transactions.on_batch_read(header)
            discard_records = can_discard
        retain_empty = ((header.producer_id != NO_PRODUCER_ID and self._is_last_batch_of_producer(header))
                        or header.next_offset == self.upper_bound_offset_of_round)
        if (discard_records or self._superseded(header)) and not retain_empty:
            self.stats.messages_read += header.records_count
            return None
        scanned = scan_batch(data, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES)
        self.stats.messages_read += len(scanned.records)
        if discard_records:
            kept: list[ScannedRecord] = []
        elif header.is_control:
            kept = scanned.records
        else:
            kept = [record for record in scanned.records if self._should_retain_record(header, record)]
        if not kept:
            return _with_header(build_empty_batch(header)) if retain_empty else None
        self.stats.messages_written += len(kept)
        contains_marker_for_empty_txn = can_discard and header.is_control
        contains_tombstones = not all(record.has_value for record in kept)
        need_delete_horizon = (contains_tombstones or contains_marker_for_empty_txn) and not header.has_delete_horizon
        if len(kept) == len(scanned.records) and not need_delete_horizon:
            return data, header
        if need_delete_horizon:
            horizon: int | None = self.current_time + self.delete_retention_ms
        else:
            horizon = header.base_timestamp if header.has_delete_horizon else None
        return _with_header(build_retained_batch(header, scanned.body, kept, horizon))

    def _superseded(self, header: BatchHeader) -> bool:
        """Whether every record of a data batch inside the mapped range has a later record of its key: the batch
        goes without reading its records (most batches of a dirty section, so the cleaner reads them only once)."""
        offset_map = self.offset_map
        if header.is_control or header.base_offset < offset_map.start_offset \
                or header.last_offset > offset_map.latest_offset:
            return False
        latest = offset_map.latest_offsets()
        return not any(offset in latest for offset in range(header.base_offset, header.last_offset + 1))

    def _is_last_batch_of_producer(self, header: BatchHeader) -> bool:
        last = self.last_records.get(header.producer_id)
        if last is None:
            return False
        last_data_offset, producer_epoch = last
        if last_data_offset >= 0:
            return header.last_offset == last_data_offset
        return header.is_control and header.producer_epoch == producer_epoch

    def _should_retain_record(self, header: BatchHeader, record: ScannedRecord) -> bool:
        if record.offset > self.offset_map.latest_offset:
            return True  # past the mapped range: cleaned next time
        if record.key is None:
            self.stats.invalid_messages += 1
            return False
        if record.offset < self.offset_map.get(record.key):
            return False  # a later record of the key exists
        retain_deletes = not header.has_delete_horizon or self.current_time < header.base_timestamp
        return record.has_value or retain_deletes


def _with_header(batch: bytes) -> tuple[bytes, BatchHeader]:
    return batch, read_header(batch)


@contextlib.contextmanager
def open_segment(job: CleaningJob, segment: SegmentToClean) -> Iterator[FileRecords]:
    """The segment's .log file, read-only; a segment gone since the job was made (retention, truncation, deletion)
    aborts the cleaning."""
    try:
        records = FileRecords(log_file(job.log_dir, segment.base_offset), writable=False)
    except FileNotFoundError as exc:
        raise LogCleaningAbortedError(f"The segments of {job.log_name} changed while they were cleaned") from exc
    try:
        yield records
    finally:
        records.close()


def segments_covering(segments: tuple[SegmentToClean, ...], from_offset: int, to_offset: int
                      ) -> list[SegmentToClean]:
    """The segments that may hold offsets in [from_offset, to_offset): from the floor of from_offset on."""
    if from_offset >= to_offset:
        return []
    floor = max((i for i, s in enumerate(segments) if s.base_offset <= from_offset), default=0)
    return [s for s in segments[floor:] if s.base_offset < to_offset]


def group_segments_by_size(segments: list[SegmentToClean], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[SegmentToClean]]:
    """Consecutive segments grouped so that each group's log, offset index and time index fit one segment and its
    offsets fit 32-bit relative offsets (Kafka's Cleaner.groupSegmentsBySize)."""
    groups: list[list[SegmentToClean]] = []
    i = 0
    while i < len(segments):
        group = [segments[i]]
        log_size = segments[i].size
        index_size = segments[i].offset_index_bytes
        time_index_size = segments[i].time_index_bytes
        i += 1
        while i < len(segments):
            candidate = segments[i]
            # The worst-case last offset of the candidate: the next segment's base, or the uncleanable offset.
            last_offset = segments[i + 1].base_offset - 1 if i + 1 < len(segments) else first_uncleanable_offset - 1
            if not (log_size + candidate.size <= max_size
                    and index_size + candidate.offset_index_bytes <= max_index_size
                    and time_index_size + candidate.time_index_bytes <= max_index_size
                    and (candidate.size == 0 or last_offset - group[0].base_offset <= INT32_MAX)):
                break
            group.append(candidate)
            log_size += candidate.size
            index_size += candidate.offset_index_bytes
            time_index_size += candidate.time_index_bytes
            i += 1
        groups.append(group)
    return groups


def new_cleaned_segment(directory: str, config: LogConfig, base_offset: int, now: int) -> LogSegment:
    """An empty <base>.*.cleaned segment, replacing leftovers of an aborted cleaning."""
    discard_cleaned_segment(directory, config, base_offset)
    return LogSegment(directory, base_offset, config, now, suffix=CLEANED_FILE_SUFFIX)


def discard_cleaned_segment(directory: str, config: LogConfig, base_offset: int) -> None:
    """Delete the <base>.*.cleaned files, if any."""
    stale = LogSegment(directory, base_offset, config, 0, suffix=CLEANED_FILE_SUFFIX)
    stale.close_handlers()
    stale.delete_if_exists()
