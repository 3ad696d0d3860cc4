"""A read-only view of Kafka log directories for readers that are not the broker (wirebroker.spark's data source).

It reads what the broker wrote and never writes: partition directories (files.py), segments (.log, read with
FileRecords opened read-only), the high watermark and log start offset checkpoints (checkpoints.py), transaction
indexes (txn_index.py) and producer snapshots (producer_snapshot.py). The layout is Apache Kafka's, so a log dir that
Kafka wrote reads the same.

What a reader sees is what a Kafka consumer would fetch:
  * offsets [log start offset, high watermark) with read_uncommitted; up to the last stable offset with
    read_committed, where the records of aborted transactions are left out (the .txnindex entries and the ABORT
    markers, walked as the log cleaner walks them: cleaner_transactions.py) — Kafka's consumer does the same;
  * control batches (transaction markers) are never records;
  * the high watermark is the one in replication-offset-checkpoint, which a running broker rewrites every
    replica.high.watermark.checkpoint.interval.ms (5 s): a reader beside a live broker lags by at most that.

Segments may vanish under a reader (retention, compaction swap); an open file stays readable, and a segment that is
gone before it is opened is reported as data loss (OffsetOutOfRangeError), as Kafka's consumer reports offsets
below the log start.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from wirebroker.log.batch_records import MAX_DECOMPRESSED_RECORDS_BYTES
from wirebroker.log.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    read_offset_checkpoint,
)
from wirebroker.log.cleaner_transactions import CleanedTransactionMetadata
from wirebroker.log.file_records import FileRecords
from wirebroker.log.files import (
    TopicPartition,
    is_log_file,
    is_snapshot_file,
    log_file,
    offset_from_file_name,
    parse_partition_dir_name,
    partition_dir_name,
    producer_snapshot_file,
    txn_index_file,
)
from wirebroker.log.producer_snapshot import read_snapshot
from wirebroker.log.txn_index import AbortedTxn, TransactionIndex
from wirebroker.protocol.records import BatchHeader, Record, TimestampType, iter_records

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"
ISOLATION_LEVELS = (READ_UNCOMMITTED, READ_COMMITTED)


class OffsetOutOfRangeError(Exception):
    """Offsets asked for are no longer (or not yet) in the log: Kafka's OFFSET_OUT_OF_RANGE, seen by a reader."""


class StoredRecord(NamedTuple):
    """A record as a consumer sees it: the record and the timestamp type of its batch."""

    record: Record
    timestamp_type: TimestampType


