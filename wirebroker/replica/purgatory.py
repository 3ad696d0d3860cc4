"""Purgatory: requests that wait for something to happen (Kafka's DelayedOperationPurgatory).

A delayed operation is watched under one or more keys (topic-partitions). Whoever changes the state a key stands
for (an append, a high-watermark move) calls `check_and_complete(key)`; every operation watched under it is asked
`try_complete()`. One timer thread expires operations whose deadline has passed, calling `on_expiration()` then
`on_complete()`. `force_complete()` makes sure `on_complete` runs exactly once, whichever of the two gets there.
Deadlines are on the broker's clock (log/clock.py): a virtual clock's jump expires what fell due at once.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Hashable, Iterable

from wirebroker.log.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)


class DelayedOperation:
    """Subclasses implement try_complete (call force_complete when done), on_complete, and maybe on_expiration."""

    def __init__(self, delay_ms: int) -> None:
        self.delay_ms = delay_ms  # the purgatory that watches it sets its deadline, on its clock
        self._completed = False
        self._lock = threading.Lock()

    @property
    def is_completed(self) -> bool:
        return self._completed

    def force_complete(self) -> bool:
        """Complete now; False if it already was completed (by another thread, or by the timer)."""
        with self._lock:
            if self._completed:
                return False
            self._completed = True
        self.on_complete()
        return True

    def try_complete(self) -> bool:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        """Called before on_complete when the deadline passed first."""


class DelayedOperationPurgatory:
    def __init__(self, name: str, clock: Clock = SYSTEM_CLOCK) -> None:
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._watchers: dict[Hashable, list[DelayedOperation]] = {}
        self._timeouts: list[tuple[float, int, DelayedOperation]] = []
        self._sequence = itertools.count()
        self._wakeup = threading.Condition(self._lock)
        self._running = True
        self._timer = threading.Thread(target=self._expire_loop, name=f"{name}-purgatory", daemon=True)
        self._timer.start()
        clock.on_advance(self._expire_due)

    def try_complete_else_watch(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete the operation now if it can; otherwise watch it under `keys` until completion or its deadline.

        As Kafka does, try once, watch, then try again: an append that lands between the first try and the watch
        would otherwise be missed until the deadline.
        """
        if operation.try_complete():
            return True
        keys = list(keys)
        with self._lock:
            for key in keys:
                self._watchers.setdefault(key, []).append(operation)
            deadline = self._clock.monotonic() + operation.delay_ms / 1000
            heapq.heappush(self._timeouts, (deadline, next(self._sequence), operation))
            self._wakeup.notify()
        return operation.try_complete()

    def check_and_complete(self, key: Hashable) -> int:
        """Ask the operations watched under `key` to complete; returns how many did."""
        if key not in self._watchers:
            # Nothing waits (every acks=1 produce, every fetch answered at once): no lock. A dict lookup is atomic,
            # and an operation being watched right now tries again once it is watched (try_complete_else_watch).
            return 0
        with self._lock:
            watched = self._watchers.get(key)
            if not watched:
                return 0
            operations = list(watched)
        completed = sum(1 for op in operations if not op.is_completed and op.try_complete())
        with self._lock:
            remaining = [op for op in self._watchers.get(key, ()) if not op.is_completed]
            if remaining:
                self._watchers[key] = remaining
            else:
                self._watchers.pop(key, None)
        return completed

    def watched(self) -> int:
        with self._lock:
            return sum(1 for _, _, op in self._timeouts if not op.is_completed)

    def shutdown(self) -> None:
        with self._lock:
            self._running = False
            self._wakeup.notify()
        self._timer.join(timeout=5)

    def _expire_loop(self) -> None:
        while True:
            with self._lock:
                while self._running and (not self._timeouts or self._timeouts[0][0] > self._clock.monotonic()):
                    timeout = self._timeouts[0][0] - self._clock.monotonic() if self._timeouts else None
                    self._wakeup.wait(timeout)
                if not self._running:
                    return
                _, _, operation = heapq.heappop(self._timeouts)
            if not operation.is_completed:
                self._expire(operation)

    def _expire_due(self) -> None:
        """Expire, on the caller's thread, what the clock's jump made due."""
        now = self._clock.monotonic()
        with self._lock:
            due = []
            while self._timeouts and self._timeouts[0][0] <= now:
                due.append(heapq.heappop(self._timeouts)[2])
            self._wakeup.notify()
        for operation in due:
            if not operation.is_completed:
                self._expire(operation)

    def _expire(self, operation: DelayedOperation) -> None:
        try:
            with operation._lock:
                if operation._completed:
                    return
                operation._completed = True
            operation.on_expiration()
            operation.on_complete()
        except Exception:
            log.exception("%s purgatory: completing an expired operation failed", self.name)
