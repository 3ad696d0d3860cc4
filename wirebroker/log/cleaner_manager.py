"""Which log the cleaner works on next, and how far each log is clean (Kafka's LogCleanerManager).

Per log dir, `cleaner-offset-checkpoint` (Kafka's offset checkpoint format, checkpoints.py) holds for each compacted
partition its first dirty offset: everything below it has been cleaned at least once.

The dirty section of a log runs from its first dirty offset to its first uncleanable offset, the least of:
  * the last stable offset (never clean past an open transaction or above the high watermark);
  * the active segment's base offset (the active segment is never cleaned);
  * the first segment whose largest timestamp is within min.compaction.lag.ms of now;
rounded down to a segment's base offset. A log is cleanable when its dirty ratio (dirty bytes / total bytes) is above
min.cleanable.dirty.ratio, or when max.compaction.lag.ms has passed for its oldest dirty segment's first batch; the
dirtiest cleanable log goes first. A partition is cleaned by one thread at a time (the in-progress set); deleting a
log aborts its cleaning and waits for the thread to let go.
"""

from __future__ import annotations

import enum
import logging
import os
import threading
from dataclasses import dataclass

from wirebroker.log.checkpoints import (
    CorruptCheckpointError,
    read_offset_checkpoint,
    write_offset_checkpoint,
)
from wirebroker.log.compaction import LogCleaningAbortedError
from wirebroker.log.files import TopicPartition
from wirebroker.log.local_log import now_ms
from wirebroker.log.log import Log
from wirebroker.log.segment import LogSegment

log = logging.getLogger(__name__)

CLEANER_OFFSET_CHECKPOINT_FILE = "cleaner-offset-checkpoint"


class CleaningState(enum.Enum):
    IN_PROGRESS = "LogCleaningInProgress"
    ABORTED = "LogCleaningAborted"
    PAUSED = "LogCleaningPaused"


@dataclass(frozen=True)
class LogToClean:
    """A log and the range a cleaning may cover (Kafka's LogToClean): clean bytes below the first dirty offset,
    cleanable bytes from there to the first uncleanable segment, and their ratio, which chooses the dirtiest log."""

    topic_partition: TopicPartition
    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    need_compaction_now: bool = False

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


@dataclass
class PreCleanStats:
    """What one choice of log saw (Kafka's PreCleanStats): how long past max.compaction.lag.ms the most overdue
    compacted log was, in ms (0: none overdue)."""

    max_compaction_delay_ms: int = 0


