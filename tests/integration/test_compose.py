"""docker-compose.yml is valid and describes the three-broker cluster; its local twin starts that cluster as
processes (ZooKeeper included) that clients can use, and stops it all on SIGTERM."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.integration.broker_process import free_port

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL_PORTS = (9092, 9093, 9094)


def compose_config() -> dict:
    """The compose file as docker-compose itself resolves it (anchors merged, ports and volumes normalised)."""
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing: install it with `apt-get install docker-compose` (make test does)")
    result = subprocess.run(["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config"],
                            check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def overrides(service: dict) -> dict[str, str]:
    command = service["command"]
    assert command[::2] == ["--override"] * (len(command) // 2)
    return dict(item.split("=", 1) for item in command[1::2])


def test_compose_file_is_valid_zookeeper_and_three_brokers():
    config = compose_config()
    services = config["services"]
    assert sorted(services) == ["broker1", "broker2", "broker3", "zookeeper"]
    assert services["zookeeper"]["image"].startswith("zookeeper:")
    assert "healthcheck" in services["zookeeper"]
    for node_id, port in zip((1, 2, 3), EXTERNAL_PORTS):
        broker = services[f"broker{node_id}"]
        settings = overrides(broker)
        assert settings["node.id"] == str(node_id)
        assert settings["zookeeper.connect"] == "zookeeper:2181"
        assert (settings["default.replication.factor"], settings["min.insync.replicas"],
                settings["offsets.topic.replication.factor"], settings["num.partitions"]) == ("3", "2", "3", "3")
        # Two listeners: brokers talk over INTERNAL on the compose network, host clients over PLAINTEXT.
        assert settings["inter.broker.listener.name"] == "INTERNAL"
        assert settings["listener.security.protocol.map"] == "INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT"
        assert settings["advertised.listeners"] == f"INTERNAL://broker{node_id}:19092,PLAINTEXT://localhost:{port}"
        assert [(p["published"], p["target"]) for p in broker["ports"]] == [(port, port)]
        assert broker["depends_on"]["zookeeper"]["condition"] == "service_healthy"
        assert "healthcheck" in broker
        assert broker["volumes"] == [f"broker{node_id}-data:{settings['log.dirs']}:rw"]  # a named volume
    assert sorted(config["volumes"]) == ["broker1-data", "broker2-data", "broker3-data", "zookeeper-data",
                                         "zookeeper-datalog"]
    assert "tools.compose_local" not in (ROOT / "docker-compose.yml").read_text()


def wait_for_ports(ports: list[int], process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for port in ports:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, f"the twin exited with {process.returncode}"
                assert time.monotonic() < deadline, f"the twin's broker on port {port} did not listen"
                time.sleep(0.2)


def test_local_twin_runs_the_compose_cluster(tmp_path):
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient
    from kazoo.client import KazooClient

    ports = [free_port() for _ in EXTERNAL_PORTS]
    zookeeper_port = free_port()
    mapping = [arg for host, local in zip(EXTERNAL_PORTS, ports) for arg in ("--port", f"{host}={local}")]
    twin = subprocess.Popen([sys.executable, "-m", "wirebroker.devcluster", "--file", str(ROOT / "docker-compose.yml"),
                             "--data", str(tmp_path), "--zookeeper-port", str(zookeeper_port), *mapping])
    try:
        wait_for_ports(ports, twin)
        zk = KazooClient(hosts=f"127.0.0.1:{zookeeper_port}")
        zk.start(timeout=10)
        try:
            deadline = time.monotonic() + 30
            while sorted(zk.get_children("/brokers/ids")) != ["1", "2", "3"]:
                assert time.monotonic() < deadline, f"registered: {zk.get_children('/brokers/ids')}"
                time.sleep(0.2)
        finally:
            zk.stop()
        bootstrap = ",".join(f"127.0.0.1:{port}" for port in ports)
        producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
        delivered = []
        producer.produce("twin", b"hello", on_delivery=lambda err, msg: delivered.append(err))
        assert producer.flush(30) == 0 and delivered == [None]
        metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{ports[2]}"}).list_topics("twin", timeout=10)
        assert sorted(metadata.brokers) == [1, 2, 3]
        partitions = metadata.topics["twin"].partitions
        assert len(partitions) == 3  # num.partitions=3 from the compose file's commands
        assert all(sorted(p.replicas) == [1, 2, 3] for p in partitions.values())  # default.replication.factor=3
        for node_id in (1, 2, 3):
            assert (tmp_path / f"broker{node_id}-data" / "twin-0").is_dir()  # the named volumes, as directories
    finally:
        twin.send_signal(signal.SIGTERM)
        assert twin.wait(90) == 0
    with pytest.raises(OSError):  # ZooKeeper stopped after the brokers
        socket.create_connection(("127.0.0.1", zookeeper_port), timeout=1).close()
