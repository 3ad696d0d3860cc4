"""Per-IP connection counts, their overrides and per-IP creation rates (network/connection_quotas.py)."""

from __future__ import annotations

import socket

import pytest

from wirebroker.network.connection_quotas import (
    ConnectionQuotas,
    ConnectionRefused,
    parse_per_ip_overrides,
)


def test_overrides_parse_and_resolve_host_names():
    assert parse_per_ip_overrides("localhost:5, 10.0.0.1:0") == {"127.0.0.1": 5, "10.0.0.1": 0}
    assert parse_per_ip_overrides("") == {}
    with pytest.raises(ValueError):
        parse_per_ip_overrides("10.0.0.1")


def test_per_ip_counts_with_overrides():
    quotas = ConnectionQuotas(max_connections_per_ip=1, per_ip_overrides={"10.0.0.2": 2})
    socks = [socket.socket() for _ in range(4)]
    try:
        quotas.inc(socks[0], "10.0.0.1")
        with pytest.raises(ConnectionRefused, match="Rejected connection from 10.0.0.1, address already has the "
                                                    "configured maximum of 1 connections."):
            quotas.inc(socks[1], "10.0.0.1")
        quotas.inc(socks[2], "10.0.0.2")
        quotas.inc(socks[3], "10.0.0.2")
        assert quotas.count == 3 and quotas.connections_of("10.0.0.2") == 2
        quotas.dec(socks[0])
        assert quotas.connections_of("10.0.0.1") == 0
        quotas.inc(socks[1], "10.0.0.1")  # its slot is free again
    finally:
        for sock in socks:
            sock.close()


def test_ip_creation_rates_take_the_default_ip_entity_for_others():
    quotas = ConnectionQuotas()
    quotas.set_ip_connection_rates({None: 0.5, "10.0.0.9": 100.0})
    socks = [socket.socket() for _ in range(7)]
    try:
        for sock in socks[:5]:  # 5 connections over the fresh 10 s span: 0.5/s
            quotas.inc(sock, "10.0.0.1")
        with pytest.raises(ConnectionRefused, match="over its connection_creation_rate quota of 0.5/s"):
            quotas.inc(socks[5], "10.0.0.1")
        quotas.inc(socks[6], "10.0.0.9")
    finally:
        for sock in socks:
            sock.close()
