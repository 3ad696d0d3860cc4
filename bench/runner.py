"""Run the workloads against one broker and gather its figures into one result dict (written as results/<name>.json).

A result holds:
  broker, settings           which broker and the overrides it ran with (SAME_FOR_BOTH and the command line's)
  machine                    CPU count and model, kernel, Python and Java versions, the load generator
  startup                    {"runs_s": [...], "median_s": x}: launch to first ApiVersions answer, fresh log dir
  idle                       {"rss_mib", "hwm_mib"}: the suite's broker after IDLE_SETTLE_S with no clients
  workloads                  {name: {"params", "figures", "broker_cpu_s", "load_cpu_s", "wall_s", "gb_moved",
                                     "cpu_s_per_gb",
                                     "peak_rss_mib", "quietness"[, "fill"][, "cpu_us_per_request"]}}
                             quietness: others' share of the cores before and during the run (bench.quietness),
                             whether the run is comparable, and every try the gate refused
                             load_cpu_s: CPU seconds of the load generator (the tool's JVM, or this process
                             for the ping workloads) during the workload, beside the broker's on the same cores
  end                        {"rss_mib", "hwm_mib"} after the last workload (hwm: the peak under load)
  load_average_before/after  the machine's 1, 5 and 15 minute load averages (others' work on the shared cores)
  rounds                     with --rounds N: N, and each workload entry is its median comparable round, with
                             "rounds" holding every round's key figure (KEY_FIGURES), others' share and verdict;
                             "comparable" is false when no round was quiet (the report then gives no ratio)
One broker process serves every workload but start-up (which starts its own); each workload has its own topic.
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Mapping

from bench import load, ping
from bench.procstats import PeakRssSampler, cpu_seconds, load_cpu_seconds, memory_mib
from bench.quietness import Gate, QuietnessSampler
from bench.topics import create_topic
from bench.workloads import BATCHING, Workload
from compat_tests.brokers import BrokerProcess
from compat_tests.cache import REPO_DIR
from compat_tests.reference_kafka import ReferenceKafka
from compat_tests.wirebroker_broker import Wirebroker

log = logging.getLogger(__name__)

BROKERS = ("wirebroker", "kafka")
# A JVM keeps touching its heap for a few seconds after it answers; measure idle memory once that has settled.
IDLE_SETTLE_S = 5.0
STARTUP_POLL_S = 0.01
GB = 1e9
MIB = 1 << 20
FILL_BATCHING = "batch64k"
# The figure that ranks the rounds of a workload (python -m bench --rounds): the median round is the one reported.
KEY_FIGURES = {"produce": "mb_per_s", "consume": "fetch_mb_per_s", "latency": "p99_ms", "e2e": "mean_ms",
               "ping": "requests_per_s", "producers": "mb_per_s", "group": "fetch_mb_per_s"}
# Set on both brokers as Kafka's own config/server.properties sets it (and the reference Kafka is given it): an
# empty group's first rebalance does not wait the code default's 3 s, so "with group join" compares the two joins
# rather than one broker's configured delay.
SAME_FOR_BOTH = {"group.initial.rebalance.delay.ms": "0"}


def raise_priority(niceness: int) -> None:
    """Run this process, and so the brokers and load tools it starts, at `niceness` (negative needs root).

    On a shared machine a negative niceness keeps others' work from deciding the figures: both brokers and their
    load get the same share of the cores, whatever else runs."""
    if niceness:
        os.setpriority(os.PRIO_PROCESS, 0, niceness)


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """["key=value", ...] from the command line as a settings dict."""
    settings = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"expected KEY=VALUE, got {pair!r}")
        settings[key] = value
    return settings


def make_broker(kind: str, work_dir: Path, jars: Path, settings: Mapping[str, object]) -> BrokerProcess:
    if kind == "wirebroker":
        return Wirebroker(work_dir, settings=settings)
    if kind == "kafka":
        return ReferenceKafka(work_dir, jars, settings=settings)
    raise ValueError(f"unknown broker {kind!r}; choose one of {BROKERS}")


def run_suite(kind: str, workloads: list[Workload], work_dir: Path, jars: Path,
              settings: Mapping[str, object] | None = None, gate: Gate | None = None) -> dict:
    """Every workload against a broker of this kind, each run until the machine was quiet (`gate`); the result dict
    described in the module docstring."""
    settings = {**SAME_FOR_BOTH, **(settings or {})}
    gate = gate or Gate()
    result: dict = {"broker": kind, "settings": settings, "machine": machine_info(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "load_average_before": os.getloadavg(),
                    "workloads": {}}
    for workload in (w for w in workloads if w.kind == "startup"):
        with QuietnessSampler((os.getpid(),), gate.max_others) as quietness:
            result["startup"] = measure_startup(kind, work_dir / "startup", jars, settings, workload.repeats)
        result["startup"]["quietness"] = {"during": quietness.result.as_dict(), "comparable": quietness.result.quiet}
    others = [w for w in workloads if w.kind != "startup"]
    if not others:
        return result
    broker = make_broker(kind, work_dir / "suite", jars, settings)
    broker.start()
    try:
        pid = broker.process.pid
        time.sleep(IDLE_SETTLE_S)
        result["idle"] = memory_mib(pid)
        for workload in others:
            log.info("%s: %s", kind, workload.name)
            result["workloads"][workload.name] = run_gated(workload, broker.bootstrap, pid, jars, gate)
        result["end"] = memory_mib(pid)
        result["load_average_after"] = os.getloadavg()
    finally:
        broker.stop()
        shutil.rmtree(work_dir / "suite", ignore_errors=True)
    return result


def run_gated(workload: Workload, bootstrap: str, pid: int, jars: Path, gate: Gate) -> dict:
    """Run the workload until the machine was quiet before and during the run, at most 1 + gate.retries times; the
    last run's entry, its "quietness" saying whether it is comparable and what the refused tries saw."""
    roots = (os.getpid(), pid)  # the harness (ping load), the broker, and the load tools (children of the harness)
    refused: list[dict] = []
    for attempt in range(gate.retries + 1):
        last = attempt == gate.retries
        before = gate.check_before(roots)
        if before.quiet or last:
            topic = workload.name if attempt == 0 else f"{workload.name}-try{attempt}"
            entry = run_workload(workload, bootstrap, pid, jars, topic, gate.max_others)
            during = entry.pop("_during")
            comparable = before.quiet and during.quiet
            if comparable or last:
                entry["quietness"] = {"before": before.as_dict(), "during": during.as_dict(),
                                      "comparable": comparable, "refused_tries": refused}
                if not comparable:
                    log.warning("%s: NOT COMPARABLE: others used %.0f%% of the cores before and %.0f%% during the "
                                "last of %d tries (limit %.0f%%); its figures are kept but never given as a ratio",
                                workload.name, before.others_share * 100, during.others_share * 100, attempt + 1,
                                gate.max_others * 100)
                return entry
            refused.append({"before": before.as_dict(), "during": during.as_dict()})
        else:
            refused.append({"before": before.as_dict()})
        log.warning("%s: refused try %d: others used %.0f%% of the cores (limit %.0f%%); again in %.0f s",
                    workload.name, attempt + 1, max(t.get("others_share", 0) for t in refused[-1].values()) * 100,
                    gate.max_others * 100, gate.wait_s)
        time.sleep(gate.wait_s)
    raise AssertionError("unreachable: the last try always returns")