class LogCleanerManager:
    def __init__(self, log_dirs: list[str], logs: dict[TopicPartition, Log] | None = None) -> None:
        self.log_dirs = log_dirs
        self._logs = logs if logs is not None else {}
        self._in_progress: dict[TopicPartition, CleaningState] = {}
        self._paused_count: dict[TopicPartition, int] = {}
        self._uncleanable: set[TopicPartition] = set()
        self._lock = threading.RLock()
        self._paused_cleaning = threading.Condition(self._lock)
        # Read by the broker's metrics (Kafka's max-dirty-percent and time-since-last-run-ms gauges).
        self.dirtiest_log_cleanable_ratio = 0.0
        self.time_of_last_run = now_ms()

    def set_logs(self, logs: dict[TopicPartition, Log]) -> None:
        with self._lock:
            self._logs = logs

    # --- checkpoints ---

    def _checkpoint_path(self, log_dir: str) -> str:
        return os.path.join(log_dir, CLEANER_OFFSET_CHECKPOINT_FILE)

    def all_cleaner_checkpoints(self) -> dict[TopicPartition, int]:
        found: dict[TopicPartition, int] = {}
        with self._lock:
            for log_dir in self.log_dirs:
                try:
                    found.update(read_offset_checkpoint(self._checkpoint_path(log_dir)))
                except CorruptCheckpointError as exc:
                    log.error("Failed to read the cleaner checkpoint of %s (%s); its logs will be cleaned from their "
                              "start", log_dir, exc)
        return found

    def update_checkpoints(self, log_dir: str, update: tuple[TopicPartition, int] | None = None,
                           remove: TopicPartition | None = None) -> None:
        with self._lock:
            path = self._checkpoint_path(log_dir)
            try:
                existing = read_offset_checkpoint(path)
            except CorruptCheckpointError:
                existing = {}
            # Only partitions this dir still holds (a deleted or moved one goes).
            entries = {tp: offset for tp, offset in existing.items()
                       if tp in self._logs and os.path.dirname(self._logs[tp].dir) == log_dir}
            if update is not None:
                entries[update[0]] = update[1]
            if remove is not None:
                entries.pop(remove, None)
            write_offset_checkpoint(path, entries)

    # --- choosing ---

    def grab_filthiest_compacted_log(self, now: int, pre_clean_stats: PreCleanStats | None = None
                                     ) -> LogToClean | None:
        """The dirtiest cleanable compacted log, marked in progress; None when no log needs cleaning. What the choice
        saw goes into `pre_clean_stats`."""
        with self._lock:
            self.time_of_last_run = now
            last_clean = self.all_cleaner_checkpoints()
            dirty_logs = []
            for tp, log_ in list(self._logs.items()):
                if not log_.config.compact or tp in self._in_progress or tp in self._uncleanable:
                    continue
                last_clean_offset = last_clean.get(tp)
                truncated_to = log_.take_truncation_point()
                if truncated_to is not None and last_clean_offset is not None and last_clean_offset > truncated_to:
                    last_clean_offset = truncated_to
                    self.update_checkpoints(os.path.dirname(log_.dir), update=(tp, truncated_to))
                first_dirty, first_uncleanable, force_update = cleanable_offsets(log_, last_clean_offset, now)
                if force_update:
                    self.update_checkpoints(os.path.dirname(log_.dir), update=(tp, first_dirty))
                delay = max_compaction_delay(log_, first_dirty, now)
                if pre_clean_stats is not None:
                    pre_clean_stats.max_compaction_delay_ms = max(pre_clean_stats.max_compaction_delay_ms, delay)
                to_clean = log_to_clean(tp, log_, first_dirty, first_uncleanable, delay > 0)
                if to_clean.total_bytes > 0:
                    dirty_logs.append(to_clean)
            self.dirtiest_log_cleanable_ratio = max((ltc.cleanable_ratio for ltc in dirty_logs), default=0.0)
            cleanable = [ltc for ltc in dirty_logs
                         if (ltc.need_compaction_now and ltc.cleanable_bytes > 0)
                         or ltc.cleanable_ratio > ltc.log.config.min_cleanable_dirty_ratio]
            if not cleanable:
                return None
            filthiest = max(cleanable, key=lambda ltc: ltc.cleanable_ratio)
            self._in_progress[filthiest.topic_partition] = CleaningState.IN_PROGRESS
            return filthiest

    def uncleanable_partitions(self, now: int) -> dict[str, tuple[int, int]]:
        """Per log dir, how many of its partitions a failed cleaning marked uncleanable and the bytes they leave
        dirty (Kafka's uncleanable-partitions-count and uncleanable-bytes gauges, tagged logDirectory)."""
        with self._lock:
            found = dict.fromkeys(self.log_dirs, (0, 0))
            last_clean = self.all_cleaner_checkpoints() if self._uncleanable else {}
            for tp in self._uncleanable:
                log_ = self._logs.get(tp)
                log_dir = os.path.dirname(log_.dir) if log_ is not None else None
                if log_ is None or log_dir not in found:
                    continue
                first_dirty, first_uncleanable, _ = cleanable_offsets(log_, last_clean.get(tp), now)
                dirty = log_to_clean(tp, log_, first_dirty, first_uncleanable, False).cleanable_bytes
                count, size = found[log_dir]
                found[log_dir] = (count + 1, size + dirty)
            return found

    # --- progress, abort, pause ---

    def is_cleaning_aborted(self, tp: TopicPartition) -> bool:
        """Whether the cleaning of `tp` was asked to stop (asked often while the cleaner process works)."""
        with self._lock:
            return self._in_progress.get(tp) is CleaningState.ABORTED

    def check_cleaning_aborted(self, tp: TopicPartition) -> None:
        """Raise LogCleaningAbortedError if the cleaning of `tp` was asked to stop."""
        if self.is_cleaning_aborted(tp):
            raise LogCleaningAbortedError(f"The cleaning of {tp} was aborted")

    def done_cleaning(self, tp: TopicPartition, log_dir: str, end_offset: int) -> None:
        """Checkpoint the new first dirty offset and let go of the partition (or mark it paused if aborted)."""
        with self._lock:
            state = self._in_progress.get(tp)
            if state is CleaningState.IN_PROGRESS:
                self.update_checkpoints(log_dir, update=(tp, end_offset))
                del self._in_progress[tp]
            elif state is CleaningState.ABORTED:
                self._pause(tp)

    def cleaning_failed(self, tp: TopicPartition, aborted: bool) -> None:
        """Let go of the partition after an aborted or failed cleaning; a failure marks it uncleanable (as Kafka,
        until the broker restarts), so one bad log does not stop the cleaner for all others."""
        with self._lock:
            state = self._in_progress.get(tp)
            if state is CleaningState.ABORTED:
                self._pause(tp)
            elif state is CleaningState.IN_PROGRESS:
                del self._in_progress[tp]
            if not aborted:
                self._uncleanable.add(tp)

    def _pause(self, tp: TopicPartition) -> None:
        self._in_progress[tp] = CleaningState.PAUSED
        self._paused_count[tp] = self._paused_count.get(tp, 0) + 1
        self._paused_cleaning.notify_all()

    def abort_and_pause_cleaning(self, tp: TopicPartition) -> None:
        """Stop any cleaning of `tp` and keep it from starting until `resume_cleaning`; waits for the thread."""
        with self._lock:
            state = self._in_progress.get(tp)
            if state is None:
                self._pause(tp)
            elif state is CleaningState.PAUSED:
                self._paused_count[tp] += 1
            elif state is CleaningState.IN_PROGRESS:
                self._in_progress[tp] = CleaningState.ABORTED
            while self._in_progress.get(tp) is not CleaningState.PAUSED:
                self._paused_cleaning.wait(0.1)

    def resume_cleaning(self, tp: TopicPartition) -> None:
        with self._lock:
            if self._in_progress.get(tp) is not CleaningState.PAUSED:
                return
            self._paused_count[tp] -= 1
            if self._paused_count[tp] == 0:
                del self._paused_count[tp]
                del self._in_progress[tp]

    def abort_all_in_progress(self) -> None:
        """Ask every running cleaning to stop (shutdown)."""
        with self._lock:
            for tp, state in self._in_progress.items():
                if state is CleaningState.IN_PROGRESS:
                    self._in_progress[tp] = CleaningState.ABORTED

    def abort_cleaning(self, tp: TopicPartition) -> None:
        """Stop any cleaning of `tp` and wait for its thread to let go (its log is going away)."""
        with self._lock:
            self.abort_and_pause_cleaning(tp)
            self.resume_cleaning(tp)
            self._uncleanable.discard(tp)


