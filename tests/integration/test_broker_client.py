"""The inter-broker client against a real broker: requests answered in order, failures surface as BrokerUnreachable
and the next send reconnects."""

import socket
import threading
import time

import pytest

from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.protocol.messages.api_versions import ApiVersionsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest


def test_requests_and_a_reconnect_after_the_broker_restarts(broker):
    host, port = broker.bootstrap.rsplit(":", 1)
    client = BrokerClient(host, int(port), client_id="broker-1-fetcher", timeout_s=10)
    try:
        versions = client.send(ApiVersionsRequest(client_software_name="wirebroker",
                                                  client_software_version="0"), 3)
        assert versions.error_code == 0 and any(k.api_key == 1 for k in versions.api_keys)
        metadata = client.send(MetadataRequest(topics=None), 12)
        assert [b.port for b in metadata.brokers] == [int(port)]
        broker.stop()
        with pytest.raises(BrokerUnreachable):
            client.send(MetadataRequest(topics=None), 12)
        broker.start()
        assert _send_until_answered(client, MetadataRequest(topics=None), 12).brokers[0].port == int(port)
    finally:
        client.close()


def _send_until_answered(client: BrokerClient, request, version: int, timeout_s: float = 15):
    """As the fetchers and the controller's channel use it: a failed send is retried by sending again."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return client.send(request, version)
        except BrokerUnreachable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_an_oversized_response_frame_is_refused_before_it_is_read():
    server = socket.create_server(("127.0.0.1", 0))

    def answer_with_a_huge_size() -> None:
        connection, _ = server.accept()
        connection.recv(1024)
        connection.sendall((2**31 - 1).to_bytes(4, "big"))
        connection.close()

    threading.Thread(target=answer_with_a_huge_size, daemon=True).start()
    client = BrokerClient("127.0.0.1", server.getsockname()[1], client_id="t", timeout_s=5,
                          max_response_bytes=1024 * 1024)
    with pytest.raises(BrokerUnreachable, match="outside"):
        client.send(MetadataRequest(topics=None), 12)
    server.close()
