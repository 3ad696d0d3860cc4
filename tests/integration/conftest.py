"""Fixtures that run a real broker process; tests drive it with real client libraries over TCP."""

from __future__ import annotations

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
