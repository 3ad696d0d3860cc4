"""A segment of a partition's log (Kafka's LogSegment): one .log file and its three indexes.

    <base offset, 20 digits>.log        batches (file_records.py)
    <base offset, 20 digits>.index      offset -> position, one entry per index.interval.bytes (offset_index.py)
    <base offset, 20 digits>.timeindex  max timestamp so far -> offset, alongside the offset index (time_index.py)
    <base offset, 20 digits>.txnindex   aborted transactions whose ABORT marker is here (txn_index.py)

The base offset is <= every offset in the segment and > every offset of the segment before it. Only the last segment
of a log (the active one) is appended to. A segment rolls (the log starts a new one) when it would pass
segment.bytes, when segment.ms minus this segment's random jitter has passed since its first batch's timestamp (or
its creation, for a segment without timestamps), when an index is full, or when an offset no longer fits the indexes'
32-bit relative offsets.

Recovery re-reads the .log from the start, checks every batch's CRC, rebuilds the indexes and cuts the file after
the last valid batch (a torn or corrupt tail). Deleting a segment renames its files to *.deleted at once and removes
them file.delete.delay.ms later, so that an in-flight sendfile from the old file still reads valid data.

Not thread-safe for writers: the owning Log serializes appends, truncation and recovery. Reads (translate_offset,
read, find_offset_by_timestamp) may run concurrently with an append.
"""

from __future__ import annotations

import logging
import os

from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo, LogOffsetMetadata
from wirebroker.log.file_records import (
    FileRecords,
    LogOffsetPosition,
    TimestampAndOffset,
)
from wirebroker.log.files import (
    log_file,
    offset_index_file,
    time_index_file,
    txn_index_file,
)
from wirebroker.log.leader_epoch_cache import LeaderEpochFileCache
from wirebroker.log.offset_index import OffsetIndex
from wirebroker.log.producer_state import (
    AppendOrigin,
    CompletedTxn,
    ProducerStateManager,
)
from wirebroker.log.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset
from wirebroker.log.txn_index import AbortedTxn, TransactionIndex, TxnIndexSearchResult
from wirebroker.protocol.errors import CorruptMessageError, KafkaError
from wirebroker.protocol.records import BatchHeader, crc_is_valid

log = logging.getLogger(__name__)

NO_PRODUCER_ID = -1


class LogSegmentOffsetOverflowError(Exception):
    """An append whose offsets do not fit this segment's relative offsets; the log must roll first."""


