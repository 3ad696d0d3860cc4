"""Loading a partition's log from disk at start-up (Kafka's LogLoader) and rebuilding its producer state.

In order:
  1. leftovers of interrupted operations: *.deleted and *.cleaned files are removed; a *.swap segment (from a log
     cleaner or segment split) replaces the segments it covers, as in Kafka; stray *.tmp files are removed;
  2. every .log file becomes a segment; an index file without a .log is removed; a segment whose .index or
     .timeindex is missing or fails its sanity check is recovered (indexes rebuilt from the .log);
  3. without a clean-shutdown marker, every segment from the one holding the recovery point on is recovered: each
     batch's CRC is checked and the first segment with a bad tail is truncated there, and all segments after it are
     deleted, so the log end offset follows the last valid batch;
  4. the active segment's indexes are grown back to segment.index.bytes; the leader epoch cache is cut to the log;
     the producer state is loaded from the latest snapshot and the batches written after it.
"""

from __future__ import annotations

import logging
import os
from typing import NamedTuple

from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import LogOffsetMetadata
from wirebroker.log.file_records import FileRecords
from wirebroker.log.files import (
    CLEANED_FILE_SUFFIX,
    DELETED_FILE_SUFFIX,
    SWAP_FILE_SUFFIX,
    delete_file_if_exists,
    is_index_file,
    is_log_file,
    log_file,
    offset_from_file_name,
    offset_index_file,
    time_index_file,
)
from wirebroker.log.index_file import CorruptIndexError
from wirebroker.log.leader_epoch_cache import LeaderEpochFileCache
from wirebroker.log.producer_state import ProducerStateManager
from wirebroker.log.segment import LogSegment, update_producer_state
from wirebroker.log.segments import LogSegments
from wirebroker.protocol.errors import KafkaError

log = logging.getLogger(__name__)

INT32_MAX = 2**31 - 1


class LoadedLogOffsets(NamedTuple):
    log_start_offset: int
    recovery_point: int
    next_offset_metadata: LogOffsetMetadata


