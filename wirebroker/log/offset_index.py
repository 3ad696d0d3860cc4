"""The offset index of a segment (Kafka's OffsetIndex): a sparse map from offsets to byte positions in the .log file.

File format (<base offset, 20 digits>.index), a sequence of 8-byte big-endian entries:

    relative_offset  int32   offset - segment base offset (offsets in a segment span at most 2^31 - 1)
    position         int32   byte position in the .log file of the batch that contains that offset

Entries are added every `index.interval.bytes` of appended data, each for the *last* offset of the batch appended at
`position`, so both columns strictly increase. A lookup returns the entry with the largest offset <= the target
(or (base offset, 0) if none); the reader then scans batch headers forward from that position. The file carries no
checksum: a missing or corrupt index is rebuilt from the .log file (segment.py, LogSegment.recover). Preallocation,
trimming and lazy loading are described in index_file.py.
"""

from __future__ import annotations

import bisect
import struct
from typing import NamedTuple

from wirebroker.log.index_file import CorruptIndexError, IndexFile


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class OffsetIndex(IndexFile):
    ENTRY = struct.Struct(">ii")
    KEY_TYPECODE = "i"  # relative offset
    VALUE_TYPECODE = "i"  # position
    OFFSET_COLUMN = 0

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The entry with the largest offset <= target_offset, or (base offset, 0).

        Every fetch asks this once: one binary search over the loaded keys, no helper calls."""
        keys, values = self._loaded()
        slot = bisect.bisect_right(keys, target_offset - self.base_offset, 0, len(keys)) - 1
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return OffsetPosition(self.base_offset + keys[slot], values[slot])

    def fetch_upper_bound_offset(self, start: OffsetPosition, fetch_size: int) -> OffsetPosition | None:
        """An entry whose position is at or beyond start.position + fetch_size: an offset outside the fetched range."""
        slot = self._smallest_upper_bound_slot(start.position + fetch_size, 1)
        return None if slot < 0 else self._parse(slot)

    @property
    def last_offset(self) -> int:
        last = self.last_raw_entry()
        return self.base_offset if last is None else self.base_offset + last[0]

    def append(self, offset: int, position: int) -> None:
        """Add an entry; `offset` must exceed every offset already in the index."""
        last = self.last_raw_entry()
        if last is not None and offset <= self.base_offset + last[0]:
            raise ValueError(f"Attempt to append an offset {offset} to index {self.path} no larger than the last "
                             f"offset appended ({self.base_offset + last[0]})")
        self._append_raw(self.relative_offset(offset), position)

    def _parse(self, slot: int) -> OffsetPosition:
        relative, position = self.entry(slot)
        return OffsetPosition(self.base_offset + relative, position)

    def _check_last_entry(self, last: tuple[int, int], log_size: int | None) -> None:
        relative, position = last
        if relative < 0:
            raise CorruptIndexError(f"Corrupt index found, index file {self.path} has non-zero size but the last "
                                    f"offset is {self.base_offset + relative} which is less than the base offset "
                                    f"{self.base_offset}")
        if log_size is not None and not 0 <= position < max(log_size, 1):
            raise CorruptIndexError(f"Corrupt index found, index file {self.path} points at position {position} "
                                    f"beyond the end of its {log_size}-byte log file")
