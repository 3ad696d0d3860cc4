"""The .log file of a segment (Kafka's FileRecords): record batches back to back, exactly as producers sent them
(after the broker assigned offsets), with nothing in between.

    <base offset, 20 digits>.log := RecordBatch*      (RecordBatch v2 layout: wirebroker/protocol/records.py)

Every batch starts with baseOffset int64 and batchLength int32, so the file is walked batch by batch from any batch
boundary. A walk stops at the first batch that does not fit before the end of the file (a torn write at the tail);
recovery (segment.py) then truncates the file there.

The file stays open for the life of the segment. Appends write at the end with pwrite and then publish the new size,
so a reader bounded by `size` never sees a partial batch. Reads hand out FileRegion ranges of the open file, which the
network layer sends with os.sendfile; because of that a deleted segment's file is closed only after
file.delete.delay.ms (see segment.py), never under a response that is still being sent.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterator
from typing import NamedTuple

from wirebroker.log.batch_records import record_timestamps
from wirebroker.log.files import delete_file_if_exists
from wirebroker.protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    FileRegion,
    read_header,
)

READ_AHEAD_BYTES = 64 * 1024  # one pread serves the headers of many small batches during a scan
# An offset search starts at the index entry below its target, at most index.interval.bytes (4096 by default) and
# one batch before it: 8 KiB a pread covers that walk without copying 64 KiB of records per fetch.
SEARCH_READ_BYTES = 8 * 1024
HEADER_SIZE_UP_TO_MAGIC = 17  # baseOffset, batchLength, partitionLeaderEpoch, magic: Kafka's minimum to read a batch
_OFFSET_AND_LENGTH = struct.Struct(">qi")
# Where an offset search finds magic and lastOffsetDelta in a v2 batch header (protocol/records.py's layout).
_MAGIC_OFFSET = 16
_LAST_OFFSET_DELTA_OFFSET = 23
_LAST_OFFSET_DELTA = struct.Struct(">i")
NO_PARTITION_LEADER_EPOCH = -1


class FileBatch(NamedTuple):
    """A batch found in the file: its position, its parsed header, and its bytes when asked for."""

    position: int
    header: BatchHeader
    data: memoryview | None


class LogOffsetPosition(NamedTuple):
    """The batch holding (or first after) a searched offset: its last offset, position and size in bytes."""

    offset: int
    position: int
    size: int


class TimestampAndOffset(NamedTuple):
    timestamp: int
    offset: int
    leader_epoch: int | None


class FileRecords:
    def __init__(self, path: str, writable: bool = True) -> None:
        """`writable=False` opens an existing file read-only: a reader beside a running broker (wirebroker.spark)
        must neither create a segment that retention just removed nor need write access to the log dir."""
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if writable else os.open(path, os.O_RDONLY)
        self._size = os.fstat(self._fd).st_size
        self._write_lock = threading.Lock()

    @property
    def size(self) -> int:
        return self._size

    @property
    def fileno(self) -> int:
        return self._fd

    # --- writing ---

    def append(self, data: bytes | bytearray | memoryview) -> int:
        """Write `data` at the end and return its length."""
        with self._write_lock:
            position = self._size
            written = 0
            view = memoryview(data)
            while written < len(view):
                written += os.pwrite(self._fd, view[written:], position + written)
            self._size = position + written
            return written

    def truncate_to(self, target_size: int) -> int:
        """Cut the file to `target_size` bytes; the number of bytes removed."""
        with self._write_lock:
            if target_size > self._size or target_size < 0:
                raise ValueError(f"Attempt to truncate log segment {self.path} to {target_size} bytes failed, "
                                 f"size of this log segment is {self._size} bytes")
            removed = self._size - target_size
            if removed:
                os.ftruncate(self._fd, target_size)
                self._size = target_size
            return removed

    def trim(self) -> None:
        """Drop any bytes past the logical size (a preallocated file)."""
        if os.fstat(self._fd).st_size > self._size:
            os.ftruncate(self._fd, self._size)

    def flush(self) -> None:
        os.fsync(self._fd)

    # --- reading ---

    def read(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def slice(self, position: int, size: int) -> FileRegion:
        """A range of the file for os.sendfile, clipped to the current size."""
        end = min(position + size, self._size)
        return FileRegion(self._fd, position, max(end - position, 0), self)

    def batches(self, start: int = 0, end: int | None = None, with_data: bool = False) -> Iterator[FileBatch]:
        """The batches from byte `start` (a batch boundary) up to `end`, stopping at one that does not fit."""
        end = self._size if end is None else end
        buf, buf_start = b"", start
        position = start
        while end - position >= HEADER_SIZE_UP_TO_MAGIC:
            if position + LOG_OVERHEAD > buf_start + len(buf):
                buf, buf_start = self._read_ahead(position, LOG_OVERHEAD, end)
            _, batch_length = _OFFSET_AND_LENGTH.unpack_from(buf, position - buf_start)
            batch_size = batch_length + LOG_OVERHEAD
            if position + batch_size > end:
                return
            needed = batch_size if with_data else min(batch_size, BATCH_HEADER_SIZE)
            if position + needed > buf_start + len(buf):
                buf, buf_start = self._read_ahead(position, needed, end)
            offset_in_buf = position - buf_start
            header = read_header(buf, offset_in_buf)
            data = memoryview(buf)[offset_in_buf:offset_in_buf + batch_size] if with_data else None
            yield FileBatch(position, header, data)
            position += batch_size

    def _read_ahead(self, position: int, needed: int, end: int,
                    read_bytes: int = READ_AHEAD_BYTES) -> tuple[bytes, int]:
        length = min(max(needed, read_bytes), end - position)
        data = os.pread(self._fd, length, position)
        if len(data) < needed:
            raise EOFError(f"{self.path} ended at {position + len(data)} inside a batch expected to end at "
                           f"{position + needed}")
        return data, position

    def search_for_offset_with_size(self, target_offset: int, start_position: int) -> LogOffsetPosition | None:
        """The first batch from `start_position` whose last offset is >= target_offset.

        Every fetch runs this walk (from the offset index's floor entry), so it reads only the fields it needs of
        each header, in SEARCH_READ_BYTES gulps; it stops, and fails, exactly where `batches` would: a batch that
        does not fit before the end ends the walk, and a header `read_header` refuses raises its error.
        """
        end = self._size
        position = start_position
        buf, buf_start = b"", start_position
        while end - position >= HEADER_SIZE_UP_TO_MAGIC:
            at = position - buf_start
            if len(buf) - at < BATCH_HEADER_SIZE:
                buf, buf_start = self._read_ahead(position, LOG_OVERHEAD, end, SEARCH_READ_BYTES)
                at = 0
            base_offset, batch_length = _OFFSET_AND_LENGTH.unpack_from(buf, at)
            batch_size = batch_length + LOG_OVERHEAD
            if position + batch_size > end:
                return None
            if len(buf) - at < BATCH_HEADER_SIZE or batch_size < BATCH_HEADER_SIZE or buf[at + _MAGIC_OFFSET] != MAGIC:
                read_header(buf, at)  # always raises here: a short, too small or non-v2 header
            last_offset = base_offset + _LAST_OFFSET_DELTA.unpack_from(buf, at + _LAST_OFFSET_DELTA_OFFSET)[0]
            if last_offset >= target_offset:
                return LogOffsetPosition(last_offset, position, batch_size)
            position += batch_size
        return None

    def search_for_timestamp(self, target_timestamp: int, start_position: int,
                             starting_offset: int) -> TimestampAndOffset | None:
        """The first record from `start_position` with timestamp >= target and offset >= starting_offset."""
        for batch in self.batches(start_position, with_data=False):
            header = batch.header
            if header.max_timestamp < target_timestamp:
                continue
            data = self.read(batch.position, header.size)
            for offset, timestamp in record_timestamps(data, header):
                if timestamp >= target_timestamp and offset >= starting_offset:
                    return TimestampAndOffset(timestamp, offset, _leader_epoch(header))
        return None

    def largest_timestamp_after(self, start_position: int) -> TimestampAndOffset:
        """The largest batch max timestamp from `start_position` and the last offset of its batch, or (-1, -1)."""
        best = TimestampAndOffset(-1, -1, None)
        for batch in self.batches(start_position):
            if batch.header.max_timestamp > best.timestamp:
                best = TimestampAndOffset(batch.header.max_timestamp, batch.header.last_offset, _leader_epoch(batch.header))
        return best

    # --- lifecycle ---

    def rename_to(self, path: str) -> None:
        os.replace(self.path, path)
        self.path = path

    def close(self) -> None:
        with self._write_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def delete_if_exists(self) -> bool:
        self.close()
        return delete_file_if_exists(self.path)

    def last_modified_ms(self) -> int:
        return os.stat(self.path).st_mtime_ns // 1_000_000


def _leader_epoch(header: BatchHeader) -> int | None:
    epoch = header.partition_leader_epoch
    return epoch if epoch != NO_PARTITION_LEADER_EPOCH else None
