"""A standalone ZooKeeper server from Debian's `zookeeper` package, for tests and the local dev cluster.

It runs `java -cp <jars> org.apache.zookeeper.server.ZooKeeperServerMain <data dir>/zoo.cfg` (no init scripts, no
system service) with this config, written into its data dir:

    tickTime=<tick_time_ms>        # sessions negotiate a timeout between 2 and 20 ticks
    dataDir=<data dir>
    clientPort=<port>              # the given port, else a free one
    clientPortAddress=127.0.0.1    # never listen beyond this machine
    maxClientCnxns=0               # no per-address limit: every broker and test client comes from 127.0.0.1

and two system properties: `zookeeper.admin.enableServer=false` (the AdminServer would take port 8080) and
`zookeeper.4lw.commands.whitelist=ruok,srvr,stat` (only `srvr` is allowed by default). The server is ready when `srvr`
names its mode: `ruok` already answers `imok` while the server still refuses sessions ("not currently serving").
ZooKeeper's own log goes to `<data dir>/zookeeper.log`. A temporary data dir is removed on stop.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from wirebroker.network.ports import free_port

JARS_DIR = Path("/usr/share/java")
# What ZooKeeperServerMain loads; zookeeper.jar's manifest Class-Path names the rest (netty, metrics, snappy ...).
REQUIRED_JARS = ("zookeeper", "zookeeper-jute", "slf4j-api")
# Loaded when present: slf4j-simple prints ZooKeeper's log instead of slf4j's "no binding" warning.
OPTIONAL_JARS = (
    "slf4j-simple", "netty-handler", "netty-common", "netty-transport", "netty-buffer", "netty-codec",
    "netty-resolver", "netty-transport-native-unix-common", "commons-cli", "jline", "metrics-core", "snappy-java",
    "audience-annotations",
)
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
DEFAULT_TICK_TIME_MS = 2000  # ZooKeeper's zoo_sample.cfg; sessions may then last 4 to 40 s
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
INSTALL_HINT = "install it with `make tools` (as root) or `apt-get install zookeeper`"


class ZooKeeperNotInstalledError(RuntimeError):
    """Debian's zookeeper package (or java) is missing."""


def zookeeper_classpath(jars_dir: Path = JARS_DIR) -> str:
    """The class path of a standalone server; ZooKeeperNotInstalledError names the missing jars."""
    missing = [name for name in REQUIRED_JARS if not (jars_dir / f"{name}.jar").exists()]
    if missing:
        raise ZooKeeperNotInstalledError(
            f"ZooKeeper is not installed: {', '.join(f'{name}.jar' for name in missing)} missing from {jars_dir}; "
            f"{INSTALL_HINT}"
        )
    present = [name for name in OPTIONAL_JARS if (jars_dir / f"{name}.jar").exists()]
    return os.pathsep.join(str(jars_dir / f"{name}.jar") for name in (*REQUIRED_JARS, *present))


def four_letter_word(port: int, command: str, timeout: float = 1.0) -> str:
    """Send a four-letter command (`ruok`, `srvr`, `stat`) and return the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(command.encode("ascii"))
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


class ZooKeeperServer:
    """One standalone server on 127.0.0.1: `with ZooKeeperServer() as zk: KazooClient(zk.connect_string)`."""

    def __init__(self, port: int | None = None, data_dir: Path | None = None,
                 tick_time_ms: int = DEFAULT_TICK_TIME_MS, jars_dir: Path = JARS_DIR) -> None:
        self.port = port or 0
        self.tick_time_ms = tick_time_ms
        self.jars_dir = jars_dir
        self._own_data_dir = data_dir is None
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None

    @property
    def connect_string(self) -> str:
        """Kafka's `zookeeper.connect` for this server."""
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir / "zookeeper.log"

    def start(self, timeout: float = START_TIMEOUT_S) -> ZooKeeperServer:
        """Start the server and return once it serves sessions."""
        classpath = zookeeper_classpath(self.jars_dir)
        java = shutil.which("java")
        if java is None:
            raise ZooKeeperNotInstalledError(f"java is not on PATH; {INSTALL_HINT} (it brings a JRE)")
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="zookeeper-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port()
        config = self.data_dir / "zoo.cfg"
        config.write_text(
            f"tickTime={self.tick_time_ms}\ndataDir={self.data_dir}\nclientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\nmaxClientCnxns=0\n"
        )
        args = [
            java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",  # small and quick to start
            "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=ruok,srvr,stat",
            "-cp", classpath, MAIN_CLASS, str(config),
        ]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_ready(timeout)
        return self

    def _wait_until_ready(self, timeout: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.process.returncode} on port {self.port}:\n"
                                   f"{self.log_text()}")
            try:
                if "Mode: " in four_letter_word(self.port, "srvr", timeout=0.5):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"ZooKeeper did not serve on port {self.port} within {timeout}s:\n{self.log_text()}")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (then SIGKILL after `timeout`); a temporary data dir is removed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._own_data_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.data_dir and self.log_path.exists() else ""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