class LogSegment:
    def __init__(self, directory: str, base_offset: int, config: LogConfig, now_ms: int, suffix: str = "") -> None:
        self.base_offset = base_offset
        self.log = FileRecords(log_file(directory, base_offset, suffix))
        self.offset_index = OffsetIndex(offset_index_file(directory, base_offset, suffix), base_offset,
                                        config.segment_index_bytes)
        self.time_index = TimeIndex(time_index_file(directory, base_offset, suffix), base_offset,
                                    config.segment_index_bytes)
        self.txn_index = TransactionIndex(txn_index_file(directory, base_offset, suffix), base_offset)
        self.index_interval_bytes = config.index_interval_bytes
        self.roll_jitter_ms = config.random_segment_jitter()
        self.created_ms = now_ms
        self._rolling_based_timestamp: int | None = None  # timestamp of the first batch, for time-based rolls
        self._max_timestamp_and_offset: TimestampOffset | None = None  # None until read from the time index
        self._bytes_since_last_index_entry = 0

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size}, path={self.log.path})"

    @property
    def size(self) -> int:
        return self.log.size

    # --- timestamps ---

    def read_max_timestamp_and_offset_so_far(self) -> TimestampOffset:
        if self._max_timestamp_and_offset is None:
            self._max_timestamp_and_offset = self.time_index.last_entry()
        return self._max_timestamp_and_offset

    @property
    def max_timestamp_so_far(self) -> int:
        return self.read_max_timestamp_and_offset_so_far().timestamp

    def largest_record_timestamp(self) -> int | None:
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else None

    def largest_timestamp(self) -> int:
        """The largest record timestamp, or the file's modification time for a segment without timestamps."""
        ts = self.max_timestamp_so_far
        return ts if ts >= 0 else self.log.last_modified_ms()

    def _first_batch_timestamp(self) -> int:
        if self._rolling_based_timestamp is None:
            first = next(iter(self.log.batches()), None)
            if first is not None:
                self._rolling_based_timestamp = first.header.max_timestamp
        return NO_TIMESTAMP if self._rolling_based_timestamp is None else self._rolling_based_timestamp

    def time_waited_for_roll(self, now_ms: int, message_timestamp: int) -> int:
        first_timestamp = self._first_batch_timestamp()
        if first_timestamp >= 0:
            return message_timestamp - first_timestamp
        return now_ms - self.created_ms

    # --- rolling ---

    def should_roll(self, config: LogConfig, max_timestamp_in_messages: int, max_offset_in_messages: int,
                    messages_size: int, now_ms: int) -> bool:
        reached_roll_ms = (self.time_waited_for_roll(now_ms, max_timestamp_in_messages)
                           > config.max_segment_ms - self.roll_jitter_ms)
        size = self.size
        return (size > config.segment_size - messages_size
                or (size > 0 and reached_roll_ms)
                or self.offset_index.is_full()
                or self.time_index.is_full()
                or not self.offset_index.can_append_offset(max_offset_in_messages))

    def on_become_inactive_segment(self) -> None:
        """Seal the segment at roll: record its largest timestamp and trim the indexes and file."""
        max_ts = self.read_max_timestamp_and_offset_so_far()
        self.time_index.maybe_append(max_ts.timestamp, max_ts.offset, skip_full_check=True)
        self.offset_index.trim_to_valid_size()
        self.time_index.trim_to_valid_size()
        self.log.trim()

    def resize_indexes(self, size: int) -> None:
        self.offset_index.resize(size)
        self.time_index.resize(size)

    # --- appending ---

    def append(self, largest_offset: int, largest_timestamp: int, offset_of_max_timestamp: int,
               records: bytes | bytearray | memoryview) -> None:
        """Append batches whose offsets end at `largest_offset`, indexing them every index.interval.bytes."""
        if not records:
            return
        position = self.log.size
        if position == 0:
            self._rolling_based_timestamp = largest_timestamp
        if not self.offset_index.can_append_offset(largest_offset):
            raise LogSegmentOffsetOverflowError(f"Offset {largest_offset} does not fit segment {self}")
        self.log.append(records)
        if largest_timestamp > self.max_timestamp_so_far:
            self._max_timestamp_and_offset = TimestampOffset(largest_timestamp, offset_of_max_timestamp)
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self._add_index_entries(largest_offset, position)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += len(records)

    def _add_index_entries(self, offset: int, position: int) -> None:
        self.offset_index.append(offset, position)
        max_ts = self.read_max_timestamp_and_offset_so_far()
        self.time_index.maybe_append(max_ts.timestamp, max_ts.offset)

    def update_txn_index(self, completed: CompletedTxn, last_stable_offset: int) -> None:
        if completed.is_aborted:
            self.txn_index.append(AbortedTxn(completed.producer_id, completed.first_offset, completed.last_offset,
                                             last_stable_offset))

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        return self.txn_index.collect_aborted_txns(fetch_offset, upper_bound_offset)

    # --- reading ---

    def translate_offset(self, offset: int, starting_position: int = 0) -> LogOffsetPosition | None:
        """The batch that holds `offset` or is the first after it: index floor, then a short scan of headers."""
        mapping = self.offset_index.lookup(offset)
        return self.log.search_for_offset_with_size(offset, max(mapping.position, starting_position))

    def read(self, start_offset: int, max_size: int, max_position: int | None = None,
             min_one_message: bool = False) -> FetchDataInfo | None:
        """Batches from the one holding `start_offset`, at most `max_size` bytes (but the whole first batch if
        min_one_message) and never past byte `max_position`; None if the segment has nothing at or after it."""
        if max_size < 0:
            raise ValueError(f"Invalid max size {max_size} for log read from segment {self}")
        start = self.translate_offset(start_offset)
        if start is None:
            return None
        metadata = LogOffsetMetadata(start_offset, self.base_offset, start.position)
        adjusted_max_size = max(max_size, start.size) if min_one_message else max_size
        limit = self.size if max_position is None else max_position
        fetch_size = min(limit - start.position, adjusted_max_size)
        if fetch_size <= 0:
            return FetchDataInfo(metadata, b"")
        return FetchDataInfo(metadata, self.log.slice(start.position, fetch_size),
                             first_entry_incomplete=adjusted_max_size < start.size)

    def read_next_offset(self) -> int:
        """The offset after the last batch of the segment (the base offset if it is empty)."""
        last = None
        for batch in self.log.batches(self.offset_index.lookup(self.offset_index.last_offset).position):
            last = batch.header
        return self.base_offset if last is None else last.next_offset

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        """The first record with timestamp >= `timestamp` and offset >= starting_offset in this segment."""
        indexed = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(indexed.offset, starting_offset)).position
        return self.log.search_for_timestamp(timestamp, position, starting_offset)

    # --- recovery and truncation ---

    def tail_is_valid(self) -> bool:
        """Whether the batches after the last index entry are whole, CRC-valid, and end exactly at the file's end.

        Cheap (at most index.interval.bytes and one batch are read), so it runs even after a clean shutdown: a tail
        torn or damaged while the broker was down is caught before a consumer reads it.
        """
        position = self.offset_index.lookup(self.offset_index.last_offset).position
        try:
            for batch in self.log.batches(position, with_data=True):
                if not crc_is_valid(batch.data, 0, batch.header):
                    return False
                position = batch.position + batch.header.size
        except (KafkaError, EOFError):
            return False
        return position == self.size

    def sanity_check(self) -> None:
        """Cheap checks of the index files; raises CorruptIndexError (the caller then recovers the segment)."""
        self.offset_index.sanity_check(self.size)
        self.time_index.sanity_check()
        self.txn_index.sanity_check()

    def recover(self, producer_state: ProducerStateManager | None = None,
                leader_epoch_cache: LeaderEpochFileCache | None = None) -> int:
        """Rebuild the indexes from the .log, validating every batch; truncate after the last valid one.

        Returns the number of bytes truncated."""
        self.offset_index.reset()
        self.time_index.reset()
        self.txn_index.reset()
        self._max_timestamp_and_offset = TimestampOffset(NO_TIMESTAMP, self.base_offset)
        valid_bytes = 0
        last_index_entry = 0
        next_offset = self.base_offset
        try:
            for batch in self.log.batches(with_data=True):
                header = batch.header
                self._check_recovered_batch(batch.data, header, next_offset)
                if header.max_timestamp > self.max_timestamp_so_far:
                    self._max_timestamp_and_offset = TimestampOffset(header.max_timestamp, header.last_offset)
                if valid_bytes - last_index_entry > self.index_interval_bytes:
                    self._add_index_entries(header.last_offset, valid_bytes)
                    last_index_entry = valid_bytes
                valid_bytes += header.size
                next_offset = header.next_offset
                if leader_epoch_cache is not None:
                    _assign_epoch_if_newer(leader_epoch_cache, header.partition_leader_epoch, header.base_offset)
                if producer_state is not None:
                    update_producer_state(producer_state, self, header, batch.data)
        except (KafkaError, EOFError, LogSegmentOffsetOverflowError) as exc:
            log.warning("Found invalid messages in log segment %s at byte offset %d: %s", self.log.path,
                        valid_bytes, exc)
        truncated = self.log.size - valid_bytes
        if truncated > 0:
            log.warning("Truncated %d invalid bytes at the end of segment %s during recovery", truncated,
                        self.log.path)
        self.log.truncate_to(valid_bytes)
        self.offset_index.trim_to_valid_size()
        max_ts = self.read_max_timestamp_and_offset_so_far()
        self.time_index.maybe_append(max_ts.timestamp, max_ts.offset, skip_full_check=True)
        self.time_index.trim_to_valid_size()
        return truncated

    def _check_recovered_batch(self, data: memoryview | None, header: BatchHeader, expected_min_offset: int) -> None:
        if not crc_is_valid(data, 0, header):
            raise CorruptMessageError(f"Record batch at offset {header.base_offset} fails its CRC")
        if header.base_offset < expected_min_offset:
            raise CorruptMessageError(f"Record batch at offset {header.base_offset} goes back before offset "
                                      f"{expected_min_offset}")
        if not self.offset_index.can_append_offset(header.last_offset):
            raise LogSegmentOffsetOverflowError(f"Offset {header.last_offset} does not fit segment {self}")

    def truncate_to(self, offset: int, now_ms: int) -> int:
        """Remove everything at offsets >= `offset`; the number of log bytes removed."""
        mapping = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        # The segment becomes (or stays) the active one: let its indexes grow again.
        self.resize_indexes(self.offset_index.max_index_size)
        truncated = 0 if mapping is None else self.log.truncate_to(mapping.position)
        if self.size == 0:
            self.created_ms = now_ms
            self._rolling_based_timestamp = None
        self._bytes_since_last_index_entry = 0
        if self.max_timestamp_so_far >= 0:
            self._max_timestamp_and_offset = self._read_largest_timestamp()
        return truncated

    def _read_largest_timestamp(self) -> TimestampOffset:
        last_indexed = self.time_index.last_entry()
        position = self.offset_index.lookup(last_indexed.offset).position
        after = self.log.largest_timestamp_after(position)
        if after.timestamp > last_indexed.timestamp:
            return TimestampOffset(after.timestamp, after.offset)
        return last_indexed

    # --- lifecycle ---

    def flush(self) -> None:
        self.log.flush()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        if self._max_timestamp_and_offset is not None:
            max_ts = self._max_timestamp_and_offset
            try:
                self.time_index.maybe_append(max_ts.timestamp, max_ts.offset, skip_full_check=True)
            except ValueError as exc:
                log.warning("Could not record the largest timestamp of %s on close: %s", self, exc)
        self.offset_index.close()
        self.time_index.close()
        self.log.close()
        self.txn_index.close()

    def close_handlers(self) -> None:
        """Release the files without writing (the directory is failing or being deleted)."""
        self.offset_index.close_handler()
        self.time_index.close_handler()
        self.log.close()
        self.txn_index.close()

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        for file in (self.log, self.offset_index, self.time_index, self.txn_index):
            file.rename_to(_replace_suffix(file.path, old_suffix, new_suffix))

    def has_suffix(self, suffix: str) -> bool:
        return all(f.path.endswith(suffix) for f in (self.log, self.offset_index, self.time_index, self.txn_index))

    def update_dir(self, directory: str) -> None:
        """Follow a renamed partition directory (the files moved with it)."""
        for file in (self.log, self.offset_index, self.time_index, self.txn_index):
            file.path = os.path.join(directory, os.path.basename(file.path))

    def delete_if_exists(self) -> None:
        for file in (self.log, self.offset_index, self.time_index, self.txn_index):
            if file.delete_if_exists():
                log.debug("Deleted %s", file.path)

    def set_last_modified(self, ms: int) -> None:
        for path in (self.log.path, self.offset_index.path, self.time_index.path):
            os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))


