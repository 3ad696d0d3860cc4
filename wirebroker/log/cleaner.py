"""The log cleaner (Kafka's LogCleaner): background threads that compact the logs of cleanup.policy=compact topics.

Each of log.cleaner.threads threads loops: ask the cleaner manager (cleaner_manager.py) for the dirtiest cleanable
log, take its picture (cleaner_jobs.py), have its cleaner process clean it (cleaner_process.py: the reading and
writing run there, away from the broker's interpreter), swap the cleaned segments in, checkpoint its new first dirty
offset in cleaner-offset-checkpoint, log what it did; with nothing to clean, sleep log.cleaner.backoff.ms. The dedupe
buffer (log.cleaner.dedupe.buffer.size) is shared out between the threads, each thread's offset map taking its part;
all threads share one throttle of log.cleaner.io.max.bytes.per.second over what they read and write. A cleaning that
fails marks its partition uncleanable (logged with the error) and the threads go on with the others.

Broker keys, with Kafka's names and defaults (CLEANER_DEFAULTS). log.cleaner.enable=false starts no thread.
log.cleaner.io.buffer.size is accepted and has no use here: the cleaner reads whole batches through the segment
files' read-ahead (file_records.py) rather than through fixed buffers.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wirebroker.log.cleaner_jobs import discard, prepare_cleaning, swap_in
from wirebroker.log.cleaner_manager import LogCleanerManager, LogToClean, PreCleanStats
from wirebroker.log.compaction import CleanerStats, LogCleaningAbortedError
from wirebroker.log.files import TopicPartition
from wirebroker.log.local_log import now_ms
from wirebroker.log.log import Log
from wirebroker.log.throttler import NO_THROTTLE

if TYPE_CHECKING:
    from wirebroker.log.cleaner_process import CleanerProcess, SharedThrottle

log = logging.getLogger(__name__)

MIB = 1024 * 1024
INT32_MAX = 2**31 - 1
# Broker keys of the cleaner and Kafka's defaults (CleanerConfig / LogCleaner's reconfigurable configs).
CLEANER_DEFAULTS: dict[str, object] = {
    "log.cleaner.enable": True,
    "log.cleaner.threads": 1,
    "log.cleaner.dedupe.buffer.size": 128 * MIB,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.io.max.bytes.per.second": NO_THROTTLE,
    "log.cleaner.backoff.ms": 15_000,
}


@dataclass(frozen=True)
class CleanerConfig:
    """The cleaner's settings, from the broker keys of CLEANER_DEFAULTS (Kafka's CleanerConfig)."""

    num_threads: int
    dedupe_buffer_size: int
    dedupe_buffer_load_factor: float
    max_io_bytes_per_second: float
    backoff_ms: int
    enable_cleaner: bool

    @classmethod
    def from_broker(cls, settings: Callable[[str], object]) -> CleanerConfig:
        """From the broker's keys; `settings(key)` is the key's value, or None when unset."""
        def get(key: str) -> object:
            value = settings(key)
            return CLEANER_DEFAULTS[key] if value is None else value
        return cls(int(get("log.cleaner.threads")), int(get("log.cleaner.dedupe.buffer.size")),  # type: ignore[arg-type]
                   float(get("log.cleaner.io.buffer.load.factor")),  # type: ignore[arg-type]
                   float(get("log.cleaner.io.max.bytes.per.second")),  # type: ignore[arg-type]
                   int(get("log.cleaner.backoff.ms")), bool(get("log.cleaner.enable")))  # type: ignore[arg-type]

    @property
    def offset_map_memory_per_thread(self) -> int:
        return min(self.dedupe_buffer_size // max(self.num_threads, 1), INT32_MAX)


class LogCleaner:
    def __init__(self, config: CleanerConfig, log_dirs: list[str], logs: Callable[[], dict[TopicPartition, Log]]
                 ) -> None:
        """`logs` returns the broker's current logs (the log manager's), asked afresh for every choice."""
        if config.offset_map_memory_per_thread < MIB:
            raise ValueError(f"log.cleaner.dedupe.buffer.size must be at least 1 MiB per cleaner thread "
                             f"({config.dedupe_buffer_size} bytes for {config.num_threads} threads)")
        self.config = config
        self._logs = logs
        self.manager = LogCleanerManager(log_dirs)
        self._throttle: SharedThrottle | None = None
        self._throttle_lock = threading.Lock()
        self._threads: list[_CleanerThread] = []
        # Each cleaner thread's last cleaning and what its choice saw, by thread id: what Kafka's LogCleaner gauges
        # read (lastStats, lastPreCleanStats).
        self.last_stats: dict[int, CleanerStats] = {}
        self.last_pre_clean_stats: dict[int, PreCleanStats] = {}

    def startup(self) -> None:
        log.info("Starting the log cleaner with %d thread(s)", self.config.num_threads)
        for i in range(self.config.num_threads):
            thread = _CleanerThread(i, self)
            self._threads.append(thread)
            thread.start()

    def shutdown(self) -> None:
        log.info("Shutting down the log cleaner")
        for thread in self._threads:
            thread.initiate_shutdown()
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    def new_cleaner_process(self, cleaner_id: int) -> CleanerProcess:
        """A cleaner thread's process (started at its first cleaning), with the broker's throttle."""
        # A broker with nothing to clean never loads the cleaner process's module.
        from wirebroker.log.cleaner_process import CleanerProcess
        return CleanerProcess(cleaner_id, self.config.offset_map_memory_per_thread,
                              self.config.dedupe_buffer_load_factor, self.shared_throttle)

    def shared_throttle(self) -> SharedThrottle | None:
        """The throttle of all cleaner processes (made with the first one), or None when unthrottled."""
        with self._throttle_lock:
            if self._throttle is None and self.config.max_io_bytes_per_second < NO_THROTTLE:
                from wirebroker.log.cleaner_process import SharedThrottle
                self._throttle = SharedThrottle(self.config.max_io_bytes_per_second)
            return self._throttle

    def clean_filthiest_log(self, cleaner: Callable[[], CleanerProcess]) -> bool:
        """One round: clean the dirtiest cleanable log, if any, with `cleaner()`; whether one was cleaned."""
        self.manager.set_logs(self._logs())
        pre_clean_stats = PreCleanStats()
        to_clean = self.manager.grab_filthiest_compacted_log(now_ms(), pre_clean_stats)
        if to_clean is None:
            return False
        process = cleaner()
        self.last_pre_clean_stats[process.cleaner_id] = pre_clean_stats
        self.clean_log(process, to_clean)
        return True

    def clean_log(self, cleaner: CleanerProcess, to_clean: LogToClean) -> None:
        """Clean one log already marked in progress, checkpoint it and let go of it, whatever happens."""
        tp, log_ = to_clean.topic_partition, to_clean.log
        try:
            prepared = prepare_cleaning(to_clean, now_ms())
            log.info("Beginning cleaning of log %s", log_.name)
            result = cleaner.run(prepared.job, lambda: self.manager.is_cleaning_aborted(tp))
            if self.manager.is_cleaning_aborted(tp):  # finished as the abort came: the log may be going away
                discard(prepared, result)
                raise LogCleaningAbortedError(f"The cleaning of {tp} was aborted")
            swap_in(prepared, result)
        except LogCleaningAbortedError as exc:
            log.info("Cleaning of log %s aborted: %s", log_.name, exc)
            self.manager.cleaning_failed(tp, aborted=True)
            return
        except Exception:
            log.exception("Unexpected error while cleaning log %s; it is marked uncleanable until the broker "
                          "restarts", log_.name)
            self.manager.cleaning_failed(tp, aborted=False)
            return
        self.manager.done_cleaning(tp, os.path.dirname(log_.dir), result.end_offset)
        self.last_stats[cleaner.cleaner_id] = result.stats
        _log_stats(cleaner.cleaner_id, to_clean, result.end_offset, result.stats)

    def dead_thread_count(self) -> int:
        """Cleaner threads that stopped while the cleaner runs (Kafka's DeadThreadCount)."""
        return sum(1 for thread in self._threads if not thread.is_alive())

    # --- the log manager's hooks ---

    def abort_cleaning(self, tp: TopicPartition) -> None:
        self.manager.abort_cleaning(tp)

    def remove_checkpoint(self, log_dir: str, tp: TopicPartition) -> None:
        self.manager.update_checkpoints(log_dir, remove=tp)


class _CleanerThread(threading.Thread):
    def __init__(self, cleaner_id: int, owner: LogCleaner) -> None:
        super().__init__(name=f"kafka-log-cleaner-thread-{cleaner_id}", daemon=True)
        self._owner = owner
        self._id = cleaner_id
        self._process: CleanerProcess | None = None  # made when there is a first log to clean
        self._stopping = threading.Event()

    def initiate_shutdown(self) -> None:
        self._stopping.set()
        self._owner.manager.abort_all_in_progress()

    def run(self) -> None:
        backoff_s = self._owner.config.backoff_ms / 1000
        try:
            while not self._stopping.is_set():
                try:
                    cleaned = self._owner.clean_filthiest_log(self._cleaner_process)
                except Exception:
                    log.exception("Log cleaner thread %d failed to choose a log; retrying after %d ms", self._id,
                                  self._owner.config.backoff_ms)
                    cleaned = False
                if not cleaned:
                    self._stopping.wait(backoff_s)
        finally:
            if self._process is not None:
                self._process.stop()

    def _cleaner_process(self) -> CleanerProcess:
        if self._process is None:
            self._process = self._owner.new_cleaner_process(self._id)
        return self._process


def _log_stats(cleaner_id: int, to_clean: LogToClean, end_offset: int, stats: CleanerStats) -> None:
    """One line per cleaning, with the figures of Kafka's LogCleaner.recordStats (sizes of the cleaned range)."""
    elapsed = max(stats.elapsed_seconds, 1e-9)
    reduction = 100.0 * (1 - stats.bytes_written / stats.bytes_read) if stats.bytes_read else 0.0
    fewer = 100.0 * (1 - stats.messages_written / stats.messages_read) if stats.messages_read else 0.0
    log.info("Log cleaner thread %d cleaned log %s (dirty section = [%d, %d]): %.1f MB of log processed in %.1f "
             "seconds (%.1f MB/sec), indexing %.1f s, cleaning %.1f s, buffer utilization %.1f%%; %d segment(s) "
             "into %d; start size %.1f MB (%d messages), end size %.1f MB (%d messages): %.1f%% size reduction "
             "(%.1f%% fewer messages)", cleaner_id, to_clean.log.name, to_clean.first_dirty_offset, end_offset,
             (stats.bytes_read + stats.map_bytes_read) / MIB, elapsed,
             (stats.bytes_read + stats.map_bytes_read) / MIB / elapsed, stats.map_complete_ms - stats.start_ms,
             stats.end_ms - stats.map_complete_ms, 100 * stats.buffer_utilization, stats.segments_read,
             stats.segments_written, stats.bytes_read / MIB, stats.messages_read, stats.bytes_written / MIB,
             stats.messages_written, reduction, fewer)
