"""Counting open connections against max.connections (Kafka's ConnectionQuotas, broker-wide limit only).

As in Kafka, reaching the limit does not refuse clients: the acceptor waits for a slot before its next accept, so
new connections wait in the kernel's listen backlog until one closes.
"""

from __future__ import annotations

import threading

MAX_CONNECTIONS = 2**31 - 1  # Kafka's default max.connections: no limit


class ConnectionQuotas:
    def __init__(self, max_connections: int = MAX_CONNECTIONS) -> None:
        if max_connections < 1:
            raise ValueError(f"max.connections must be >= 1, got {max_connections}")
        self.max_connections = max_connections
        self._count = 0
        self._closed = False
        self._slot_free = threading.Condition()

    @property
    def count(self) -> int:
        return self._count

    def wait_for_slot(self) -> bool:
        """Block until a connection may be accepted; False once `close()` was called."""
        with self._slot_free:
            self._slot_free.wait_for(lambda: self._closed or self._count < self.max_connections)
            return not self._closed

    def inc(self) -> None:
        with self._slot_free:
            self._count += 1

    def dec(self) -> None:
        with self._slot_free:
            self._count -= 1
            self._slot_free.notify()

    def close(self) -> None:
        """Release a waiting acceptor for shutdown."""
        with self._slot_free:
            self._closed = True
            self._slot_free.notify_all()
