"""A broker child process that the matrix starts, waits for and stops, and the probe that says it is ready.

Ready means: the listener answers an ApiVersions v0 request (the first thing every client sends). Both the
reference Kafka broker and wirebroker are BrokerProcess instances; each logs to `<work_dir>/broker.log`.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Mapping, Sequence

from wirebroker.network.ports import free_port

log = logging.getLogger(__name__)

API_VERSIONS_KEY = 18
PROBE_CORRELATION_ID = 7
# Kafka needs ~2.5 s from launch to its first ApiVersions answer on 2 busy cores; leave room for a loaded machine.
DEFAULT_START_TIMEOUT_S = 90.0
READY_POLL_S = 0.2
STOP_GRACE_S = 20.0


class BrokerStartError(RuntimeError):
    """The broker process exited or never answered ApiVersions; the message carries the tail of its log."""


def api_versions_answers(host: str, port: int, timeout: float = 2.0) -> bool:
    """True when host:port answers an ApiVersions v0 request with a frame that echoes our correlation id."""
    # Request header v1: api_key int16, api_version int16, correlation_id int32, client_id nullable string (-1).
    body = struct.pack(">hhih", API_VERSIONS_KEY, 0, PROBE_CORRELATION_ID, -1)
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            head = _recv_exactly(sock, 8)
    except OSError:
        return False
    if head is None:
        return False
    _size, correlation_id = struct.unpack(">ii", head)
    return correlation_id == PROBE_CORRELATION_ID


def _recv_exactly(sock: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class BrokerProcess:
    """One broker child process listening on 127.0.0.1:port; use as a context manager or start()/stop()."""

    name = "broker"

    def __init__(self, work_dir: Path, port: int | None = None) -> None:
        self.work_dir = Path(work_dir)
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        # Seconds from launching the process to its first ApiVersions answer (prepare() not included).
        self.ready_after_s: float | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.work_dir / "broker.log"

    def command(self) -> Sequence[str]:
        raise NotImplementedError

    def environment(self) -> Mapping[str, str]:
        return {}

    def cwd(self) -> Path:
        return self.work_dir

    def prepare(self) -> None:
        """Work done once before the process starts (writing configs, formatting storage)."""

    def start(self, timeout: float = DEFAULT_START_TIMEOUT_S, poll_s: float = READY_POLL_S) -> "BrokerProcess":
        """Prepare, launch and wait for the first ApiVersions answer, probing every poll_s seconds."""
        launched = self.launch()
        self.wait_ready(timeout, poll_s)
        self.ready_after_s = time.monotonic() - launched
        return self

    def launch(self) -> float:
        """Prepare and launch the process without waiting (cluster members must all run before any is ready)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        log.info("starting %s on %s (log %s)", self.name, self.bootstrap, self.log_path)
        with open(self.log_path, "ab") as log_file:
            # A new session so that stop() can signal the broker and any children it forks, and nothing else.
            self.process = subprocess.Popen(list(self.command()), cwd=self.cwd(), stdout=log_file,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env={**os.environ, **self.environment()}, start_new_session=True)
        return time.monotonic()

    def wait_ready(self, timeout: float = DEFAULT_START_TIMEOUT_S, poll_s: float = READY_POLL_S) -> None:
        """Wait for the first ApiVersions answer; BrokerStartError (with the log's tail) if it never comes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerStartError(f"{self.name} exited with {self.process.returncode} before answering "
                                       f"ApiVersions:\n{self.log_tail()}")
            if api_versions_answers("127.0.0.1", self.port):
                log.info("%s answers on %s", self.name, self.bootstrap)
                return
            time.sleep(poll_s)
        self.stop()
        raise BrokerStartError(f"{self.name} did not answer ApiVersions on {self.bootstrap} within {timeout:.0f}s:"
                               f"\n{self.log_tail()}")

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        """kill -9 of the broker's whole process group: a crash, no controlled shutdown."""
        if self.process is None or self.process.poll() is not None:
            return
        log.info("killing %s on %s (kill -9)", self.name, self.bootstrap)
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        log.info("stopping %s on %s", self.name, self.bootstrap)
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %.0fs of SIGTERM; killing it", self.name, STOP_GRACE_S)
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def __enter__(self) -> "BrokerProcess":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