def combine_rounds(rounds: list[dict]) -> dict:
    """One result from several rounds of the same suite on one broker: per workload the comparable round with the
    median key figure (the lower middle one for an even count; of all rounds when none was comparable, then marked
    "comparable": false), with every round's key figure and quietness in "rounds"; every start-up run; the median
    idle memory and the highest peak."""
    combined = {**rounds[0], "workloads": {}, "rounds": len(rounds)}
    for name, first in rounds[0]["workloads"].items():
        key = KEY_FIGURES[first["params"]["kind"]]
        every = [r["workloads"][name] for r in rounds if name in r["workloads"]]
        quiet = [e for e in every if is_comparable(e)]
        entries = sorted(quiet or every, key=lambda e: e["figures"][key])
        combined["workloads"][name] = {
            **entries[(len(entries) - 1) // 2], "comparable": bool(quiet),
            "rounds": [{"figure": e["figures"][key], "comparable": is_comparable(e),
                        "others_share": e.get("quietness", {}).get("during", {}).get("others_share")} for e in every]}
    if "startup" in rounds[0]:
        quiet_rounds = [r for r in rounds if is_comparable(r["startup"])]
        runs = [run for r in (quiet_rounds or rounds) for run in r["startup"]["runs_s"]]
        combined["startup"] = {"runs_s": runs, "median_s": statistics.median(runs), "comparable": bool(quiet_rounds)}
    if "idle" in rounds[0]:
        combined["idle"] = sorted((r["idle"] for r in rounds), key=lambda m: m["rss_mib"])[(len(rounds) - 1) // 2]
        combined["end"] = max((r["end"] for r in rounds), key=lambda m: m["hwm_mib"])
        combined["load_average_after"] = rounds[-1]["load_average_after"]
    return combined


def measure_startup(kind: str, work_dir: Path, jars: Path, settings: Mapping[str, object], repeats: int) -> dict:
    """Launch-to-first-ApiVersions seconds of `repeats` fresh brokers (Kafka's storage format is not counted)."""
    runs = []
    for attempt in range(repeats):
        broker = make_broker(kind, work_dir / f"run{attempt}", jars, settings)
        broker.start(poll_s=STARTUP_POLL_S)
        broker.stop()
        runs.append(broker.ready_after_s)
    shutil.rmtree(work_dir, ignore_errors=True)
    return {"runs_s": runs, "median_s": statistics.median(runs)}


def is_comparable(entry: dict | None) -> bool:
    """Whether a run (a workload's, or the start-up runs) was taken on a quiet machine; for an entry combined from
    rounds, whether any round was. Runs from before the quietness gate existed are not."""
    if not entry:
        return False
    if "comparable" in entry:
        return bool(entry["comparable"])
    return bool(entry.get("quietness", {}).get("comparable"))


def run_workload(workload: Workload, bootstrap: str, pid: int, jars: Path, topic: str | None = None,
                 max_others: float = Gate.max_others) -> dict:
    """Create the workload's topic (its name unless given), run its load, and measure what the broker spent on it;
    "_during" holds others' share of the cores while the load ran (bench.quietness)."""
    topic = topic or workload.name
    create_topic(bootstrap, topic, workload.partitions)
    entry: dict = {"params": workload.params(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if workload.kind in ("consume", "group"):
        entry["fill"] = fill_topic(workload, bootstrap, jars, topic)
    cpu_before, load_before, started = cpu_seconds(pid), load_cpu_seconds(), time.monotonic()
    with PeakRssSampler(pid) as sampler, QuietnessSampler((os.getpid(), pid), max_others) as quietness:
        figures = run_load(workload, bootstrap, jars, topic)
    entry.update(figures=figures, wall_s=time.monotonic() - started, broker_cpu_s=cpu_seconds(pid) - cpu_before,
                 load_cpu_s=load_cpu_seconds() - load_before,
                 peak_rss_mib=sampler.peak_mib, gb_moved=_bytes_moved(workload, figures) / GB)
    entry["cpu_s_per_gb"] = entry["broker_cpu_s"] / entry["gb_moved"] if entry["gb_moved"] else None
    entry["_during"] = quietness.result
    if workload.kind == "ping":
        entry["cpu_us_per_request"] = entry["broker_cpu_s"] / figures["requests_sent"] * 1e6
    return entry


def fill_topic(workload: Workload, bootstrap: str, jars: Path, topic: str) -> dict:
    """Write a consume workload's records into its topic (64 KB batches, acks=1); the producer's figures."""
    return load.produce(jars, bootstrap, topic, workload.num_records, workload.record_size,
                        {**BATCHING[FILL_BATCHING], "acks": "1"})


def run_load(workload: Workload, bootstrap: str, jars: Path, topic: str) -> dict:
    """Run the workload's load tool against its topic to the end; the tool's figures."""
    if workload.kind == "produce":
        return load.produce(jars, bootstrap, topic, workload.num_records, workload.record_size,
                            workload.producer_props)
    if workload.kind == "consume":
        return load.consume(jars, bootstrap, topic, workload.num_records, group=f"bench-{topic}")
    if workload.kind == "latency":
        return load.fixed_rate_latency(jars, bootstrap, topic, workload.rate_per_s, workload.seconds,
                                       workload.warmup_s, workload.record_size, workload.acks)
    if workload.kind == "e2e":
        return load.end_to_end_latency(jars, bootstrap, topic, workload.num_records, workload.record_size,
                                       workload.acks)
    if workload.kind == "producers":
        return load.many_producers(jars, bootstrap, topic, workload.clients, workload.num_records,
                                   workload.record_size, workload.acks)
    if workload.kind == "group":
        return load.group_consume(jars, bootstrap, topic, f"bench-{topic}", workload.clients, workload.num_records)
    if workload.kind == "ping":
        return ping.ping(bootstrap, workload.api, topic, workload.num_records, workload.connections,
                         workload.record_size)
    raise ValueError(f"unknown workload kind {workload.kind!r}")


def _bytes_moved(workload: Workload, figures: Mapping[str, float]) -> float:
    """Record bytes through the broker: in for produce, out for consume, in and out for the latency runs."""
    if workload.kind in ("produce", "producers"):
        return figures["records"] * workload.record_size
    if workload.kind in ("consume", "group"):
        return figures["mb"] * MIB
    if workload.kind == "latency":
        return (figures["sent"] + figures["received"]) * workload.record_size
    if workload.kind == "ping":
        return figures["requests"] * workload.record_size if workload.api != "api_versions" else 0
    return 2 * workload.num_records * workload.record_size


def machine_info() -> dict:
    return {"cpus": os.cpu_count(), "cpu_model": _cpu_model(), "kernel": platform.release(),
            "niceness": os.getpriority(os.PRIO_PROCESS, 0), "wirebroker_commit": _wirebroker_commit(),
            "python": platform.python_version(), "java": _java_version(),
            "load_generator": "Apache Kafka 4.3.1 ProducerPerformance / ConsumerPerformance / EndToEndLatency "
                              "and bench/java/FixedRateLatency.java on kafka-clients 4.3.1, JVM "
                              + " ".join(load.LOAD_JVM_OPTS)}


def _wirebroker_commit() -> str:
    """The repository's HEAD, with "+changes" when wirebroker/ has uncommitted edits (the code that ran)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO_DIR)
    dirty = subprocess.run(["git", "status", "--porcelain", "wirebroker"], capture_output=True, text=True,
                           cwd=REPO_DIR)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "") if head.returncode == 0 else "unknown"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.partition(":")[2].strip()
    return platform.processor()


def _java_version() -> str:
    proc = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return proc.stderr.splitlines()[0] if proc.stderr else "unknown"
