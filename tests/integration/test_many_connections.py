"""A thousand idle client connections are held open, and the broker still answers on another one."""

from __future__ import annotations

import resource
import socket

from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode

IDLE_CONNECTIONS = 1000


def test_thousand_idle_connections(broker):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    idle = []
    try:
        for _ in range(IDLE_CONNECTIONS):
            idle.append(socket.create_connection(("127.0.0.1", broker.port), timeout=10))
        with RawClient(broker.bootstrap) as client:
            response = client.request(18, 3, client_software_name="t", client_software_version="1")
            assert response.error_code == ErrorCode.NONE
        for sock in idle[:: IDLE_CONNECTIONS // 10]:  # a sample of the idle ones is still open and served
            assert RawClient.over(sock).request(18, 0).error_code == ErrorCode.NONE
    finally:
        for sock in idle:
            sock.close()