class LogLoader:
    def __init__(self, directory: str, name: str, config: LogConfig, segments: LogSegments, log_start_offset: int,
                 recovery_point: int, had_clean_shutdown: bool, leader_epoch_cache: LeaderEpochFileCache,
                 producer_state: ProducerStateManager, now_ms: int) -> None:
        self.dir = directory
        self.name = name
        self.config = config
        self.segments = segments
        self.log_start_offset_checkpoint = log_start_offset
        self.recovery_point_checkpoint = recovery_point
        self.had_clean_shutdown = had_clean_shutdown
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state = producer_state
        self.now_ms = now_ms

    def load(self) -> LoadedLogOffsets:
        self._complete_swaps(self._remove_temp_files_and_collect_swap_files())
        self._load_segment_files()
        recovery_point, next_offset = self._recover_log()
        active = self.segments.last
        assert active is not None
        active.resize_indexes(self.config.segment_index_bytes)
        self.leader_epoch_cache.truncate_from_end(next_offset, write=False)
        first = self.segments.first
        assert first is not None
        log_start_offset = max(self.log_start_offset_checkpoint, first.base_offset)
        self.leader_epoch_cache.truncate_from_start(self.log_start_offset_checkpoint, write=False)
        self.producer_state.remove_stray_snapshots(list(self.segments.base_offsets))
        rebuild_producer_state(self.producer_state, self.segments, log_start_offset, next_offset, self.now_ms,
                               self.had_clean_shutdown, self.name)
        return LoadedLogOffsets(log_start_offset, recovery_point,
                                LogOffsetMetadata(next_offset, active.base_offset, active.size))

    # --- leftovers ---

    def _remove_temp_files_and_collect_swap_files(self) -> list[str]:
        swap_files, min_cleaned_offset = [], None
        for name in sorted(os.listdir(self.dir)):
            path = os.path.join(self.dir, name)
            if not os.path.isfile(path):
                continue
            if name.endswith((DELETED_FILE_SUFFIX, ".tmp")):
                log.debug("Deleting stray temporary file %s", path)
                delete_file_if_exists(path)
            elif name.endswith(CLEANED_FILE_SUFFIX):
                offset = _offset_or_none(name)
                if offset is not None:
                    min_cleaned_offset = offset if min_cleaned_offset is None else min(min_cleaned_offset, offset)
                delete_file_if_exists(path)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swap_files.append(path)
        # A .swap at or past a .cleaned file is part of an unfinished segment split (KAFKA-6264): drop it.
        valid = []
        for path in swap_files:
            offset = _offset_or_none(os.path.basename(path))
            if min_cleaned_offset is not None and offset is not None and offset >= min_cleaned_offset:
                delete_file_if_exists(path)
            else:
                valid.append(path)
        return valid

    def _complete_swaps(self, swap_files: list[str]) -> None:
        """Let each .log.swap replace the segments it was built from, then drop the .swap suffixes."""
        covered_from, covered_to = None, None
        for path in swap_files:
            name = os.path.basename(path)[:-len(SWAP_FILE_SUFFIX)]
            if not is_log_file(name):
                continue
            base = offset_from_file_name(name)
            records = FileRecords(path)
            next_offset = base
            for batch in records.batches():
                next_offset = batch.header.next_offset
            records.close()
            log.info("Found log file %s from an interrupted swap operation of %s, completing it", path, self.name)
            covered_from = base if covered_from is None else min(covered_from, base)
            covered_to = next_offset if covered_to is None else max(covered_to, next_offset)
        if covered_from is not None:
            for name in os.listdir(self.dir):
                offset = _offset_or_none(name)
                if not name.endswith(SWAP_FILE_SUFFIX) and offset is not None and covered_from <= offset < covered_to:
                    delete_file_if_exists(os.path.join(self.dir, name))
        for name in os.listdir(self.dir):
            if name.endswith(SWAP_FILE_SUFFIX):
                path = os.path.join(self.dir, name)
                os.replace(path, path[:-len(SWAP_FILE_SUFFIX)])

    # --- segments ---

    def _load_segment_files(self) -> None:
        for name in sorted(os.listdir(self.dir)):
            path = os.path.join(self.dir, name)
            if not os.path.isfile(path):
                continue
            if is_index_file(name):
                if not os.path.exists(log_file(self.dir, offset_from_file_name(name))):
                    log.warning("Found an orphaned index file %s, with no corresponding log file", path)
                    delete_file_if_exists(path)
            elif is_log_file(name):
                self._load_segment(offset_from_file_name(name))

    def _load_segment(self, base_offset: int) -> None:
        indexes_exist = all(os.path.exists(path) for path in (offset_index_file(self.dir, base_offset),
                                                               time_index_file(self.dir, base_offset)))
        segment = LogSegment(self.dir, base_offset, self.config, self.now_ms)
        if not indexes_exist:
            if self.had_clean_shutdown or base_offset < self.recovery_point_checkpoint:
                log.error("Could not find the index files of log file %s of %s, recovering the segment and "
                          "rebuilding its indexes", segment.log.path, self.name)
            self._recover_segment(segment)
        else:
            try:
                segment.sanity_check()
            except CorruptIndexError as exc:
                log.warning("Found a corrupted index file of log file %s of %s (%s), recovering the segment and "
                            "rebuilding its indexes", segment.log.path, self.name, exc)
                self._recover_segment(segment)
        self.segments.add(segment)

    def _recover_segment(self, segment: LogSegment) -> int:
        # A scratch producer state up to the segment, so that its transaction index can be rebuilt.
        producer_state = ProducerStateManager(self.dir, self.name, self.producer_state.producer_id_expiration_ms,
                                              self.producer_state.max_transaction_timeout_ms)
        rebuild_producer_state(producer_state, self.segments, self.log_start_offset_checkpoint, segment.base_offset,
                               self.now_ms, False, self.name)
        truncated = segment.recover(producer_state, self.leader_epoch_cache)
        producer_state.take_snapshot()
        return truncated

    def _recover_log(self) -> tuple[int, int]:
        """(recovery point, next offset) after recovering what was not flushed before an unclean shutdown."""
        if not self.had_clean_shutdown:
            unflushed = self.segments.values(self.recovery_point_checkpoint, 2**63 - 1)
            for i, segment in enumerate(unflushed):
                log.info("Recovering unflushed segment %d of %s", segment.base_offset, self.name)
                try:
                    truncated = self._recover_segment(segment)
                except (KafkaError, OSError, ValueError) as exc:
                    log.warning("Found invalid offsets during recovery of %s (%s); emptying segment %d", self.name,
                                exc, segment.base_offset)
                    truncated = segment.truncate_to(segment.base_offset, self.now_ms)
                if truncated > 0:
                    log.warning("Corruption found in segment %d of %s, truncating to offset %d",
                                segment.base_offset, self.name, segment.read_next_offset())
                    self._delete_segments(unflushed[i + 1:])
                    break
        elif self.segments.last is not None and not self.segments.last.tail_is_valid():
            log.warning("The tail of %s is damaged although it was shut down cleanly; recovering its last segment",
                        self.name)
            self._recover_segment(self.segments.last)
        log_end_offset = self._delete_segments_if_log_start_greater_than_log_end()
        if not len(self.segments):
            self.segments.add(LogSegment(self.dir, self.log_start_offset_checkpoint, self.config, self.now_ms))
        if self.had_clean_shutdown and log_end_offset is not None:
            return log_end_offset, log_end_offset
        if log_end_offset is None:
            log_end_offset = self.segments.last.read_next_offset()  # type: ignore[union-attr]
        return min(self.recovery_point_checkpoint, log_end_offset), log_end_offset

    def _delete_segments_if_log_start_greater_than_log_end(self) -> int | None:
        last = self.segments.last
        if last is None:
            return None
        log_end_offset = last.read_next_offset()
        if log_end_offset >= self.log_start_offset_checkpoint:
            return log_end_offset
        log.warning("Deleting all segments of %s because its log end offset %d is smaller than its log start offset "
                    "%d; segment files may have been deleted from the file system", self.name, log_end_offset,
                    self.log_start_offset_checkpoint)
        self._delete_segments(list(self.segments))
        self.leader_epoch_cache.clear_and_flush()
        self.producer_state.truncate_fully_and_start_at(self.log_start_offset_checkpoint)
        return None

    def _delete_segments(self, segments: list[LogSegment]) -> None:
        # Nobody reads the log yet, so the files can go at once.
        for segment in segments:
            self.segments.remove(segment.base_offset)
            segment.delete_if_exists()
        for path in self.producer_state.remove_snapshots_for_deletion(s.base_offset for s in segments):
            delete_file_if_exists(path)


