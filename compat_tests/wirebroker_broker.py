"""wirebroker as a child process of the matrix, started the way the project promises:

    python3 -m wirebroker --override listeners=PLAINTEXT://127.0.0.1:PORT \
        --override advertised.listeners=PLAINTEXT://127.0.0.1:PORT --override log.dirs=DIR \
        --override node.id=0 [--override key=value ...] [--log-level wirebroker.request=DEBUG]

run from the repository root with the interpreter that runs the matrix. Its output goes to <work_dir>/broker.log.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping

from compat_tests.brokers import BrokerProcess
from compat_tests.cache import REPO_DIR
from wirebroker.server import request_log


class Wirebroker(BrokerProcess):
    """wirebroker on 127.0.0.1:<free port> with a fresh log dir under work_dir; settings are extra overrides.

    log_requests: its request log on (a line per request in broker.log; it costs CPU: not for benchmarks).
    """

    name = "wirebroker"

    def __init__(self, work_dir: Path, *, port: int | None = None,
                 settings: Mapping[str, object] | None = None, python: str = sys.executable,
                 log_requests: bool = False) -> None:
        super().__init__(work_dir, port)
        self.log_requests = log_requests
        self.settings = dict(settings or {})
        self.python = python

    def command(self) -> list[str]:
        # advertised.listeners as the reference Kafka is given it (kafka-python's suite reads its config source)
        listener = f"PLAINTEXT://127.0.0.1:{self.port}"
        overrides = {"listeners": listener, "advertised.listeners": listener, "log.dirs": self.work_dir / "data",
                     "node.id": 0, **self.settings}
        cmd = [self.python, "-m", "wirebroker"]
        for key, value in overrides.items():
            cmd += ["--override", f"{key}={value}"]
        if self.log_requests:
            cmd += ["--log-level", f"{request_log.LOGGER_NAME}=DEBUG"]
        return cmd

    def cwd(self) -> Path:
        return REPO_DIR
