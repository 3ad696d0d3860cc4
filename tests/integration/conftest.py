"""Fixtures that run a real broker process; tests drive it with real client libraries over TCP."""

from __future__ import annotations

import shutil

import pytest

from tests.integration.broker_process import BrokerProcess


@pytest.fixture
def broker(tmp_path):
    """A fresh broker with its own data dir, stopped (cleanly, else killed) at the end of the test."""
    process = BrokerProcess(tmp_path / "data").start()
    yield process
    try:
        process.stop()
    finally:
        process.kill()


@pytest.fixture
def broker_factory(tmp_path):
    """Start brokers with config overrides: `broker_factory(**{"auto.create.topics.enable": "false"})`."""
    started: list[BrokerProcess] = []

    def start(**overrides: str) -> BrokerProcess:
        process = BrokerProcess(tmp_path / f"data{len(started)}", overrides).start()
        started.append(process)
        return process

    yield start
    for process in started:
        try:
            process.stop()
        finally:
            process.kill()


@pytest.fixture
def jdk_and_maven() -> None:
    """Tests that compile a Java client probe need javac and mvn: missing, they fail saying what to install."""
    missing = [tool for tool in ("javac", "mvn") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} missing: install a JDK 17 and Maven (apt-get install openjdk-17-jdk-headless "
                    "maven)", pytrace=False)
