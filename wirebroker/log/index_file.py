"""What the offset index and the time index share (Kafka's AbstractIndex): a file of fixed-size entries.

A new index file is preallocated to `max_index_size` bytes rounded down to a whole number of entries, like Kafka,
and entries are written in place from the start; the unused tail stays zero. When the segment stops being active
(roll) or is closed, the file is trimmed to its entries, so a cleanly closed index is exactly `entries * size` bytes
long and its entry count is its length divided by the entry size. An active segment's index is grown back to the
maximum size when it is opened for appending.

Entries are kept in memory as two arrays (key, value), loaded from the file on first use, so a segment that nobody
reads costs no memory. Lookups are binary searches over the arrays; appends write the entry to the file with
pwrite and then extend the arrays. Readers do not lock: an append only extends the arrays (value first, then key,
so a reader that sees a key also sees its value) and a truncation swaps in new arrays.
"""

from __future__ import annotations

import array
import bisect
import logging
import os
import struct
import threading

from wirebroker.log.files import delete_file_if_exists, rename_file_if_exists

log = logging.getLogger(__name__)

INT32_MAX = 2**31 - 1


class CorruptIndexError(Exception):
    """An index file that fails its sanity check; the segment is recovered (its indexes rebuilt) instead."""


class IndexFile:
    """A preallocated file of (key, value) entries of one `ENTRY` layout; subclasses give them a meaning."""

    ENTRY: struct.Struct  # the entry layout, big-endian
    KEY_TYPECODE: str  # array typecode of the key column
    VALUE_TYPECODE: str  # array typecode of the value column
    OFFSET_COLUMN: int  # which column holds relative offsets (0 = key, 1 = value)

    def __init__(self, path: str, base_offset: int, max_index_size: int) -> None:
        if max_index_size < self.ENTRY.size:
            raise ValueError(f"Invalid max index size {max_index_size} for {path}")
        self.path = path
        self.base_offset = base_offset
        self.max_index_size = max_index_size
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._dirty = False  # written since the last fsync
        self._length = 0  # bytes in the file
        self._entries: tuple[array.array, array.array] | None = None  # (keys, values), None until loaded
        if not os.path.exists(path):
            self._create()

    # --- file handling ---

    def _create(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        length = self._round_down(self.max_index_size)
        os.ftruncate(fd, length)
        self._fd, self._length, self._dirty = fd, length, True
        self._entries = (array.array(self.KEY_TYPECODE), array.array(self.VALUE_TYPECODE))

    def _loaded(self) -> tuple[array.array, array.array]:
        entries = self._entries
        if entries is None:
            with self._lock:
                if self._entries is None:
                    self._load()
                entries = self._entries
        return entries  # type: ignore[return-value]

    def _load(self) -> None:
        with open(self.path, "a+b") as f:
            f.seek(0)
            data = f.read()
        # A preallocated index not trimmed at shutdown ends in zeros; no valid entry is all zeros (the first is added
        # after index.interval.bytes), so the entries end where the zeros begin. rstrip finds that at C speed.
        used = len(data.rstrip(b"\x00"))
        count = -(-used // self.ENTRY.size)
        keys, values = array.array(self.KEY_TYPECODE), array.array(self.VALUE_TYPECODE)
        for key, value in self.ENTRY.iter_unpack(data[:count * self.ENTRY.size]):
            keys.append(key)
            values.append(value)
        self._length, self._entries = len(data), (keys, values)

    def _writable_fd(self) -> int:
        # Opened on the first write: sealed segments' indexes, only ever read, hold no descriptor.
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        self._dirty = True
        return self._fd

    def _round_down(self, size: int) -> int:
        return size - size % self.ENTRY.size

    # --- state ---

    @property
    def entries(self) -> int:
        return len(self._loaded()[0])

    @property
    def max_entries(self) -> int:
        self._loaded()
        return self._length // self.ENTRY.size

    @property
    def length(self) -> int:
        self._loaded()
        return self._length

    @property
    def size_in_bytes(self) -> int:
        return self.entries * self.ENTRY.size

    def is_full(self) -> bool:
        # Asked twice per append (LogSegment.should_roll): one load check, no property calls.
        return len(self._loaded()[0]) >= self._length // self.ENTRY.size

    def relative_offset(self, offset: int) -> int:
        relative = offset - self.base_offset
        if not 0 <= relative <= INT32_MAX:
            raise IndexOffsetOverflowError(f"Integer overflow for offset {offset} in {self.path}")
        return relative

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= INT32_MAX

    def entry(self, n: int) -> tuple[int, int]:
        """The raw (key, value) of slot n."""
        keys, values = self._loaded()
        return keys[n], values[n]

    def last_raw_entry(self) -> tuple[int, int] | None:
        keys, values = self._loaded()
        n = len(keys)
        return (keys[n - 1], values[n - 1]) if n else None

    # --- searches ---

    def _largest_lower_bound_slot(self, target: int, column: int) -> int:
        """The last slot whose key (column 0) or value (column 1) is <= target, or -1."""
        entries = self._loaded()
        return bisect.bisect_right(entries[column], target, 0, len(entries[0])) - 1

    def _smallest_upper_bound_slot(self, target: int, column: int) -> int:
        """The first slot whose key or value is >= target, or -1."""
        entries = self._loaded()
        n = len(entries[0])
        slot = bisect.bisect_left(entries[column], target, 0, n)
        return slot if slot < n else -1

    # --- mutation (callers serialize appends and truncations; see module docstring) ---

    def _append_raw(self, key: int, value: int) -> None:
        keys, values = self._loaded()
        n = len(keys)
        if n >= self._length // self.ENTRY.size:
            raise ValueError(f"Attempt to append to a full index {self.path} (size = {n})")
        os.pwrite(self._writable_fd(), self.ENTRY.pack(key, value), n * self.ENTRY.size)
        values.append(value)
        keys.append(key)

    def _truncate_to_entries(self, count: int) -> None:
        keys, values = self._loaded()
        self._entries = (keys[:count], values[:count])

    def truncate_to(self, offset: int) -> None:
        """Remove every entry with an offset >= `offset`."""
        entries = self._loaded()
        keep = bisect.bisect_left(entries[self.OFFSET_COLUMN], offset - self.base_offset, 0, len(entries[0]))
        self._truncate_to_entries(keep)

    def truncate(self) -> None:
        """Remove every entry (without reading the file: a rebuild is about to write it anew)."""
        with self._lock:
            if self._entries is None:
                self._length = os.path.getsize(self.path)
            self._entries = (array.array(self.KEY_TYPECODE), array.array(self.VALUE_TYPECODE))

    def resize(self, new_size: int) -> bool:
        """Set the file length to `new_size` rounded down to whole entries; False if it already had that length."""
        self._loaded()
        rounded = self._round_down(new_size)
        with self._lock:
            if rounded == self._length:
                return False
            os.ftruncate(self._writable_fd(), rounded)
            self._length = rounded
            keys = self._entries[0]  # type: ignore[index]
            if len(keys) * self.ENTRY.size > rounded:
                self._truncate_to_entries(rounded // self.ENTRY.size)
            return True

    def reset(self) -> None:
        """Remove every entry and grow the file back to the maximum size (before a rebuild)."""
        self.truncate()
        self.resize(self.max_index_size)

    def trim_to_valid_size(self) -> None:
        """Cut the file to its entries (the segment is sealed or closing) and let go of its descriptor."""
        self.resize(self.size_in_bytes)
        self._release_fd()

    def _release_fd(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def flush(self) -> None:
        """Make the entries written so far durable (the descriptor may have been let go since)."""
        if not self._dirty:
            return
        with self._lock:
            fd = self._fd if self._fd is not None else os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                if fd != self._fd:
                    os.close(fd)
            self._dirty = False

    def sanity_check(self, log_size: int | None = None) -> None:
        """Kafka's cheap checks, done without loading the entries; raises CorruptIndexError."""
        length = os.path.getsize(self.path) if self._entries is None else self._length
        if length % self.ENTRY.size:
            raise CorruptIndexError(f"Index file {self.path} is corrupt, found {length} bytes which is not a "
                                    f"multiple of {self.ENTRY.size}")
        last = self._last_entry_from_file(length) if self._entries is None else self.last_raw_entry()
        if last is not None:
            self._check_last_entry(last, log_size)

    def _last_entry_from_file(self, length: int) -> tuple[int, int] | None:
        if length == 0:
            return None
        with open(self.path, "rb") as f:
            f.seek(length - self.ENTRY.size)
            return self.ENTRY.unpack(f.read(self.ENTRY.size))

    def _check_last_entry(self, last: tuple[int, int], log_size: int | None) -> None:
        """Subclass hook: raise CorruptIndexError if the last (key, value) cannot be right."""

    def close(self) -> None:
        """Trim to the entries and release the file."""
        if self._entries is not None:
            self.trim_to_valid_size()
        self.close_handler()

    def close_handler(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._entries = None

    def rename_to(self, path: str) -> None:
        rename_file_if_exists(self.path, path)
        self.path = path

    def delete_if_exists(self) -> bool:
        self.close_handler()
        return delete_file_if_exists(self.path)


class IndexOffsetOverflowError(Exception):
    """An offset that does not fit the index's 32-bit relative offsets; the segment must roll first."""
