"""Which old segments retention deletes (the rules of Kafka's UnifiedLog.deleteOldSegments).

`Log.delete_old_segments` applies three rules in Kafka's order, each under the log's lock: segments wholly below the
log start offset, then (cleanup.policy delete only) retention.bytes, then retention.ms. Whatever the rule, a segment
goes only if it lies wholly below the high watermark, so the log start offset (exposed in fetch responses) never
passes it; the scan stops at the first segment that stays, and an empty active segment never goes.
"""

from __future__ import annotations

from collections.abc import Callable

from wirebroker.log.segment import LogSegment
from wirebroker.log.segments import LogSegments

# (segment, the next one or None for the active segment) -> may retention delete the segment?
SegmentPredicate = Callable[[LogSegment, LogSegment | None], bool]


def deletable_segments(segments: LogSegments, high_watermark: int, log_end_offset: int,
                       predicate: SegmentPredicate) -> list[LogSegment]:
    """The oldest segments, in order, for as long as `predicate` holds and each lies below the high watermark."""
    candidates = list(segments)
    deletable = []
    for i, segment in enumerate(candidates):
        next_segment = candidates[i + 1] if i + 1 < len(candidates) else None
        upper_bound = next_segment.base_offset if next_segment is not None else log_end_offset
        is_last_and_empty = next_segment is None and segment.size == 0
        if high_watermark >= upper_bound and predicate(segment, next_segment) and not is_last_and_empty:
            deletable.append(segment)
        else:
            break
    return deletable


def retention_size_breach(log_size: int, retention_bytes: int) -> SegmentPredicate | None:
    """retention.bytes: the oldest segments whose sizes fit in the excess; None when there is no excess."""
    if retention_bytes < 0 or log_size < retention_bytes:
        return None
    excess = log_size - retention_bytes

    def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        nonlocal excess
        if excess - segment.size < 0:
            return False
        excess -= segment.size
        return True
    return breached


def retention_ms_breach(now: int, retention_ms: int) -> SegmentPredicate | None:
    """retention.ms: segments whose largest timestamp is older than that; None when retention.ms is -1."""
    if retention_ms < 0:
        return None

    def breached(segment: LogSegment, next_segment: LogSegment | None) -> bool:
        return now - segment.largest_timestamp() > retention_ms
    return breached