def _replace_suffix(path: str, old_suffix: str, new_suffix: str) -> str:
    if not path.endswith(old_suffix):
        raise ValueError(f"Expected {path} to end with {old_suffix!r}")
    return path[:len(path) - len(old_suffix)] + new_suffix


def _assign_epoch_if_newer(cache: LeaderEpochFileCache, epoch: int, start_offset: int) -> None:
    latest = cache.latest_epoch
    if epoch >= 0 and (latest is None or epoch > latest):
        cache.assign(epoch, start_offset)


def update_producer_state(producer_state: ProducerStateManager, segment: LogSegment | None, header: BatchHeader,
                          batch: bytes | memoryview) -> None:
    """Replay one stored batch into the producer state; with a segment, also re-index aborted transactions
    (recovery rebuilds the segment's .txnindex, a plain producer-state rebuild leaves it alone)."""
    if header.producer_id != NO_PRODUCER_ID:
        append_info = producer_state.prepare_update(header.producer_id, AppendOrigin.REPLICATION)
        completed = append_info.append(header, batch)
        producer_state.update(append_info)
        if completed is not None:
            if segment is not None:
                segment.update_txn_index(completed, producer_state.last_stable_offset(completed))
            producer_state.complete_txn(completed)
    producer_state.update_map_end_offset(header.last_offset + 1)
