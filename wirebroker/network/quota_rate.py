"""A windowed rate with an upper bound and Kafka's throttle time (Kafka's Rate over SampledStat samples, a Sensor's
quota check, and QuotaUtils.throttleTime).

The rate keeps `quota.window.num` samples (11) of `quota.window.size.seconds` (1 s) each. A value goes into the
current sample, or into a new one (the oldest reused) once the current is a window old, its start aligned to the
window grid. The rate is the sum of the samples younger than samples x window, divided by the time they span, never
less than (samples - 1) windows: a client starting fresh cannot burst far beyond its quota in its first second.

When a recording makes the rate exceed the bound, the throttle time is the time the client must stay silent for the
rate to come back to the bound: (rate - bound) / bound x window span, in ms.
"""

from __future__ import annotations

QUOTA_WINDOW_NUM = 11  # Kafka's default quota.window.num
QUOTA_WINDOW_SIZE_MS = 1000  # Kafka's default quota.window.size.seconds, in ms


class QuotaRate:
    __slots__ = ("_current", "_starts", "_values", "bound", "samples", "window_ms")

    def __init__(self, bound: float, samples: int = QUOTA_WINDOW_NUM, window_ms: int = QUOTA_WINDOW_SIZE_MS) -> None:
        self.bound = bound
        self.samples = samples
        self.window_ms = window_ms
        self._starts: list[int] = []
        self._values: list[float] = []
        self._current = 0

    def record(self, value: float, now_ms: int) -> int:
        """Add `value` at `now_ms`; the throttle time in ms if the rate is now over the bound, else 0."""
        self.add(value, now_ms)
        rate, window = self.measure(now_ms)
        if rate <= self.bound:
            return 0
        return round((rate - self.bound) / self.bound * window)

    def add(self, value: float, now_ms: int) -> None:
        """Add without checking the bound (a negative value takes back one recorded before)."""
        starts = self._starts
        if not starts:
            starts.append(now_ms)
            self._values.append(0.0)
        elif now_ms - starts[self._current] >= self.window_ms:
            previous_end = starts[self._current] + self.window_ms
            start = now_ms - (now_ms - previous_end) % self.window_ms
            self._current = (self._current + 1) % self.samples
            if self._current >= len(starts):
                starts.append(start)
                self._values.append(0.0)
            else:
                starts[self._current] = start
                self._values[self._current] = 0.0
        self._values[self._current] += value

    def measure(self, now_ms: int) -> tuple[float, int]:
        """(rate per second, the window span in ms it was taken over) at `now_ms`."""
        expire_age = self.samples * self.window_ms
        starts, values = self._starts, self._values
        for i, start in enumerate(starts):
            if now_ms - start >= expire_age:  # obsolete: reset, as Kafka's purgeObsoleteSamples
                starts[i] = now_ms
                values[i] = 0.0
        oldest = min(starts, default=now_ms)
        elapsed = now_ms - oldest
        full_windows = elapsed // self.window_ms
        if full_windows < self.samples - 1:
            elapsed += (self.samples - 1 - full_windows) * self.window_ms
        window = max(elapsed, 1)
        return sum(values) * 1000 / window, window
