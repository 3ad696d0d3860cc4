"""A broker with two listeners answers each client with the endpoints of the listener it connected by (Kafka's
ListenerName in every request): the docker-compose cluster's INTERNAL and PLAINTEXT listeners rely on it."""

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.raw_client import RawClient

METADATA, DESCRIBE_CLUSTER = 3, 60


def test_metadata_names_the_endpoint_of_the_listener_asked(tmp_path):
    external, internal = free_port(), free_port()
    broker = BrokerProcess(tmp_path / "data", port=external, overrides={
        "listeners": f"PLAINTEXT://127.0.0.1:{external},INTERNAL://127.0.0.1:{internal}",
        "advertised.listeners": f"PLAINTEXT://localhost:{external},INTERNAL://127.0.0.1:{internal}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
    }).start()
    try:
        for port, host in ((external, "localhost"), (internal, "127.0.0.1")):
            with RawClient(f"127.0.0.1:{port}") as client:
                metadata = client.request(METADATA, 12, topics=None)
                cluster = client.request(DESCRIBE_CLUSTER, 1, endpoint_type=1)
            assert [(b.host, b.port) for b in metadata.brokers] == [(host, port)]
            assert [(b.host, b.port) for b in cluster.brokers] == [(host, port)]
    finally:
        broker.stop()
