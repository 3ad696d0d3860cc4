"""A small task scheduler (Kafka's KafkaScheduler): one daemon thread runs one-shot and periodic tasks by due time.

The log layer uses it for work that must not run on a request handler thread or must wait: deleting segment files
after file.delete.delay.ms, flushing a segment that just rolled, and LogManager's retention, flush, checkpoint and
producer-expiration loops. A task that raises is logged and, if periodic, runs again at its next period.
Due times are on the broker's clock (log/clock.py): a virtual clock's jump runs what fell due at once.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable

from wirebroker.log.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)


class Scheduler:
    def __init__(self, name: str = "wirebroker-log-scheduler", clock: Clock = SYSTEM_CLOCK) -> None:
        self._name = name
        self._clock = clock
        self._cond = threading.Condition()
        self._queue: list[tuple[int, int, str, Callable[[], None], int | None]] = []
        self._counter = itertools.count()
        self._running = False
        self._thread: threading.Thread | None = None

    def startup(self) -> None:
        with self._cond:
            if self._running:
                return
            self._running = True
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()
        self._clock.on_advance(self._run_due)

    @property
    def is_started(self) -> bool:
        return self._running

    def schedule_once(self, name: str, fn: Callable[[], None], delay_ms: int = 0) -> None:
        self._push(name, fn, delay_ms, None)

    def schedule(self, name: str, fn: Callable[[], None], delay_ms: int, period_ms: int) -> None:
        """Run fn after delay_ms and then every period_ms."""
        if period_ms <= 0:
            raise ValueError(f"period of task {name} must be positive, got {period_ms}")
        self._push(name, fn, delay_ms, period_ms)

    def _push(self, name: str, fn: Callable[[], None], delay_ms: int, period_ms: int | None) -> None:
        with self._cond:
            if not self._running:
                raise RuntimeError(f"Scheduler {self._name} is not running; cannot schedule {name}")
            due_ms = self._clock.monotonic_ms() + max(delay_ms, 0)
            heapq.heappush(self._queue, (due_ms, next(self._counter), name, fn, period_ms))
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._running and (not self._queue or self._queue[0][0] > self._clock.monotonic_ms()):
                    timeout = (self._queue[0][0] - self._clock.monotonic_ms()) / 1000 if self._queue else None
                    self._cond.wait(timeout)
                if not self._running:
                    return
                task = heapq.heappop(self._queue)
            self._run_task(*task[2:])

    def _run_due(self) -> None:
        """Run, on the caller's thread, the tasks the clock's jump made due (the thread may run another at once)."""
        while True:
            with self._cond:
                due = self._running and self._queue and self._queue[0][0] <= self._clock.monotonic_ms()
                task = heapq.heappop(self._queue) if due else None
                self._cond.notify()  # the thread waits for the next due time, measured afresh
            if task is None:
                return
            self._run_task(*task[2:])

    def _run_task(self, name: str, fn: Callable[[], None], period_ms: int | None) -> None:
        try:
            fn()
        except Exception:
            log.exception("Scheduled task %s failed; it will run again at its next period if it has one", name)
        if period_ms is not None:
            with self._cond:
                if self._running:
                    heapq.heappush(self._queue, (self._clock.monotonic_ms() + period_ms, next(self._counter), name,
                                                 fn, period_ms))

    def shutdown(self, run_pending_once_tasks: bool = True) -> None:
        """Stop the thread; one-shot tasks still queued run now (deferred deletions must not be lost)."""
        with self._cond:
            self._running = False
            pending = [(name, fn) for _, _, name, fn, period in sorted(self._queue) if period is None]
            self._queue.clear()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if run_pending_once_tasks:
            for name, fn in pending:
                try:
                    fn()
                except Exception:
                    log.exception("Scheduled task %s failed during scheduler shutdown", name)
