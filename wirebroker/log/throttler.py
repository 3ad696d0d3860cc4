"""A byte-rate throttle (Kafka's Throttler), for log.cleaner.io.max.bytes.per.second.

The cleaner threads of a broker share one throttle, as in Kafka. Their cleaning runs in child processes
(cleaner_process.py), so the throttle's state (the start of the current window and the bytes seen in it) can live in
shared memory, with a lock that works across processes; in one process a plain list and a thread lock do. As Kafka's,
it sleeps off a window's excess in one go, which may be long after a fast burst: whoever must stay responsive passes
a `sleep` that can end early.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, MutableSequence
from typing import Any

NO_THROTTLE = 1.7976931348623157e308  # Java's Double.MAX_VALUE, Kafka's default for log.cleaner.io.max.bytes.per.second
_PERIOD_START, _OBSERVED = 0, 1  # the fields of the state


class Throttler:
    """Sleeps whoever pushes bytes faster than `rate` bytes per second, measured over windows of `check_interval_ms`.

    `lock` and `state` (two floats: window start on time.monotonic's clock, which is system-wide, and bytes seen)
    may be a lock and memory shared by several processes; by default they are this process's own. `sleep` waits
    the given seconds (a cleaner process's returns early when the broker asks it to stop)."""

    def __init__(self, rate: float, check_interval_ms: int = 300, lock: Any = None,
                 state: MutableSequence[float] | None = None, sleep: Callable[[float], object] = time.sleep) -> None:
        self.rate = rate
        self.check_interval_s = check_interval_ms / 1000
        self.lock = lock if lock is not None else threading.Lock()
        self.state = state if state is not None else [time.monotonic(), 0.0]
        self.sleep = sleep

    def maybe_throttle(self, observed: int) -> None:
        if self.rate >= NO_THROTTLE:
            return
        with self.lock:
            state = self.state
            state[_OBSERVED] += observed
            elapsed = time.monotonic() - state[_PERIOD_START]
            if elapsed < self.check_interval_s:
                return
            if state[_OBSERVED] / elapsed > self.rate:
                sleep_s = state[_OBSERVED] / self.rate - elapsed
                if sleep_s > 0:
                    self.sleep(sleep_s)
            state[_PERIOD_START] = time.monotonic()
            state[_OBSERVED] = 0.0
