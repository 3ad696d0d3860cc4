"""The ordered segments of one log (Kafka's LogSegments), readable without a lock.

Writers (holding the log's lock) replace the whole (base offsets, segments) pair on every change; readers take the
pair once and search it, so a read never sees a half-applied change and never waits for an append.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from wirebroker.log.segment import LogSegment


class LogSegments:
    def __init__(self) -> None:
        self._state: tuple[tuple[int, ...], tuple[LogSegment, ...]] = ((), ())

    # --- changes (callers hold the log's lock) ---

    def add(self, segment: LogSegment) -> None:
        """Add a segment, replacing one with the same base offset."""
        bases, segments = self._state
        i = bisect.bisect_left(bases, segment.base_offset)
        replace = i < len(bases) and bases[i] == segment.base_offset
        rest = i + 1 if replace else i
        self._state = (bases[:i] + (segment.base_offset,) + bases[rest:], segments[:i] + (segment,) + segments[rest:])

    def remove(self, base_offset: int) -> None:
        bases, segments = self._state
        i = bisect.bisect_left(bases, base_offset)
        if i < len(bases) and bases[i] == base_offset:
            self._state = (bases[:i] + bases[i + 1:], segments[:i] + segments[i + 1:])

    def clear(self) -> None:
        self._state = ((), ())

    # --- queries ---

    def __len__(self) -> int:
        return len(self._state[0])

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self._state[1])

    @property
    def base_offsets(self) -> tuple[int, ...]:
        return self._state[0]

    @property
    def first(self) -> LogSegment | None:
        segments = self._state[1]
        return segments[0] if segments else None

    @property
    def last(self) -> LogSegment | None:
        """The active segment."""
        segments = self._state[1]
        return segments[-1] if segments else None

    def get(self, base_offset: int) -> LogSegment | None:
        bases, segments = self._state
        i = bisect.bisect_left(bases, base_offset)
        return segments[i] if i < len(bases) and bases[i] == base_offset else None

    def floor_segment(self, offset: int) -> LogSegment | None:
        """The segment that would hold `offset`: the last one whose base offset is <= it."""
        bases, segments = self._state
        i = bisect.bisect_right(bases, offset) - 1
        return segments[i] if i >= 0 else None

    def higher_segment(self, offset: int) -> LogSegment | None:
        bases, segments = self._state
        i = bisect.bisect_right(bases, offset)
        return segments[i] if i < len(bases) else None

    def lower_segment(self, offset: int) -> LogSegment | None:
        bases, segments = self._state
        i = bisect.bisect_left(bases, offset) - 1
        return segments[i] if i >= 0 else None

    def values(self, from_offset: int, to_offset: int) -> list[LogSegment]:
        """The segments that may hold offsets in [from_offset, to_offset): from the floor of from_offset on."""
        if from_offset == to_offset:
            return []
        if to_offset < from_offset:
            raise ValueError(f"Invalid log segment range: requested segments from offset {from_offset} mapping to "
                             f"segment with a base offset greater than {to_offset}")
        bases, segments = self._state
        start = max(bisect.bisect_right(bases, from_offset) - 1, 0)
        end = bisect.bisect_left(bases, to_offset)
        return list(segments[start:end])

    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._state[1])

    def close(self) -> None:
        for segment in self._state[1]:
            segment.close()