class LogDirectories:
    """One or more log dirs (Kafka's log.dirs) read as one: each partition lives in exactly one of them."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self._partition_dirs: dict[TopicPartition, str] = {}
        self._high_watermarks: dict[TopicPartition, int] = {}
        self._log_start_offsets: dict[TopicPartition, int] = {}
        for path in self.paths:
            if not os.path.isdir(path):
                raise FileNotFoundError(f"log dir {path} does not exist or is not a directory")
            for name in os.listdir(path):
                tp = parse_partition_dir_name(name)
                if tp is not None and os.path.isdir(os.path.join(path, name)):
                    self._partition_dirs[tp] = path
            self._high_watermarks.update(read_offset_checkpoint(os.path.join(path, REPLICATION_OFFSET_CHECKPOINT_FILE)))
            self._log_start_offsets.update(read_offset_checkpoint(os.path.join(path, LOG_START_OFFSET_CHECKPOINT_FILE)))

    def topic_partitions(self) -> list[TopicPartition]:
        return sorted(self._partition_dirs)

    def partition(self, tp: TopicPartition) -> PartitionLog:
        if tp not in self._partition_dirs:
            raise OffsetOutOfRangeError(f"partition {tp} is not in the log dirs {', '.join(self.paths)}")
        directory = os.path.join(self._partition_dirs[tp], partition_dir_name(tp))
        return PartitionLog(directory, self._high_watermarks.get(tp), self._log_start_offsets.get(tp, 0))


class PartitionLog:
    """The segments of one partition, as they are on disk when the view is made."""

    def __init__(self, directory: str, high_watermark: int | None, checkpointed_log_start: int) -> None:
        self.directory = directory
        names = os.listdir(directory)
        self.base_offsets = sorted(offset_from_file_name(n) for n in names if is_log_file(n))
        self._snapshot_offsets = sorted(offset_from_file_name(n) for n in names if is_snapshot_file(n))
        first_base = self.base_offsets[0] if self.base_offsets else 0
        self.log_start_offset = max(checkpointed_log_start, first_base)
        # No checkpoint entry yet (a partition younger than one checkpoint interval): nothing is known committed.
        self.high_watermark = self.log_start_offset if high_watermark is None else high_watermark

    def latest_offset(self, isolation_level: str) -> int:
        """Where a consumer's "latest" lies: the high watermark, or the last stable offset for read_committed."""
        if isolation_level == READ_COMMITTED:
            return self.last_stable_offset()
        return self.high_watermark

    def last_stable_offset(self) -> int:
        """The first offset of the earliest transaction still open below the high watermark, else the high watermark.

        Open transactions are taken from the newest producer snapshot below the high watermark (each producer's
        current_txn_first_offset) and then followed through the batch headers up to the high watermark.
        """
        snapshot_offset = next((o for o in reversed(self._snapshot_offsets)
                                if self.log_start_offset <= o <= self.high_watermark), None)
        open_txns: dict[int, int] = {}
        start = self.log_start_offset
        if snapshot_offset is not None:
            path = producer_snapshot_file(self.directory, snapshot_offset)
            open_txns = {entry.producer_id: entry.current_txn_first_offset for entry in read_snapshot(path)
                         if entry.current_txn_first_offset >= 0}
            start = snapshot_offset
        for _, header in self._batches(start, self.high_watermark, with_data=False):
            if header.is_control:
                open_txns.pop(header.producer_id, None)
            elif header.is_transactional:
                open_txns.setdefault(header.producer_id, header.base_offset)
        return min([self.high_watermark, *open_txns.values()])

    def offset_for_timestamp(self, timestamp: int, isolation_level: str) -> int | None:
        """The first offset whose record has a timestamp >= `timestamp` (ListOffsets by time), or None."""
        end = self.latest_offset(isolation_level)
        for base in self._segments_from(self.log_start_offset):
            records = self._open(base)
            try:
                found = records.search_for_timestamp(timestamp, 0, self.log_start_offset)
            finally:
                records.close()
            if found is not None:
                return found.offset if found.offset < end else None
        return None

    def read(self, start: int, end: int, isolation_level: str) -> Iterator[StoredRecord]:
        """The records with offsets in [start, end), in offset order."""
        if start < self.log_start_offset or end > self.high_watermark:
            raise OffsetOutOfRangeError(
                f"offsets [{start}, {end}) of {self.directory} are outside [{self.log_start_offset}, "
                f"{self.high_watermark}): the log was deleted or truncated below them, or they are not committed")
        aborted: CleanedTransactionMetadata | None = None
        if isolation_level == READ_COMMITTED:
            aborted = CleanedTransactionMetadata()
            aborted.add_aborted_transactions(self._aborted_txns(start, end))
        for data, header in self._batches(start, end, with_data=True):
            if header.is_control:
                if aborted is not None:
                    aborted.on_control_batch_read(header, data)
                continue
            if aborted is not None and aborted.on_batch_read(header):
                continue
            timestamp_type = header.timestamp_type
            for record in iter_records(data, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES):
                if start <= record.offset < end:
                    yield StoredRecord(record, timestamp_type)

    def segment_boundaries(self, start: int, end: int) -> list[int]:
        """The segment base offsets strictly inside (start, end): where a range may be split into pieces."""
        return [base for base in self.base_offsets if start < base < end]

    # --- internals ---

    def _segments_from(self, start: int) -> Iterator[int]:
        """Base offsets of the segments that may hold offsets >= start, in order."""
        for i, base in enumerate(self.base_offsets):
            if i + 1 == len(self.base_offsets) or self.base_offsets[i + 1] > start:
                yield base

    def _open(self, base: int) -> FileRecords:
        try:
            return FileRecords(log_file(self.directory, base), writable=False)
        except FileNotFoundError:
            raise OffsetOutOfRangeError(f"segment {base} of {self.directory} was deleted while being read (retention "
                                        f"or compaction): read again from the new log start offset") from None

    def _batches(self, start: int, end: int, with_data: bool) -> Iterator[tuple[memoryview | None, BatchHeader]]:
        """(bytes or None, header) of each batch holding offsets in [start, end), control batches included."""
        for base in self._segments_from(start):
            if base >= end:
                return
            records = self._open(base)
            try:
                # Batch headers alone find where `start` lies (no index: a reader never opens index files, which
                # the broker preallocates and rewrites); the bytes are read from there.
                position = 0
                if start > base:
                    first = records.search_for_offset_with_size(start, 0)
                    if first is None:
                        continue  # every batch of this segment ends before `start`
                    position = first.position
                for batch in records.batches(position, with_data=with_data):
                    header = batch.header
                    if header.base_offset >= end:
                        return
                    if header.last_offset >= start:
                        yield batch.data, header
            finally:
                records.close()

    def _aborted_txns(self, start: int, end: int) -> list[AbortedTxn]:
        """Aborted transactions overlapping [start, end), from the segments' transaction indexes (Kafka's
        collectAbortedTransactions: from the segment holding `start` until an index says no later one can add)."""
        found: list[AbortedTxn] = []
        for base in self._segments_from(start):
            result = TransactionIndex(txn_index_file(self.directory, base), base).collect_aborted_txns(start, end)
            found.extend(result.aborted_transactions)
            if result.is_complete:
                break
        return found
