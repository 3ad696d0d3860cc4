"""The load generator: Apache Kafka 4.3.1's own Java perf tools, run with the reference classpath, and their figures.

The same jars drive both brokers (compat_tests.reference_kafka installs them from Maven Central):
  ProducerPerformance  records/s, MB/s (MB = 2**20 bytes, as the tool counts) and send-to-ack latency
  ConsumerPerformance  MB/s and records/s of a group consumer reading a topic from the start
  EndToEndLatency      closed loop: send one record, wait for the consumer to see it, repeat (whole-ms latencies)
  FixedRateLatency     bench/java/FixedRateLatency.java: produce-to-consume latency at a fixed rate (our probe, on
                       kafka-clients 4.3.1 from the same jars), compiled once into .cache/compat/java/bench/
  ManyClients          bench/java/ManyClients.java: many producers (one connection each) or a consumer group of
                       many members in one JVM, on the same kafka-clients 4.3.1
Each function runs one tool to completion and returns its figures as a dict; a tool that fails raises LoadError
with the tail of its output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Mapping

from compat_tests.cache import DEFAULT_CACHE_DIR
from compat_tests.installers import compile_java
from compat_tests.maven import classpath
from compat_tests.reference_kafka import TOOLS, run_tool

# The perf tools are the load: they get the JIT's full tiers and a heap that never makes them wait on GC, unlike the
# short-lived admin tools (reference_kafka.TOOL_JVM_OPTS), so that the broker and not the generator is the bound.
LOAD_JVM_OPTS = ("-Xmx1G", "-Xms1G", "-XX:+UseG1GC", "-Djava.awt.headless=true")
LOAD_TIMEOUT_S = 1800.0
JAVA_DIR = Path(__file__).resolve().parent / "java"
PROBE_CLASS = "FixedRateLatency"
MANY_CLIENTS_CLASS = "ManyClients"

PRODUCER_SUMMARY = re.compile(
    r"(?P<records>\d+) records sent, (?P<records_per_s>[\d.]+) records/sec \((?P<mb_per_s>[\d.]+) MB/sec\), "
    r"(?P<avg_latency_ms>[\d.]+) ms avg latency, (?P<max_latency_ms>[\d.]+) ms max latency, "
    r"(?P<p50_ms>\d+) ms 50th, (?P<p95_ms>\d+) ms 95th, (?P<p99_ms>\d+) ms 99th, (?P<p999_ms>\d+) ms 99.9th")
E2E_AVERAGE = re.compile(r"Avg latency: (?P<mean_ms>[\d.]+) ms")
E2E_PERCENTILES = re.compile(r"Percentiles: 50th = (?P<p50_ms>\d+), 99th = (?P<p99_ms>\d+), "
                             r"99\.9th = (?P<p999_ms>\d+)")


class LoadError(RuntimeError):
    """A load tool exited with an error or printed no figures; the message holds its output's tail."""


def produce(jars: Path, bootstrap: str, topic: str, num_records: int, record_size: int,
            producer_props: Mapping[str, object]) -> dict[str, float]:
    """ProducerPerformance at full speed (--throughput -1); its final summary line as numbers."""
    props = [f"{key}={value}" for key, value in producer_props.items()]
    out = _run(jars, TOOLS["producer-perf"],
               ["--bootstrap-server", bootstrap, "--topic", topic, "--num-records", num_records,
                "--record-size", record_size, "--throughput", -1, "--command-property", *props])
    return producer_figures(out)


def producer_figures(out: str) -> dict[str, float]:
    """ProducerPerformance's final summary line (the last one, after the periodic progress lines) as numbers."""
    return _numbers(_last_match(PRODUCER_SUMMARY, out))


def consume(jars: Path, bootstrap: str, topic: str, num_records: int, group: str) -> dict[str, float]:
    """ConsumerPerformance from the earliest offset: MB/s over the whole run and over fetching alone (no join)."""
    out = _run(jars, TOOLS["consumer-perf"],
               ["--bootstrap-server", bootstrap, "--topic", topic, "--num-records", num_records, "--group", group,
                "--command-property", "auto.offset.reset=earliest"])
    return consumer_figures(out)


def consumer_figures(out: str) -> dict[str, float]:
    """ConsumerPerformance's header and figures lines as numbers (MB as the tool counts them, 2**20 bytes)."""
    lines = [line for line in out.splitlines() if line.count(",") >= 9]
    if len(lines) < 2:
        raise LoadError(f"ConsumerPerformance printed no figures:\n{out[-3000:]}")
    # The header names the columns; the dates hold spaces, so split on ", ".
    row = dict(zip(lines[-2].split(", "), lines[-1].split(", ")))
    return {"mb": float(row["data.consumed.in.MB"]), "mb_per_s": float(row["MB.sec"]),
            "records": float(row["data.consumed.in.nMsg"]), "records_per_s": float(row["nMsg.sec"]),
            "rebalance_ms": float(row["rebalance.time.ms"]), "fetch_ms": float(row["fetch.time.ms"]),
            "fetch_mb_per_s": float(row["fetch.MB.sec"]), "fetch_records_per_s": float(row["fetch.nMsg.sec"])}


