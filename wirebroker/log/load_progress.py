"""Start-up log loading as an operator sees it: a progress line every PROGRESS_INTERVAL_S while a log directory
loads, then one line with what was loaded and how long it took (Kafka's LogManager reports each log as
"(n/m completed in dir)"; a line every 2 s keeps a long recovery visible without a line per log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("wirebroker.log.manager")

PROGRESS_INTERVAL_S = 2.0


@dataclass(slots=True)
class LoadStats:
    """What the log manager loaded at start-up, over every log directory."""

    logs: int = 0
    segments: int = 0
    topics: set[str] = field(default_factory=set)
    unclean_dirs: int = 0  # log directories without the clean-shutdown marker: their logs were recovered
    seconds: float = 0.0


class LoadProgress:
    """Counts one log directory's loading into `stats`, reporting progress every PROGRESS_INTERVAL_S."""

    def __init__(self, log_dir: str, total: int, had_clean_shutdown: bool, stats: LoadStats,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log_dir = log_dir
        self.total = total
        self.had_clean_shutdown = had_clean_shutdown
        self.stats = stats
        self._clock = clock
        self._started = self._last_report = clock()
        self._logs = self._segments = 0

    def loaded(self, topic: str, segments: int) -> None:
        self._logs += 1
        self._segments += segments
        self.stats.topics.add(topic)
        now = self._clock()
        if now - self._last_report >= PROGRESS_INTERVAL_S and self._logs < self.total:
            self._last_report = now
            log.info("Loading logs from %s: %d of %d loaded (%d segments) in %.1f s%s", self.log_dir, self._logs,
                     self.total, self._segments, now - self._started,
                     "" if self.had_clean_shutdown else ", recovering after an unclean shutdown")

    def finished(self) -> None:
        seconds = self._clock() - self._started
        self.stats.logs += self._logs
        self.stats.segments += self._segments
        self.stats.seconds += seconds
        self.stats.unclean_dirs += not self.had_clean_shutdown
        log.info("Loaded %d logs (%d segments) from %s in %d ms (%s shutdown)", self._logs, self._segments,
                 self.log_dir, round(seconds * 1000), "clean" if self.had_clean_shutdown else "unclean")
