"""Issue 14 item 5: max.connections.per.ip (with its overrides) and the connection_creation_rate quota of an IP
hold on a real broker: a connection over the limit is closed at once, and the broker's log names the IP."""

from __future__ import annotations

import socket
import time

from tests.integration.raw_client import RawClient
from tests.integration.test_client_quotas import alter, alteration


def connect(bootstrap: str, host: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection((host, int(bootstrap.rsplit(":", 1)[1])), timeout=5)
    return sock


def is_served(sock: socket.socket) -> bool:
    """ApiVersions answered (True) or the connection closed by the broker (False); the socket stays open."""
    try:
        RawClient.over(sock).request(18, 0)
        return True
    except (ConnectionError, AssertionError, OSError):
        return False


def wait_for_log(broker, text: str, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in broker.log_text():
            return True
        time.sleep(0.05)
    return False


def test_max_connections_per_ip_closes_the_next_connection(broker_factory):
    broker = broker_factory(**{"max.connections.per.ip": "3"})
    socks = [connect(broker.bootstrap) for _ in range(3)]
    extra = connect(broker.bootstrap)
    assert not is_served(extra)
    assert wait_for_log(broker, "Rejected connection from 127.0.0.1, address already has the configured maximum "
                                "of 3 connections.")
    assert all(is_served(sock) for sock in socks)
    socks[0].close()
    time.sleep(0.3)  # the broker sees the close, and the IP has a slot again
    assert is_served(connect(broker.bootstrap))


def test_a_per_ip_override_raises_the_limit_for_that_ip(broker_factory):
    broker = broker_factory(**{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "127.0.0.1:4"})
    socks = [connect(broker.bootstrap) for _ in range(4)]
    assert all(is_served(sock) for sock in socks)
    assert not is_served(connect(broker.bootstrap))


def test_an_ip_over_its_connection_creation_rate_is_closed_after_its_throttle(broker):
    with RawClient(broker.bootstrap) as client:
        assert alter(client, alteration({"ip": "127.0.0.1"}, connection_creation_rate=1.0)) == [(0, None)]
        # a fresh rate spans 10 one-second windows: 10 connections are within 1/s, the 11th is not
        kept = [connect(broker.bootstrap) for _ in range(10)]
        assert all(is_served(sock) for sock in kept)
        started = time.monotonic()
        assert not is_served(connect(broker.bootstrap))  # never served, and closed once its throttle is over:
        assert time.monotonic() - started >= 0.8  # (11 / 10 s - 1/s) / 1/s x 10 s = 1 s, as Kafka's DelayedCloseSocket
        assert client.request(18, 0).error_code == 0  # connections already open are not touched


def test_max_connection_creation_rate_slows_the_acceptor(broker_factory):
    """1 connection/s: a fresh rate spans 10 s, so ~10 connections come at once; past them, the acceptor waits out
    each throttle before accepting the next, and the connections wait in the listen backlog meanwhile."""
    broker = broker_factory(**{"max.connection.creation.rate": "1"})
    waits = []
    socks = []
    for _ in range(12):
        started = time.monotonic()
        socks.append(connect(broker.bootstrap))
        assert is_served(socks[-1])
        waits.append(time.monotonic() - started)
    assert max(waits[:8]) < 0.5, waits  # the broker's own start-up probe may have used a slot or two
    assert max(waits[10:]) >= 0.5, waits
