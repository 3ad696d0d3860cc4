"""Keyed timers for the group coordinator (Kafka's CoordinatorTimer): session expiries, rebalance and sync deadlines.

A timer is named by a key (`"heartbeat-<group>-<member>"`); scheduling a key again replaces the earlier timer, and
`cancel(key)` drops it. That is the shape every coordinator deadline has: each heartbeat pushes the member's session
expiry out, each rebalance replaces the previous join deadline. `SystemTimer` runs the callbacks on one daemon thread,
on the broker's clock (log/clock.py: with a virtual clock, what falls due when a test advances it runs at once, on the
advancing thread); `ManualTimer` runs them when a unit test advances its own clock, with no thread at all.
Callbacks run without any lock held: the coordinator takes its own.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Hashable

from wirebroker.log.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class _Timers:
    """The heap of (deadline, sequence, key) and the live sequence per key; a popped entry whose sequence is no
    longer the key's live one was replaced or cancelled and is skipped."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Hashable]] = []
        self._live: dict[Hashable, tuple[int, Callable[[], None]]] = {}
        self._sequence = itertools.count()

    def add(self, key: Hashable, deadline_ms: int, fn: Callable[[], None]) -> None:
        sequence = next(self._sequence)
        self._live[key] = (sequence, fn)
        heapq.heappush(self._heap, (deadline_ms, sequence, key))

    def cancel(self, key: Hashable) -> None:
        self._live.pop(key, None)

    def cancel_where(self, matches: Callable[[Hashable], bool]) -> None:
        for key in [key for key in self._live if matches(key)]:
            del self._live[key]

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._live

    def next_deadline(self) -> int | None:
        while self._heap and self._live.get(self._heap[0][2], (None,))[0] != self._heap[0][1]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now_ms: int) -> Callable[[], None] | None:
        deadline = self.next_deadline()
        if deadline is None or deadline > now_ms:
            return None
        _, _, key = heapq.heappop(self._heap)
        return self._live.pop(key)[1]


class SystemTimer:
    """Runs callbacks on the broker's clock (wall time), on one daemon thread."""

    def __init__(self, name: str = "group-coordinator-timer", clock: Clock = SYSTEM_CLOCK) -> None:
        self._name = name
        self._clock = clock
        self._timers = _Timers()
        self._cond = threading.Condition()
        self._running = False
        self._thread: threading.Thread | None = None

    def now_ms(self) -> int:
        return self._clock.time_ms()

    def start(self) -> None:
        with self._cond:
            self._running = True
        self._clock.on_advance(self._run_due)
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        with self._cond:
            self._timers.add(key, self.now_ms() + max(delay_ms, 0), fn)
            self._cond.notify()

    def cancel(self, key: Hashable) -> None:
        with self._cond:
            self._timers.cancel(key)

    def cancel_where(self, matches: Callable[[Hashable], bool]) -> None:
        with self._cond:
            self._timers.cancel_where(matches)

    def is_scheduled(self, key: Hashable) -> bool:
        with self._cond:
            return self._timers.is_scheduled(key)

    def _run(self) -> None:
        while True:
            with self._cond:
                fn = None
                while self._running and fn is None:
                    fn = self._timers.pop_due(self.now_ms())
                    if fn is None:
                        deadline = self._timers.next_deadline()
                        self._cond.wait(None if deadline is None else max(deadline - self.now_ms(), 1) / 1000)
                if not self._running:
                    return
            self._call(fn)

    def _run_due(self) -> None:
        """Run what the clock's jump made due, on the caller's thread (the timer thread may run another at once)."""
        while True:
            with self._cond:
                fn = self._timers.pop_due(self.now_ms()) if self._running else None
                self._cond.notify()  # the thread waits for the next deadline, measured afresh
            if fn is None:
                return
            self._call(fn)

    def _call(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("a task of %s failed; the group or transaction it serves may need its clients to "
                          "retry", self._name)

    def shutdown(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()


class ManualTimer:
    """A timer on a clock that only moves when `advance` is called (tests)."""

    def __init__(self, start_ms: int = 1_000_000) -> None:
        self._now = start_ms
        self._timers = _Timers()

    def now_ms(self) -> int:
        return self._now

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        self._timers.add(key, self._now + max(delay_ms, 0), fn)

    def cancel(self, key: Hashable) -> None:
        self._timers.cancel(key)

    def cancel_where(self, matches: Callable[[Hashable], bool]) -> None:
        self._timers.cancel_where(matches)

    def is_scheduled(self, key: Hashable) -> bool:
        return self._timers.is_scheduled(key)

    def advance(self, ms: int) -> None:
        """Move the clock by `ms`, running every timer that falls due on the way, in deadline order."""
        target = self._now + ms
        while True:
            deadline = self._timers.next_deadline()
            if deadline is None or deadline > target:
                break
            self._now = max(self._now, deadline)
            fn = self._timers.pop_due(self._now)
            if fn is not None:
                fn()
        self._now = target
