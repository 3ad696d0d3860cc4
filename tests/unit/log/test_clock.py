"""The virtual clock: an advance runs what fell due in each place that waits on the broker's clock, before it returns,
without anyone sleeping (log/clock.py)."""

import threading

import pytest

from wirebroker.coordinator.timer import SystemTimer
from wirebroker.log.clock import SYSTEM_CLOCK, VirtualClock
from wirebroker.log.scheduler import Scheduler
from wirebroker.replica.purgatory import DelayedOperation, DelayedOperationPurgatory

HOUR_MS = 3_600_000


class _Waiting(DelayedOperation):
    def __init__(self, delay_ms: int) -> None:
        super().__init__(delay_ms)
        self.expired = threading.Event()

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.expired.set()


def test_the_virtual_clock_runs_at_the_systems_pace_and_jumps_on_advance():
    clock = VirtualClock()
    before = clock.time_ms()
    assert clock.advance(HOUR_MS) == HOUR_MS
    assert HOUR_MS <= clock.time_ms() - before < HOUR_MS + 5_000
    assert clock.monotonic_ms() - SYSTEM_CLOCK.monotonic_ms() >= HOUR_MS
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(-1)


def test_an_advance_fires_the_coordinator_timers_that_fell_due_before_it_returns():
    clock = VirtualClock()
    timer = SystemTimer("test-timer", clock)
    timer.start()
    fired = []
    try:
        timer.schedule("session", 45_000, lambda: fired.append("session"))
        timer.schedule("later", 50_000, lambda: fired.append("later"))
        clock.advance(45_000)
        assert fired == ["session"]
        assert timer.is_scheduled("later")
    finally:
        timer.shutdown()


def test_an_advance_expires_a_waiting_fetch_at_once():
    clock = VirtualClock()
    purgatory = DelayedOperationPurgatory("Fetch", clock)
    try:
        operation = _Waiting(delay_ms=HOUR_MS)
        purgatory.try_complete_else_watch(operation, ["t-0"])
        assert not operation.expired.is_set()
        clock.advance(HOUR_MS)
        assert operation.expired.is_set() and operation.is_completed
    finally:
        purgatory.shutdown()


def test_an_advance_runs_the_log_schedulers_due_tasks_and_keeps_the_periodic_ones():
    clock = VirtualClock()
    scheduler = Scheduler("test-scheduler", clock)
    scheduler.startup()
    runs = []
    try:
        scheduler.schedule("retention", lambda: runs.append("retention"), delay_ms=HOUR_MS, period_ms=HOUR_MS)
        clock.advance(HOUR_MS)
        assert runs == ["retention"]
        clock.advance(HOUR_MS)
        assert runs == ["retention", "retention"]
    finally:
        scheduler.shutdown()