def end_to_end_latency(jars: Path, bootstrap: str, topic: str, num_records: int, record_size: int,
                       acks: str) -> dict[str, float]:
    """Kafka's EndToEndLatency: one record in flight at a time; whole-millisecond percentiles, mean in ms."""
    out = _run(jars, TOOLS["end-to-end-latency"],
               ["--bootstrap-server", bootstrap, "--topic", topic, "--num-records", num_records,
                "--producer-acks", acks, "--record-size", record_size])
    return e2e_figures(out)


def e2e_figures(out: str) -> dict[str, float]:
    """EndToEndLatency's closing lines: the mean in ms and whole-ms percentiles."""
    return {**_numbers(_last_match(E2E_AVERAGE, out)), **_numbers(_last_match(E2E_PERCENTILES, out))}


def fixed_rate_latency(jars: Path, bootstrap: str, topic: str, rate_per_s: int, seconds: float, warmup_s: float,
                       record_size: int, acks: str) -> dict[str, float]:
    """Produce-to-consume latency of records sent at rate_per_s (see bench/java/FixedRateLatency.java)."""
    return _run_probe(jars, PROBE_CLASS, [bootstrap, topic, rate_per_s, seconds, warmup_s, record_size, acks])


def many_producers(jars: Path, bootstrap: str, topic: str, producers: int, num_records: int, record_size: int,
                   acks: str) -> dict[str, float]:
    """`producers` producers at the client's defaults, each on its own connection, sending num_records between
    them as fast as they may (bench/java/ManyClients.java); records/s, MB/s and send-to-ack percentiles."""
    return _run_probe(jars, MANY_CLIENTS_CLASS,
                      ["produce", bootstrap, topic, producers, num_records, record_size, acks])


def group_consume(jars: Path, bootstrap: str, topic: str, group: str, consumers: int,
                  num_records: int) -> dict[str, float]:
    """A group of `consumers` members reading num_records from the start between them (ManyClients.java)."""
    return _run_probe(jars, MANY_CLIENTS_CLASS, ["consume", bootstrap, topic, group, consumers, num_records])


def compile_probe(jars: Path, name: str, cache_dir: Path = DEFAULT_CACHE_DIR) -> Path:
    """Compile bench/java/<name>.java against the reference jars (once per source and jar set); its classes dir."""
    folder = "bench" if name == PROBE_CLASS else f"bench-{name}"  # the first probe's folder, as it always was
    return compile_java(JAVA_DIR / f"{name}.java", jars, cache_dir / "java" / folder)


def _run_probe(jars: Path, name: str, args: list[object]) -> dict[str, float]:
    """Run one of our Java probes to the end; the JSON line it prints last."""
    classes = compile_probe(jars, name)
    cmd = ["java", *LOAD_JVM_OPTS, f"-Dlog4j2.configurationFile={jars / 'tools-log4j2.properties'}",
           "-cp", f"{classes}{os.pathsep}{classpath(jars)}", name, *args]
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=LOAD_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    out = _checked(name, proc.returncode, proc.stdout, proc.stderr)
    figures = [line for line in out.splitlines() if line.startswith("{")]
    if not figures:
        raise LoadError(f"{name} printed no figures:\n{out[-3000:]}")
    return json.loads(figures[-1])


def _run(jars: Path, tool_class: str, args: list[object]) -> str:
    proc = run_tool(jars, tool_class, [str(a) for a in args], timeout=LOAD_TIMEOUT_S, jvm_opts=LOAD_JVM_OPTS)
    return _checked(tool_class, proc.returncode, proc.stdout, proc.stderr)


def _checked(what: str, returncode: int, stdout: str, stderr: str) -> str:
    if returncode != 0:
        raise LoadError(f"{what} exited with {returncode}:\n{(stdout + stderr)[-3000:]}")
    return stdout


def _last_match(pattern: re.Pattern[str], out: str) -> re.Match[str]:
    matches = list(pattern.finditer(out))
    if not matches:
        raise LoadError(f"no line matching {pattern.pattern!r} in the tool's output:\n{out[-3000:]}")
    return matches[-1]


def _numbers(match: re.Match[str]) -> dict[str, float]:
    return {key: float(value) for key, value in match.groupdict().items()}
