"""What the drivers of Kafka's own tools share: running the tool classes of the reference jars ($KAFKA_JARS).

Tools that run to completion go through one ToolHost JVM per driver process ($KAFKA_TOOL_HOST is its command,
see drivers/java/ToolHost.java): a JVM start with Kafka's jars costs seconds on 2 busy cores, a tool's main() in a
warm JVM much less. Tools that must run beside others (a group's consumers) or that print from their own threads
and JVM shutdown hooks (the verifiable tools) get JVMs of their own, started with
compat_tests.reference_kafka.tool_command like everything else that runs Kafka's tools.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from compat_tests.reference_kafka import TOOLS, tool_command

from driver_common import expect

JARS = Path(os.environ["KAFKA_JARS"])
HOST_COMMAND = json.loads(os.environ["KAFKA_TOOL_HOST"])
TOOL_TIMEOUT_S = 90


@dataclass
class ToolResult:
    returncode: int
    stdout: str
    stderr: str


class ToolHost:
    """The ToolHost JVM: one JSON command line in, one JSON result line out."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(HOST_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lock = threading.Lock()

    def call(self, tool_class: str, args: list[str], stdin: str | None) -> ToolResult:
        with self.lock:
            self.proc.stdin.write(json.dumps({"tool": tool_class, "args": args, "stdin": stdin}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        expect(bool(line), f"the tool host JVM exited ({self.proc.poll()})")
        result = json.loads(line)
        return ToolResult(result["code"], result["stdout"], result["stderr"])


_host: ToolHost | None = None


def run(tool: str, *args: str, stdin: str | None = None, check: bool = True) -> ToolResult:
    """Run a tool (a key of reference_kafka.TOOLS) to completion; with check, fail the scenario on a non-zero exit."""
    global _host
    if _host is None:
        _host = ToolHost()
    result = _host.call(TOOLS[tool], list(args), stdin)
    if check:
        expect(result.returncode == 0, f"{tool} {' '.join(args[2:6])} exited {result.returncode}: "
                                       f"{failure_text(result.stderr or result.stdout)}")
    return result


def failure_text(output: str) -> str:
    """The lines of a tool's output that say what went wrong, without Java stack frames."""
    lines = [line for line in output.splitlines() if line.strip() and not line.lstrip().startswith(("at ", "..."))]
    return "\n".join(lines)[-600:]


def run_alone(tool: str, *args: str) -> ToolResult:
    """Run a tool in a JVM of its own, for tools that print from threads or JVM shutdown hooks (the verifiable ones)."""
    proc = subprocess.run(tool_command(JARS, TOOLS[tool], args), capture_output=True, text=True,
                          timeout=TOOL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    expect(proc.returncode == 0, f"{tool} exited {proc.returncode}: {failure_text(proc.stderr or proc.stdout)}")
    return ToolResult(proc.returncode, proc.stdout, proc.stderr)


def properties_file(settings: dict[str, object]) -> str:
    """A client properties file for the tools' --producer.config / --consumer.config options."""
    handle, path = tempfile.mkstemp(suffix=".properties", prefix="compat-")
    with os.fdopen(handle, "w") as f:
        f.write("".join(f"{k}={v}\n" for k, v in settings.items()))
    return path


class Background:
    """A tool left running in its own JVM (a consumer of a group): a thread collects its stdout lines."""

    def __init__(self, tool: str, *args: str) -> None:
        self.proc = subprocess.Popen(tool_command(JARS, TOOLS[tool], args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.lines: list[str] = []
        self.stderr_tail = ""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + line)[-2000:]

    def stop(self) -> None:
        """SIGTERM: the tools' shutdown hooks close their clients (a group consumer commits and leaves)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(TOOL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