def cleanable_offsets(log_: Log, last_clean_offset: int | None, now: int) -> tuple[int, int, bool]:
    """(first dirty offset, first uncleanable offset, whether the checkpoint must be reset) of a log."""
    log_start_offset = log_.log_start_offset
    checkpointed = log_start_offset if last_clean_offset is None else last_clean_offset
    force_update = False
    if checkpointed < log_start_offset:
        if not log_.config.delete:
            log.warning("Resetting first dirty offset of %s to log start offset %d since the checkpointed offset %d "
                        "is invalid", log_.name, log_start_offset, checkpointed)
        first_dirty, force_update = log_start_offset, True
    elif checkpointed > log_.log_end_offset:
        log.warning("The last checkpoint dirty offset for partition %s is %d, which is larger than the log end offset "
                    "%d. Resetting to the log start offset %d", log_.name, checkpointed, log_.log_end_offset,
                    log_start_offset)
        first_dirty, force_update = log_start_offset, True
    else:
        first_dirty = checkpointed
    active = log_.segments.last
    assert active is not None
    candidates = [log_.last_stable_offset, active.base_offset]
    min_lag = max(log_.config.min_compaction_lag_ms, 0)
    if min_lag > 0:
        for segment in _non_active_segments_from(log_, first_dirty):
            if segment.largest_timestamp() > now - min_lag:
                candidates.append(segment.base_offset)
                break
    return first_dirty, max(first_dirty, min(candidates)), force_update


def log_to_clean(tp: TopicPartition, log_: Log, first_dirty_offset: int, uncleanable_offset: int,
                 need_compaction_now: bool) -> LogToClean:
    """The cleanable range rounded down to a segment boundary, with its byte counts (Kafka's LogToClean)."""
    non_active = _non_active_segments_from(log_, uncleanable_offset)
    first_uncleanable_segment = non_active[0] if non_active else log_.segments.last
    assert first_uncleanable_segment is not None
    first_uncleanable = first_uncleanable_segment.base_offset
    clean_bytes = sum(s.size for s in log_.segments.values(-1, first_dirty_offset))
    cleanable_bytes = sum(s.size for s in log_.segments.values(min(first_dirty_offset, first_uncleanable),
                                                               first_uncleanable))
    return LogToClean(tp, log_, first_dirty_offset, first_uncleanable, clean_bytes, cleanable_bytes,
                      need_compaction_now)


def max_compaction_delay(log_: Log, first_dirty_offset: int, now: int) -> int:
    """How long past max.compaction.lag.ms the oldest dirty segment's first batch is (0: not overdue)."""
    timestamps = [t for t in map(_first_batch_timestamp, _non_active_segments_from(log_, first_dirty_offset)) if t > 0]
    if not timestamps:
        return 0
    clean_until = now - max(log_.config.max_compaction_lag_ms, 0)
    earliest = min(timestamps)
    return clean_until - earliest if earliest < clean_until else 0


def _non_active_segments_from(log_: Log, offset: int) -> list[LogSegment]:
    """The segments that may hold offsets from `offset` up to the active segment (Kafka's nonActiveLogSegmentsFrom)."""
    active = log_.segments.last
    if active is None or offset >= active.base_offset:
        return []
    return log_.segments.values(offset, active.base_offset)


def _first_batch_timestamp(segment: LogSegment) -> int:
    first = next(iter(segment.log.batches()), None)
    return -1 if first is None else first.header.max_timestamp