def _offset_or_none(name: str) -> int | None:
    try:
        return offset_from_file_name(name)
    except ValueError:
        return None


def rebuild_producer_state(producer_state: ProducerStateManager, segments: LogSegments, log_start_offset: int,
                           last_offset: int, now_ms: int, reload_from_clean_shutdown: bool, name: str = "") -> None:
    """Bring `producer_state` to `last_offset`: from the latest usable snapshot, replaying the batches after it
    (Kafka's UnifiedLog.rebuildProducerState)."""
    offsets_to_snapshot = []
    last = segments.last
    if last is not None:
        lower = segments.lower_segment(last.base_offset)
        if lower is not None:
            offsets_to_snapshot.append(lower.base_offset)
        offsets_to_snapshot.append(last.base_offset)
    offsets_to_snapshot.append(last_offset)
    log.debug("Loading producer state of %s up to offset %d", name, last_offset)
    if producer_state.latest_snapshot_offset is None and reload_from_clean_shutdown:
        # A cleanly shut down log without snapshots (written by a broker that kept none): start empty rather than
        # scan everything, with snapshots at the last segments' bases so a later truncation need not scan either.
        for offset in offsets_to_snapshot:
            producer_state.update_map_end_offset(offset)
            producer_state.take_snapshot()
        return
    was_empty = producer_state.is_empty() and producer_state.map_end_offset >= last_offset
    producer_state.truncate_and_reload(log_start_offset, last_offset, now_ms)
    if last_offset > producer_state.map_end_offset and not was_empty:
        last_segment = segments.floor_segment(last_offset)
        for segment in segments.values(producer_state.map_end_offset, last_offset):
            start = max(segment.base_offset, producer_state.map_end_offset, log_start_offset)
            producer_state.update_map_end_offset(start)
            if segment.base_offset in offsets_to_snapshot:
                producer_state.take_snapshot()
            _replay_segment(producer_state, segment, start, last_offset if segment is last_segment else None)
    producer_state.update_map_end_offset(last_offset)
    producer_state.take_snapshot()


def _replay_segment(producer_state: ProducerStateManager, segment: LogSegment, start_offset: int,
                    end_offset: int | None) -> None:
    start = segment.translate_offset(start_offset)
    if start is None:
        return
    end_position = segment.size
    if end_offset is not None:
        end = segment.translate_offset(end_offset)
        end_position = end.position if end is not None else segment.size
    for batch in segment.log.batches(start.position, end_position):
        header = batch.header
        data = segment.log.read(batch.position, header.size) if header.is_control else b""
        update_producer_state(producer_state, None, header, data)
