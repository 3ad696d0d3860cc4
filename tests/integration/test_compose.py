"""docker-compose.yml is valid, and its local twin starts the same cluster as processes that clients can use."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.broker_process import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_compose_file_is_valid():
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing: install it with `apt-get install docker-compose` (make test does)")
    result = subprocess.run(["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_local_twin_runs_the_compose_cluster(tmp_path):
    from kafka import KafkaAdminClient, KafkaProducer

    port = free_port()
    twin = subprocess.Popen([sys.executable, "-m", "wirebroker.devcluster", "--file", str(ROOT / "docker-compose.yml"),
                             "--data", str(tmp_path), "--port", f"9092={port}"])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the twin's broker did not listen"
                time.sleep(0.1)
        producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}")
        producer.send("twin", b"hello").get(timeout=10)
        producer.close()
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        described = admin.describe_topics(["twin"])
        admin.close()
        assert len(described[0]["partitions"]) == 3  # num.partitions=3 from the compose file's command
        assert (tmp_path / "broker-data" / "twin-0").is_dir()  # the named volume, as a local directory
    finally:
        twin.send_signal(signal.SIGTERM)
        assert twin.wait(20) == 0
