"""Java's KafkaShareConsumer in processes of their own (compat_tests/drivers/java/ShareDriver.java), so a test runs
two members of one share group side by side and can kill one with SIGKILL. The driver is compiled against the
kafka-clients 4.x jars of the compatibility matrix's cache (`python -m compat_tests` fetches them)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from compat_tests.cache import DEFAULT_CACHE_DIR
from compat_tests.installers import (
    DRIVER_JVM_OPTS,
    DRIVERS_DIR,
    JAVA_CLIENT_VERSIONS,
    compile_java,
)
from compat_tests.maven import classpath, fetch_jars

DRIVER = DRIVERS_DIR / "java" / "ShareDriver.java"


def share_driver() -> list[str]:
    """The java command prefix running ShareDriver (compiled once per change)."""
    jars = fetch_jars(JAVA_CLIENT_VERSIONS["4"], DEFAULT_CACHE_DIR)
    classes = compile_java(DRIVER, jars, DEFAULT_CACHE_DIR / "java" / "share-driver")
    return ["java", *DRIVER_JVM_OPTS, "-cp", f"{classes}{os.pathsep}{classpath(jars)}", "ShareDriver"]


def run(*args: str, timeout: float = 120) -> str:
    done = subprocess.run([*share_driver(), *args], capture_output=True, text=True, timeout=timeout,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


class ShareConsumer:
    """One `ShareDriver consume` process; its lines are "<ack type> <value> <offset> <delivery count>"."""

    def __init__(self, out: Path, bootstrap: str, group: str, topic: str, idle_s: int, *actions: str) -> None:
        self.out = out
        self._file = open(out, "w")  # noqa: SIM115  (the process writes it until it ends: closed by kill())
        self.process = subprocess.Popen([*share_driver(), "consume", bootstrap, group, topic, str(idle_s), *actions],
                                        stdout=self._file, stderr=subprocess.STDOUT, text=True)

    def lines(self) -> list[list[str]]:
        return [line.split() for line in self.out.read_text().splitlines()]

    def wait_for(self, word: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(line[:1] == [word] for line in self.lines()):
                return
            if self.process.poll() is not None:
                raise AssertionError(f"the share consumer exited before {word!r}:\n{self.out.read_text()}")
            time.sleep(0.1)
        raise AssertionError(f"no {word!r} from the share consumer in {timeout}s:\n{self.out.read_text()}")

    def finish(self, timeout: float = 180) -> list[list[str]]:
        try:
            self.process.wait(timeout)
        finally:
            self.kill()
        assert self.process.returncode == 0, self.out.read_text()
        return self.lines()

    def pause(self) -> None:
        """SIGSTOP: the member hangs (a long GC pause, a stuck thread): its connection stays open and its client's
        background thread stops fetching, so what it holds comes back only when the acquisition locks run out."""
        self.process.send_signal(signal.SIGSTOP)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self._file.close()

    def acknowledged(self, kind: str) -> list[int]:
        return [int(line[1]) for line in self.lines() if line[0] == kind]


def values(lines: list[list[str]], kind: str) -> Counter:
    return Counter(int(line[1]) for line in lines if line[0] == kind)
