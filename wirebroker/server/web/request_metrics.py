"""Request counts and latencies per API and version (Kafka's kafka.network:type=RequestMetrics), kept as plain ints.

The dispatcher calls `record` for every answer it hands to a network thread (server/dispatch.py, only while the HTTP
port is on); the time is from the request's last byte read to that moment: Kafka's TotalTimeMs less the time the
network thread then takes to write the response. Nothing here takes a lock or touches prometheus_client: a scrape
copies the lists (server/web/metrics.py). Under the GIL a list item's += is not interrupted by a thread switch, and
a torn read (a count without its latency yet) only skews one scrape.
"""

from __future__ import annotations

import time
from bisect import bisect_left

# Upper bounds of the latency histogram, in milliseconds (Prometheus' `le`); the last bucket is +Inf.
LATENCY_BUCKETS_MS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000)
_BOUNDS_NS = tuple(int(ms * 1_000_000) for ms in LATENCY_BUCKETS_MS)
REQUESTS, TOTAL_NS, FIRST_BUCKET = 0, 1, 2  # the layout of each (api key, version)'s list
_SLOTS = FIRST_BUCKET + len(_BOUNDS_NS) + 1


class RequestMetrics:
    __slots__ = ("by_api",)

    def __init__(self) -> None:
        # (api key, api version) -> [requests, total ns, one count per bucket (not cumulative), then +Inf]
        self.by_api: dict[tuple[int, int], list[int]] = {}

    def record(self, api_key: int, api_version: int, received_ns: int) -> None:
        elapsed = time.monotonic_ns() - received_ns
        counts = self.by_api.get((api_key, api_version))
        if counts is None:
            counts = self.by_api.setdefault((api_key, api_version), [0] * _SLOTS)
        counts[REQUESTS] += 1
        counts[TOTAL_NS] += elapsed
        counts[FIRST_BUCKET + bisect_left(_BOUNDS_NS, elapsed)] += 1

    def snapshot(self) -> dict[tuple[int, int], list[int]]:
        """A copy to read at leisure while requests go on counting."""
        return {key: list(counts) for key, counts in list(self.by_api.items())}
