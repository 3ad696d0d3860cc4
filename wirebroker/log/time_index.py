"""The time index of a segment (Kafka's TimeIndex): a sparse map from timestamps to offsets.

File format (<base offset, 20 digits>.timeindex), a sequence of 12-byte big-endian entries:

    timestamp        int64   the largest timestamp seen in the segment up to ...
    relative_offset  int32   ... this offset (offset - segment base offset)

An entry (T, O) means every record with a timestamp above T comes after offset O. Entries are added alongside offset
index entries and only when the timestamp grows, so timestamps strictly increase and offsets never decrease. When a
segment rolls or closes, one last entry with the segment's largest timestamp is appended (the last slot is reserved
for it, hence `is_full` one entry early): retention by time reads that entry. A lookup returns the entry with the
largest timestamp <= the target (or (-1, base offset) if none). Preallocation, trimming and lazy loading are
described in index_file.py.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from wirebroker.log.index_file import CorruptIndexError, IndexFile

NO_TIMESTAMP = -1


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class TimeIndex(IndexFile):
    ENTRY = struct.Struct(">qi")
    KEY_TYPECODE = "q"  # timestamp
    VALUE_TYPECODE = "i"  # relative offset
    OFFSET_COLUMN = 1

    def is_full(self) -> bool:
        # The last slot is kept for the entry appended on roll or close. Asked on every append (as IndexFile's):
        # one load check, no property calls.
        return len(self._loaded()[0]) >= self._length // self.ENTRY.size - 1

    def last_entry(self) -> TimestampOffset:
        last = self.last_raw_entry()
        return TimestampOffset(NO_TIMESTAMP, self.base_offset) if last is None else self._parse(last)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= target_timestamp, or (-1, base offset)."""
        slot = self._largest_lower_bound_slot(target_timestamp, 0)
        if slot < 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self._parse(self.entry(slot))

    def maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) if the timestamp exceeds the last entry's; neither column may go backwards."""
        if not skip_full_check and self.is_full():
            raise ValueError(f"Attempt to append to a full time index {self.path} (size = {self.entries})")
        last = self.last_raw_entry()
        if last is not None:
            last_timestamp, last_offset = last[0], self.base_offset + last[1]
            if offset < last_offset:
                raise ValueError(f"Attempt to append an offset ({offset}) to time index {self.path} no larger than "
                                 f"the last offset appended ({last_offset})")
            if timestamp < last_timestamp:
                raise ValueError(f"Attempt to append a timestamp ({timestamp}) to time index {self.path} no larger "
                                 f"than the last timestamp appended ({last_timestamp})")
            if timestamp == last_timestamp:
                return
        elif timestamp <= NO_TIMESTAMP:
            return
        self._append_raw(timestamp, self.relative_offset(offset))

    def _parse(self, raw: tuple[int, int]) -> TimestampOffset:
        return TimestampOffset(raw[0], self.base_offset + raw[1])

    def _check_last_entry(self, last: tuple[int, int], log_size: int | None) -> None:
        if last[1] < 0:
            raise CorruptIndexError(f"Corrupt time index found, time index file {self.path} has non-zero size but "
                                    f"the last offset is {self.base_offset + last[1]} which is less than the base "
                                    f"offset {self.base_offset}")
