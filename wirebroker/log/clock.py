"""The broker's clock: the system's, or a virtual one a test moves forward (issue 15, `wirebroker.virtual.clock.enable`).

Everything whose deadlines a test may want to skip reads time from the one Clock the broker hands it: the group
coordinator's timers (session expiry, rebalance and join deadlines, heartbeats), the transaction coordinator's
(transaction timeouts, transactional id expiry), the purgatories (a fetch's max_wait_ms, a produce's timeout), and
the log scheduler with the log manager's checks (retention, producer id expiration).

The virtual clock runs at the system's pace and jumps when a test calls `advance(ms)` (Kafka's MockTime stands
still instead; here clients keep their own real timers, so a broker clock that stood still would hold every
long-poll fetch until the client gave up). Each place that waits registers with `on_advance` a function that runs
what fell due: `advance` calls them on the caller's thread, so when it returns the expired sessions, fetches and
segments have been dealt with, without a sleep. The system clock never jumps and registers nothing: it costs what
calling `time` costs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Clock:
    """The system's clocks: wall time for timestamps and expiries, monotonic time for waits."""

    virtual = False

    def time_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def monotonic(self) -> float:
        return time.monotonic()

    def on_advance(self, run_due: Callable[[], None]) -> None:
        """Register what to run when the clock jumps; the system clock never does."""


SYSTEM_CLOCK = Clock()


class VirtualClock(Clock):
    """The system's clocks plus every `advance` so far."""

    virtual = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._advanced_ms = 0
        self._on_advance: list[Callable[[], None]] = []

    @property
    def advanced_ms(self) -> int:
        return self._advanced_ms

    def time_ms(self) -> int:
        return super().time_ms() + self._advanced_ms

    def monotonic_ms(self) -> int:
        return super().monotonic_ms() + self._advanced_ms

    def monotonic(self) -> float:
        return super().monotonic() + self._advanced_ms / 1000

    def on_advance(self, run_due: Callable[[], None]) -> None:
        with self._lock:
            self._on_advance.append(run_due)

    def advance(self, ms: int) -> int:
        """Move the clock `ms` forward and run, on this thread, everything that fell due; the total advance."""
        if ms < 0:
            raise ValueError(f"the clock only moves forward, not by {ms} ms")
        with self._lock:
            self._advanced_ms += ms
            total, waiting = self._advanced_ms, list(self._on_advance)
        log.info("virtual clock advanced by %d ms (%d ms ahead of the system clock)", ms, total)
        for run_due in waiting:
            run_due()
        return total
