"""The broker's side of a cleaning: the picture of a log handed to the cleaner process, and the swap of what it wrote.

`prepare_cleaning` takes, from the live log, what the cleaning reads (compaction.CleaningJob: the sealed segments
below the first uncleanable offset with their sizes, the aborted transactions from the transaction indexes, each
active producer's last batch) and keeps the segment objects. `swap_in` then replaces each group of segments by its
cleaned segment under the log's lock (Log.replace_segments), in offset order; if retention or truncation changed a
segment meanwhile, that swap and the ones after it are refused, their cleaned files deleted, and the cleaning is
aborted (the next one starts from the new state of the log). Both are cheap: the cleaning's reading and writing run
in the cleaner process (cleaner_process.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from wirebroker.log.cleaner_manager import LogToClean
from wirebroker.log.compaction import (
    CleaningJob,
    CleaningResult,
    LogCleaningAbortedError,
    SegmentToClean,
    discard_cleaned_segment,
)
from wirebroker.log.files import CLEANED_FILE_SUFFIX, log_file
from wirebroker.log.log import Log
from wirebroker.log.segment import LogSegment


@dataclass(frozen=True)
class PreparedCleaning:
    """A job and the live segments it was made from (by base offset), for the swap."""

    log: Log
    job: CleaningJob
    segments: dict[int, LogSegment]


def prepare_cleaning(to_clean: LogToClean, now: int) -> PreparedCleaning:
    log_ = to_clean.log
    first_uncleanable = to_clean.first_uncleanable_offset
    live = log_.segments.values(0, first_uncleanable) if first_uncleanable > 0 else []
    live = [segment for segment in live if segment.base_offset < first_uncleanable]
    next_bases = [segment.base_offset for segment in live[1:]] + [first_uncleanable]
    segments = tuple(
        SegmentToClean(segment.base_offset, segment.size, segment.offset_index.size_in_bytes,
                       segment.time_index.size_in_bytes, segment.log.last_modified_ms(),
                       tuple(log_.collect_aborted_transactions(segment.base_offset, next_base)))
        for segment, next_base in zip(live, next_bases))
    first_dirty = to_clean.first_dirty_offset
    dirty_segment = log_.segments.floor_segment(first_dirty)
    first_dirty_position = dirty_segment.offset_index.lookup(first_dirty).position if dirty_segment else 0
    job = CleaningJob(
        to_clean.topic_partition, log_.name, log_.dir, log_.config, first_dirty, first_uncleanable,
        first_dirty_position, tuple(log_.collect_aborted_transactions(first_dirty, first_uncleanable)), segments,
        {producer_id: (entry.last_data_offset, entry.producer_epoch)
         for producer_id, entry in log_.active_producers().items()},
        now)
    return PreparedCleaning(log_, job, {segment.base_offset: segment for segment in live})


def swap_in(prepared: PreparedCleaning, result: CleaningResult) -> None:
    """Swap the cleaned segments in for the segments they were made from; LogCleaningAbortedError if the log changed
    (the cleaned files not swapped in are deleted)."""
    log_, job = prepared.log, prepared.job
    sizes = {segment.base_offset: segment.size for segment in job.segments}
    for i, bases in enumerate(result.groups):
        old = [prepared.segments[base] for base in bases]
        # Opening a segment creates missing files: a cleaned segment that is not there must not become an empty one.
        if not os.path.exists(log_file(log_.dir, bases[0], CLEANED_FILE_SUFFIX)):
            discard(prepared, result, i)
            raise LogCleaningAbortedError(f"The cleaned segment {bases[0]} of {log_.name} is missing")
        cleaned = LogSegment(log_.dir, bases[0], log_.config, job.current_time, suffix=CLEANED_FILE_SUFFIX)
        if not log_.replace_segments(cleaned, old, [sizes[base] for base in bases]):
            discard(prepared, result, i)
            raise LogCleaningAbortedError(f"The segments of {log_.name} changed while they were cleaned")


def discard(prepared: PreparedCleaning, result: CleaningResult, from_group: int = 0) -> None:
    """Delete the cleaned segments of `result` from group `from_group` on (an aborted swap)."""
    for bases in result.groups[from_group:]:
        discard_cleaned_segment(prepared.log.dir, prepared.log.config, bases[0])
