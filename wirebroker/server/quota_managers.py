"""Client quota managers (Kafka's ClientQuotaManager with its DefaultQuotaCallback, ClientRequestQuotaManager and
QuotaFactory.QuotaManagers): which quota applies to a request's (user, client-id), the rate of each quota's sensor,
and the throttle time a request earns.

Loaded only once a client quota is set (server/broker.py): with none, the dispatcher's `quotas` is None and a
request costs one attribute check.

Resolution, as Kafka's DefaultQuotaCallback, first match wins, separately for each key:
    /users/<user>/clients/<client-id>, /users/<user>/clients/<default>, /users/<user>,
    /users/<default>/clients/<client-id>, /users/<default>/clients/<default>, /users/<default>,
    /clients/<client-id>, /clients/<default>
The entity that matched decides who shares a sensor: a user-level quota is one rate for all that user's clients,
a client-id-level one is shared by every user of that client id, the others are per (user, client-id).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from wirebroker.cluster.client_quotas import (
    CLIENT_ID,
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    USER,
    Entity,
    Quotas,
)
from wirebroker.network.quota_rate import (
    QUOTA_WINDOW_NUM,
    QUOTA_WINDOW_SIZE_MS,
    QuotaRate,
)

NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1e9  # Kafka's ClientRequestQuotaManager: thread time as % of one second
REQUEST_MAX_THROTTLE_MS = QUOTA_WINDOW_SIZE_MS  # a request quota throttles for at most one window (Kafka's bound)

# Past this many clients tracked, sensors with nothing in their windows are dropped (their rate is 0 anyway) and
# the resolution cache starts again: a client making up a new client id per connection cannot grow them unbounded
# (Kafka expires sensors idle for an hour).
MAX_TRACKED_CLIENTS = 10_000

Tags = tuple[str, str]  # (user, client-id) of a sensor; "" where the quota's entity leaves that part out


def _precedence(user: str, client_id: str) -> list[tuple[Entity, Tags]]:
    both, user_only, client_only = (user, client_id), (user, ""), ("", client_id)
    return [
        (((CLIENT_ID, client_id), (USER, user)), both),
        (((CLIENT_ID, None), (USER, user)), both),
        (((USER, user),), user_only),
        (((CLIENT_ID, client_id), (USER, None)), both),
        (((CLIENT_ID, None), (USER, None)), both),
        (((USER, None),), user_only),
        (((CLIENT_ID, client_id),), client_only),
        (((CLIENT_ID, None),), client_only),
    ]


class ClientQuotaManager:
    """The sensors of one quota key (producer_byte_rate, consumer_byte_rate or request_percentage)."""

    def __init__(self, key: str, max_throttle_ms: int | None = None) -> None:
        self.key = key
        self._max_throttle_ms = max_throttle_ms
        self._lock = threading.Lock()
        self._limits: Mapping[Entity, float] = {}
        self._resolved: dict[Tags, tuple[Tags, float] | None] = {}  # (user, client-id) -> its sensor's tags, bound
        self._sensors: dict[Tags, QuotaRate] = {}

    @property
    def enabled(self) -> bool:
        return bool(self._limits)

    def update(self, quotas: Quotas) -> None:
        """Take the cluster's new quotas; sensors keep their samples and take their new bound at their next
        recording (Kafka's updateQuotaMetricConfigs)."""
        with self._lock:
            self._limits = {entity: values[self.key] for entity, values in quotas.items() if self.key in values}
            self._resolved = {}

    def record(self, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record `value` for the client's quota; the throttle time in ms it earned (0 with no quota)."""
        resolved = self._resolved.get((user, client_id), False)
        if resolved is False:
            with self._lock:
                if len(self._resolved) >= MAX_TRACKED_CLIENTS:
                    self._resolved = {}
                resolved = self._resolved[(user, client_id)] = self._resolve(user, client_id)
        if resolved is None:
            return 0
        tags, bound = resolved
        with self._lock:
            sensor = self._sensors.get(tags)
            if sensor is None:
                if len(self._sensors) >= MAX_TRACKED_CLIENTS:
                    self._sensors = {t: s for t, s in self._sensors.items() if s.measure(now_ms)[0] > 0}
                sensor = self._sensors[tags] = QuotaRate(bound)
            sensor.bound = bound
            throttle_ms = sensor.record(value, now_ms)
        if self._max_throttle_ms is not None:
            return min(throttle_ms, self._max_throttle_ms)
        return throttle_ms

    def unrecord(self, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back a recorded value (a throttled fetch answers empty, so its bytes do not count)."""
        resolved = self._resolved.get((user, client_id))
        if resolved:
            with self._lock:
                sensor = self._sensors.get(resolved[0])
                if sensor is not None:
                    sensor.add(-value, now_ms)

    def max_value_in_window(self, user: str, client_id: str) -> float | None:
        """The most one request may record without being throttled for sure (caps a fetch's max_bytes)."""
        resolved = self._resolved.get((user, client_id), False)
        if resolved is False:
            with self._lock:
                resolved = self._resolve(user, client_id)
        if resolved is None:
            return None
        return resolved[1] * (QUOTA_WINDOW_NUM - 1) * QUOTA_WINDOW_SIZE_MS / 1000

    def _resolve(self, user: str, client_id: str) -> tuple[Tags, float] | None:
        limits = self._limits
        for entity, tags in _precedence(user, client_id):
            bound = limits.get(entity)
            if bound is not None:
                return tags, bound
        return None


class ClientQuotaManagers:
    """Kafka's QuotaManagers: produce, fetch and request quotas."""

    def __init__(self) -> None:
        self.produce = ClientQuotaManager(PRODUCER_BYTE_RATE)
        self.fetch = ClientQuotaManager(CONSUMER_BYTE_RATE)
        self.request = ClientQuotaManager(REQUEST_PERCENTAGE, max_throttle_ms=REQUEST_MAX_THROTTLE_MS)

    @property
    def enabled(self) -> bool:
        return self.produce.enabled or self.fetch.enabled or self.request.enabled

    def update(self, quotas: Quotas) -> None:
        for manager in (self.produce, self.fetch, self.request):
            manager.update(quotas)
