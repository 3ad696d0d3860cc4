"""A real wirebroker process for tests: started on a free 127.0.0.1 port, stopped, killed, restarted on its data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from wirebroker.network.ports import free_port

START_TIMEOUT_S = 30
READY_LINE = b"; ready in "  # the last words of cli.py's start-up line


class BrokerProcess:
    def __init__(self, data_dir: Path, overrides: dict[str, str] | None = None, port: int | None = None) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.overrides = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(data_dir),
            "node.id": "0",
            "group.initial.rebalance.delay.ms": "0",
            **(overrides or {}),
        }
        self.log_path = data_dir.parent / f"{data_dir.name}-broker.log"
        self.process: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> BrokerProcess:
        args = [sys.executable, "-m", "wirebroker"]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        log = open(self.log_path, "ab")
        started_at = log.tell()
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
        deadline = time.monotonic() + START_TIMEOUT_S
        # Ready when this start prints its "listening on ...; ready in" line, not when the port accepts: on a busy
        # machine another test's server may hold the port for a moment, and a connection to it proves nothing.
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"wirebroker exited with {self.process.returncode}:\n{self.log_text()}")
            if READY_LINE in self.log_path.read_bytes()[started_at:]:
                return self
            time.sleep(0.02)
        raise RuntimeError(f"wirebroker was not ready within {START_TIMEOUT_S}s:\n{self.log_text()}")

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM and wait: a clean shutdown."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise RuntimeError(f"wirebroker did not stop within {timeout}s:\n{self.log_text()}")

    def kill(self) -> None:
        """kill -9: a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> BrokerProcess:
        self.stop()
        return self.start()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
