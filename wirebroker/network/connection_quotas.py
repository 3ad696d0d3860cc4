"""Connection limits (Kafka's ConnectionQuotas): open connections broker-wide and per client IP, and the rate at
which connections are created, broker-wide and per IP.

- max.connections: reaching it does not refuse clients: the acceptor waits for a slot before its next accept, so
  new connections wait in the kernel's listen backlog until one closes.
- max.connection.creation.rate: each accepted connection is recorded on a broker-wide rate (Kafka's quota windows,
  network/quota_rate.py); over the rate, the acceptor waits out the throttle time before
  its next accept.
- max.connections.per.ip, with max.connections.per.ip.overrides ("host:count,..."): a connection from an IP that
  already has its maximum is closed at once, with a log line naming the IP (Kafka's TooManyConnectionsException).
- connection_creation_rate quotas of ip entities (AlterClientQuotas, the default ip entity for every other IP): a
  connection over its IP's rate is not served and is closed once the throttle time is over (network/acceptor.py).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded only when a creation rate is limited
    from wirebroker.network.quota_rate import QuotaRate

MAX_CONNECTIONS = 2**31 - 1  # Kafka's default max.connections: no limit
MAX_CONNECTIONS_PER_IP = 2**31 - 1  # Kafka's default max.connections.per.ip
MAX_CONNECTION_CREATION_RATE = 2**31 - 1  # Kafka's default max.connection.creation.rate


class ConnectionRefused(Exception):
    """An accepted connection its IP may not have; the message says why, for the log. `throttle_ms` > 0: the IP is
    over its creation rate, and the connection is to be closed only after that long (Kafka's
    ConnectionThrottledException: a client reconnecting in a loop is slowed down, not fed fresh refusals)."""

    def __init__(self, message: str, throttle_ms: int = 0) -> None:
        super().__init__(message)
        self.throttle_ms = throttle_ms


def parse_per_ip_overrides(text: str) -> dict[str, int]:
    """max.connections.per.ip.overrides, "hostName:100,127.0.0.1:200", hosts resolved to their address."""
    overrides = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        host, _, count = item.rpartition(":")
        if not host or not count.strip().isdigit():
            raise ValueError(f"expected host:count entries separated by commas, got {item!r}")
        overrides[socket.gethostbyname(host.strip())] = int(count)
    return overrides


class ConnectionQuotas:
    def __init__(self, max_connections: int = MAX_CONNECTIONS, *,
                 max_connections_per_ip: int = MAX_CONNECTIONS_PER_IP,
                 per_ip_overrides: Mapping[str, int] | None = None,
                 max_connection_creation_rate: int = MAX_CONNECTION_CREATION_RATE) -> None:
        if max_connections < 1:
            raise ValueError(f"max.connections must be >= 1, got {max_connections}")
        self.max_connections = max_connections
        self.max_connections_per_ip = max_connections_per_ip
        self.per_ip_overrides = dict(per_ip_overrides or {})
        self._count = 0
        self._closed = False
        self._slot_free = threading.Condition()
        self._per_ip: dict[str, int] = {}
        self._ip_of: dict[int, str] = {}  # id(socket) -> its client's IP, while counted
        self._broker_rate = (_rate(max_connection_creation_rate)
                             if max_connection_creation_rate < MAX_CONNECTION_CREATION_RATE else None)
        self._ip_rate_limits: Mapping[str | None, float] = {}  # IP (None: the default) -> connections/s
        self._ip_rates: dict[str, QuotaRate] = {}

    @property
    def count(self) -> int:
        return self._count

    def connections_of(self, ip: str) -> int:
        return self._per_ip.get(ip, 0)

    def wait_for_slot(self) -> bool:
        """Block until a connection may be accepted (a free slot, and the broker's creation rate respected);
        False once `close()` was called."""
        with self._slot_free:
            self._slot_free.wait_for(lambda: self._closed or self._count < self.max_connections)
            if self._broker_rate is not None and not self._closed:
                throttle_ms = self._broker_rate.record(1, _now_ms())
                if throttle_ms:
                    self._slot_free.wait_for(lambda: self._closed, throttle_ms / 1000)
            return not self._closed

    def set_ip_connection_rates(self, limits: Mapping[str | None, float]) -> None:
        """The connection_creation_rate of each IP entity (None: the default IP)."""
        with self._slot_free:
            self._ip_rate_limits = dict(limits)
            for ip, rate in list(self._ip_rates.items()):
                bound = self._ip_rate_limit(ip)
                if bound is None:
                    del self._ip_rates[ip]
                else:
                    rate.bound = bound

    def inc(self, sock: socket.socket | None = None, ip: str | None = None) -> None:
        """Count an accepted connection; ConnectionRefused (not counted) if its IP is over a limit."""
        with self._slot_free:
            if ip is not None and sock is not None:
                limit = self.per_ip_overrides.get(ip, self.max_connections_per_ip)
                count = self._per_ip.get(ip, 0)
                if count >= limit:
                    raise ConnectionRefused(f"Rejected connection from {ip}, address already has the configured "
                                            f"maximum of {limit} connections.")
                self._check_ip_rate(ip)
                self._per_ip[ip] = count + 1
                self._ip_of[id(sock)] = ip
            self._count += 1

    def dec(self, sock: socket.socket | None = None) -> None:
        with self._slot_free:
            self._count -= 1
            ip = self._ip_of.pop(id(sock), None) if sock is not None else None
            if ip is not None:
                left = self._per_ip[ip] - 1
                if left:
                    self._per_ip[ip] = left
                else:
                    del self._per_ip[ip]
            self._slot_free.notify()

    def close(self) -> None:
        """Release a waiting acceptor for shutdown."""
        with self._slot_free:
            self._closed = True
            self._slot_free.notify_all()

    def _check_ip_rate(self, ip: str) -> None:
        if not self._ip_rate_limits:
            return
        rate = self._ip_rates.get(ip)
        if rate is None:
            bound = self._ip_rate_limit(ip)
            if bound is None:
                return
            rate = self._ip_rates[ip] = _rate(bound)
        throttle_ms = rate.record(1, _now_ms())
        if throttle_ms:
            raise ConnectionRefused(f"Delaying closing of connection from {ip} for {throttle_ms} ms: over its "
                                    f"connection_creation_rate quota of {rate.bound:g}/s", throttle_ms)

    def _ip_rate_limit(self, ip: str) -> float | None:
        limits = self._ip_rate_limits
        return limits.get(ip, limits.get(None))


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def _rate(bound: float) -> QuotaRate:
    from wirebroker.network.quota_rate import QuotaRate

    return QuotaRate(bound)
