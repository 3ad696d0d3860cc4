"""The segments of one partition's log on this broker's disk (Kafka's LocalLog): roll, read, truncate, delete, flush.

`Log` (Kafka's UnifiedLog) owns one and keeps the offsets above the files (log start offset, high watermark, last
stable offset), producer state and leader epochs; this class knows the segment files and the two offsets that are
about them:

    log_end_offset_metadata   the next offset to append and where it will go (active segment, byte position)
    recovery_point            everything below it is flushed to disk (recovery after a crash starts there)

Thread-safety, as in Kafka: this class takes no lock; every change runs under the owning Log's lock. Reads
(`read`) take none: the segment list and `log_end_offset_metadata` are immutable values replaced by writers, and
segment files removed by retention or truncation stay open for file.delete.delay.ms, so a read that raced a
deletion still sends valid bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable

from wirebroker.log.batch_records import offset_of_max_timestamp
from wirebroker.log.checkpoints import fsync_dir
from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo, LogOffsetMetadata
from wirebroker.log.file_records import TimestampAndOffset
from wirebroker.log.files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    TopicPartition,
    delete_file_if_exists,
    log_file,
    offset_index_file,
    parse_delete_dir_name,
    parse_partition_dir_name,
    time_index_file,
    txn_index_file,
)
from wirebroker.log.scheduler import Scheduler
from wirebroker.log.segment import LogSegment
from wirebroker.log.segments import LogSegments
from wirebroker.log.txn_index import AbortedTxn
from wirebroker.protocol.errors import OffsetOutOfRangeError

log = logging.getLogger(__name__)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class LocalLog:
    def __init__(self, directory: str, config: LogConfig, topic_partition: TopicPartition, segments: LogSegments,
                 recovery_point: int, log_end_offset_metadata: LogOffsetMetadata, scheduler: Scheduler | None,
                 remove_snapshots_for_deletion: Callable[[Iterable[int]], list[str]]) -> None:
        """`remove_snapshots_for_deletion` (the producer state's): given the base offsets of removed segments, it
        renames their producer snapshots *.deleted and returns the new paths, which go with the segment files."""
        self.dir = directory
        self.config = config
        self.topic_partition = topic_partition
        self.name = str(topic_partition)
        self.segments = segments
        self.recovery_point = recovery_point
        self.log_end_offset_metadata = log_end_offset_metadata
        self.last_flush_ms = now_ms()
        self.closed = False
        self._scheduler = scheduler
        self._remove_snapshots_for_deletion = remove_snapshots_for_deletion
        self._offset_metadata_cache = log_end_offset_metadata

    @property
    def log_end_offset(self) -> int:
        return self.log_end_offset_metadata.message_offset

    def unflushed_messages(self) -> int:
        return self.log_end_offset_metadata.message_offset - self.recovery_point

    def check_open(self) -> None:
        if self.closed:
            raise RuntimeError(f"Log {self.name} is closed")

    def update_config(self, config: LogConfig) -> None:
        self.config = config

    # --- appending and rolling ---

    def append(self, segment: LogSegment, last_offset: int, largest_timestamp: int, offset_of_max_timestamp: int,
               records: memoryview) -> None:
        """Write validated batches with assigned offsets to `segment`, the active one (after any roll)."""
        segment.append(last_offset, largest_timestamp, offset_of_max_timestamp, records)
        self.log_end_offset_metadata = LogOffsetMetadata(last_offset + 1, segment.base_offset, segment.size)

    def roll(self, now: int) -> LogSegment:
        """Start a new active segment at the log end offset and return it; the active segment itself when it is
        already an empty one at the log end."""
        new_offset = self.log_end_offset
        active = self.segments.last
        assert active is not None
        if active.base_offset == new_offset and active.size == 0:
            return active
        active.on_become_inactive_segment()
        for path in (log_file(self.dir, new_offset), offset_index_file(self.dir, new_offset),
                     time_index_file(self.dir, new_offset), txn_index_file(self.dir, new_offset)):
            if delete_file_if_exists(path):
                log.warning("Deleted stale file %s before rolling %s", path, self.name)
        segment = LogSegment(self.dir, new_offset, self.config, now)
        self.segments.add(segment)
        self.log_end_offset_metadata = LogOffsetMetadata(new_offset, segment.base_offset, 0)
        log.info("Rolled new log segment of %s at offset %d", self.name, new_offset)
        return segment

    # --- reading ---

    def read(self, start_offset: int, max_bytes: int, upper_bound_offset: int | None, min_one_message: bool,
             include_aborted_transactions: bool, log_start_offset: int) -> FetchDataInfo:
        """Records from `start_offset`, at most `max_bytes` (but a whole first batch if min_one_message), never past
        `upper_bound_offset` (None: the log end offset); OffsetOutOfRangeError outside [log_start_offset, log end]."""
        leo = self.log_end_offset_metadata
        segments = self.segments
        segment = segments.floor_segment(start_offset)
        if start_offset < log_start_offset or start_offset > leo.message_offset or segment is None:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.name}, but we only have log "
                f"segments upto {leo.message_offset} and starting from {log_start_offset}")
        upper = leo if upper_bound_offset is None else self.offset_metadata(min(upper_bound_offset,
                                                                                leo.message_offset))
        if start_offset >= upper.message_offset:
            at = upper if start_offset == upper.message_offset else self.offset_metadata(start_offset)
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

    def offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """Where `offset` sits in the log (Kafka's convertToOffsetMetadataOrThrow), cached for repeated bounds."""
        leo = self.log_end_offset_metadata
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

    def find_offset_by_timestamp(self, target_timestamp: int, log_start_offset: int) -> TimestampAndOffset | None:
        """The first record at or after `log_start_offset` with a timestamp >= target (ListOffsets)."""
        for segment in list(self.segments):
            if segment.largest_timestamp() >= target_timestamp:
                # Kafka stops at the first such segment; one whose records all lie below the log start offset (not
                # yet removed by retention) has no answer, so the search goes on to the next.
                found = segment.find_offset_by_timestamp(target_timestamp, log_start_offset)
                if found is not None:
                    return found
        return None

    def max_timestamp_record(self) -> TimestampAndOffset | None:
        """The record with the largest timestamp (ListOffsets MAX_TIMESTAMP, KIP-734)."""
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

    # --- flushing ---

    def flush(self, offset: int) -> None:
        """Fsync the segments that may hold offsets in [recovery point, offset); the recovery point stays (the
        caller moves it with `mark_flushed`, under its lock)."""
        for segment in self.segments.values(self.recovery_point, offset):
            segment.flush()

    def mark_flushed(self, offset: int) -> None:
        if offset > self.recovery_point:
            self.recovery_point = offset
            self.last_flush_ms = now_ms()

    # --- truncation and segment deletion ---

    def truncate_to(self, target_offset: int, now: int) -> None:
        """Remove every offset >= target_offset, which lies in or after the first segment."""
        self.remove_and_delete_segments([s for s in self.segments if s.base_offset > target_offset])
        active = self.segments.last
        assert active is not None
        active.truncate_to(target_offset, now)
        self.log_end_offset_metadata = LogOffsetMetadata(target_offset, active.base_offset, active.size)
        self.recovery_point = min(self.recovery_point, target_offset)
        self._offset_metadata_cache = self.log_end_offset_metadata

    def truncate_fully_and_start_at(self, new_offset: int, now: int) -> None:
        """Delete every segment and start an empty one at `new_offset`."""
        old_segments = list(self.segments)
        segment = LogSegment(self.dir, new_offset, self.config, now)
        self.remove_and_delete_segments(old_segments)
        self.segments.add(segment)
        self.log_end_offset_metadata = LogOffsetMetadata(new_offset, new_offset, 0)
        self.recovery_point = new_offset
        self._offset_metadata_cache = self.log_end_offset_metadata

    def remove_and_delete_segments(self, segments: list[LogSegment]) -> None:
        """Take segments out of the log now; rename their files (and their producer snapshots) *.deleted and remove
        them after file.delete.delay.ms, so reads that already hold them finish first."""
        if not segments:
            return
        for segment in segments:
            self.segments.remove(segment.base_offset)
        for segment in segments:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
        snapshots = self._remove_snapshots_for_deletion(s.base_offset for s in segments)

        def delete_files() -> None:
            for segment in segments:
                segment.delete_if_exists()
            for path in snapshots:
                delete_file_if_exists(path)
        self.schedule_once("delete-file", delete_files, self.config.file_delete_delay_ms)

    def replace_segments(self, new_segment: LogSegment, old_segments: list[LogSegment]) -> None:
        """Swap a cleaned segment in for the segments it was made from (Kafka's LocalLog.replaceSegments), crash-safe
        in two renames: <base>.cleaned -> <base>.swap, then (old files renamed *.deleted, removed after
        file.delete.delay.ms) .swap -> the live name. A crash in between leaves a .swap that the loader completes."""
        new_segment.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        self.segments.add(new_segment)  # replaces the old segment with the same base offset
        for segment in old_segments:
            if segment.base_offset != new_segment.base_offset:
                self.segments.remove(segment.base_offset)
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)

        def delete_files() -> None:
            for segment in old_segments:
                segment.delete_if_exists()
        self.schedule_once("delete-file", delete_files, self.config.file_delete_delay_ms)
        new_segment.change_file_suffixes(SWAP_FILE_SUFFIX, "")
        fsync_dir(self.dir)

    def schedule_once(self, name: str, fn: Callable[[], None], delay_ms: int) -> None:
        """Run `fn` on the scheduler after `delay_ms`; at once without a running scheduler."""
        scheduler = self._scheduler
        if scheduler is not None and scheduler.is_started:
            scheduler.schedule_once(f"{name}-{self.name}", fn, delay_ms)
        else:
            fn()

    # --- directory ---

    def rename_dir(self, name: str) -> str:
        """Move the partition directory to a sibling called `name`; returns the new path."""
        new_dir = os.path.join(os.path.dirname(self.dir), name)
        os.rename(self.dir, new_dir)
        self.dir = new_dir
        for segment in self.segments:
            segment.update_dir(new_dir)
        return new_dir

    def close(self) -> None:
        self.segments.close()
        self.closed = True

    def delete(self) -> None:
        """Close the files and remove the directory and everything in it."""
        if not self.closed:
            for segment in self.segments:
                segment.close_handlers()
            self.closed = True
        self.segments.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


def parse_topic_partition_name(directory: str) -> TopicPartition:
    """The partition a log directory holds, from its name (<topic>-<partition>, or the -delete form)."""
    name = os.path.basename(os.path.normpath(directory))
    parsed = parse_partition_dir_name(name) or parse_delete_dir_name(name)
    if parsed is None:
        raise ValueError(f"Found directory {directory}, '{name}' is not in the form of topic-partition")
    return parsed
