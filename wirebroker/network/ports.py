"""A free TCP port for a server about to start on it: the tests' brokers, the dev cluster's twin, ZooKeeper.

The port is picked below the kernel's ephemeral range (net.ipv4.ip_local_port_range). A port from inside that range
(the kernel's pick for port 0) can be taken by any outgoing connection between the pick and the server's bind, or
before a killed server restarts on it; below the range only another server that picked the same port can take it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 10000  # above the ports well-known services and their defaults use (Kafka 9092, ZooKeeper 2181)
ATTEMPTS = 100


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now, outside the ephemeral range when the system has room below it."""
    below = _ephemeral_range_start()
    if below > LOWEST_PORT:
        for port in random.sample(range(LOWEST_PORT, below), min(ATTEMPTS, below - LOWEST_PORT)):
            if _bindable(host, port):
                return port
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _ephemeral_range_start() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True
