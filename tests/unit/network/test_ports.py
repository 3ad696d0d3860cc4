"""free_port picks a bindable port below the ephemeral range, where no outgoing connection can take it."""

from __future__ import annotations

import socket

from wirebroker.network.ports import LOWEST_PORT, _ephemeral_range_start, free_port


def test_a_free_port_is_bindable_and_below_the_ephemeral_range():
    below = _ephemeral_range_start()
    for _ in range(20):
        port = free_port()
        assert LOWEST_PORT <= port < below
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))


def test_a_port_in_use_is_never_picked(monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr("wirebroker.network.ports.LOWEST_PORT", port)
        monkeypatch.setattr("wirebroker.network.ports._ephemeral_range_start", lambda: port + 2)
        assert {free_port() for _ in range(10)}.isdisjoint({port})  # port + 1, or the kernel's pick if that is taken
