"""RESULTS.md and chart.png from the per-broker result files (<out>/wirebroker.json, <out>/kafka.json).

Every ratio is wirebroker / Kafka: above 1 is better for throughput, below 1 is better for latency, memory,
start-up and CPU per GB. The goals are the issue's (issue 6). A ratio is given only between runs the quietness gate
counted (bench/report_rounds.py); bench/ANALYSIS.md, hand-written (profile findings, what bounds each figure), is
appended when it exists.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bench.report_rounds import quietness_section, ratio_cell, rounds_cell
from bench.runner import KEY_FIGURES

BENCH_DIR = Path(__file__).resolve().parent
ANALYSIS_PATH = BENCH_DIR / "ANALYSIS.md"
SPARK_READ_NAME = "spark-read.md"  # bench/spark_read.py's section (issue 16), in the default results folder
CHART_NAME = "chart.png"
NAMES = {"wirebroker": "wirebroker", "kafka": "Apache Kafka 4.3.1"}


@dataclass(frozen=True)
class Metric:
    """One figure of one workload: how to read it from a result entry, and which way is better."""
    label: str
    read: Callable[[dict], float | None]
    higher_is_better: bool
    digits: int = 1


def _figure(key: str) -> Callable[[dict], float | None]:
    return lambda entry: entry["figures"].get(key)


def _entry(key: str) -> Callable[[dict], float | None]:
    return lambda entry: entry.get(key)


PRODUCE_METRICS = [Metric("records/s", _figure("records_per_s"), True, 0),
                   Metric("MB/s", _figure("mb_per_s"), True),
                   Metric("send-to-ack p99 ms", _figure("p99_ms"), False, 0)]
CONSUME_METRICS = [Metric("MB/s (fetching)", _figure("fetch_mb_per_s"), True),
                   Metric("MB/s (with group join)", _figure("mb_per_s"), True),
                   Metric("records/s (fetching)", _figure("fetch_records_per_s"), True, 0)]
LATENCY_METRICS = [Metric("p50 ms", _figure("p50_ms"), False, 2), Metric("p99 ms", _figure("p99_ms"), False, 2),
                   Metric("p99.9 ms", _figure("p999_ms"), False, 2)]
E2E_METRICS = [Metric("mean ms", _figure("mean_ms"), False, 2), Metric("p50 ms", _figure("p50_ms"), False, 0),
               Metric("p99 ms", _figure("p99_ms"), False, 0)]
PING_METRICS = [Metric("requests/s", _figure("requests_per_s"), True, 0),
                Metric("round trip p50 µs", _figure("p50_us"), False, 0),
                Metric("round trip p99 µs", _figure("p99_us"), False, 0),
                Metric("broker CPU µs per request", _entry("cpu_us_per_request"), False, 0)]
COST_METRICS = [Metric("broker CPU s per GB", _entry("cpu_s_per_gb"), False),
                Metric("load generator CPU s per GB", lambda e: e["load_cpu_s"] / e["gb_moved"], False),
                Metric("broker peak RSS MiB", _entry("peak_rss_mib"), False, 0)]
METRICS_BY_KIND = {"produce": PRODUCE_METRICS, "consume": CONSUME_METRICS, "latency": LATENCY_METRICS,
                   "e2e": E2E_METRICS, "ping": PING_METRICS, "producers": PRODUCE_METRICS, "group": CONSUME_METRICS}


@dataclass(frozen=True)
class Goal:
    label: str
    read: Callable[[dict], float | None]
    target: float
    higher_is_better: bool
    entry: Callable[[dict], dict | None] | None = None  # the runs the figure comes from, which must be comparable


def _workload_goal(label: str, name: str, key: str, higher_is_better: bool) -> Goal:
    return Goal(label, lambda r: _workload_figure(r, name, key), 1.0, higher_is_better,
                lambda r: r.get("workloads", {}).get(name))


GOALS = [
    _workload_goal("produce 1 KB, 64 KB batches, acks=1 (MB/s)", "produce-1kb-batch64k-acks1-p10", "mb_per_s", True),
    _workload_goal("produce 1 KB, 64 KB batches, acks=all (MB/s)", "produce-1kb-batch64k-acksall-p10", "mb_per_s",
                   True),
    _workload_goal("consume 1 KB records, 10 partitions (MB/s fetching)", "consume-1kb-p10", "fetch_mb_per_s", True),
    _workload_goal("p99 produce-to-consume latency at 1000 rec/s, acks=1 (ms)", "latency-1kb-1000rps-acks1-p10",
                   "p99_ms", False),
    Goal("idle resident memory (MiB)", lambda r: r.get("idle", {}).get("rss_mib"), 0.2, False),
    Goal("start-up to first ApiVersions answer (s)", lambda r: r.get("startup", {}).get("median_s"), 0.1, False,
         lambda r: r.get("startup")),
]


# Issue 18 item 2: wirebroker's own broker CPU per small request, bounds in µs rather than ratios to Kafka.
PER_REQUEST_GOALS = [("Produce, one 1 KB record, acks=1, 8 connections", "ping-produce-1kb-c8", 100.0),
                     ("Fetch of one 1 KB record, 8 connections", "ping-fetch-1kb-c8", 80.0),
                     ("ApiVersions, 8 connections", "ping-apiversions-c8", 30.0)]


def _per_request_section(wb: dict, kafka: dict) -> list[str]:
    lines = ["## Broker CPU per small request (issue 18)", "",
             "| request | wirebroker µs | Kafka µs | bound (wirebroker) | met |", "|---|---|---|---|---|"]
    for label, name, bound in PER_REQUEST_GOALS:
        mine, theirs = (_workload_entry(r, name).get("cpu_us_per_request") for r in (wb, kafka))
        met = "" if mine is None else ("yes" if mine <= bound else "**no**")
        lines.append(f"| {label} | {_fmt(mine, 0)} | {_fmt(theirs, 0)} | ≤ {bound:g} | {met} |")
    return [*lines, ""]


def _workload_entry(result: dict, name: str) -> dict:
    return result.get("workloads", {}).get(name, {})


def _workload_figure(result: dict, name: str, key: str) -> float | None:
    return _workload_entry(result, name).get("figures", {}).get(key)


def load_results(out: Path) -> dict[str, dict]:
    return {kind: json.loads((out / f"{kind}.json").read_text()) for kind in NAMES if (out / f"{kind}.json").exists()}


def write(out: Path, report_path: Path) -> None:
    """Render the report and the chart from the result files in `out`."""
    results = load_results(out)
    chart_path = out / CHART_NAME
    draw_chart(results, chart_path)
    report_path.write_text(render(results, Path(os.path.relpath(chart_path, report_path.parent))))


def render(results: dict[str, dict], chart: Path) -> str:
    wb, kafka = results.get("wirebroker", {}), results.get("kafka", {})
    any_result = wb or kafka
    lines = ["# wirebroker against Apache Kafka 4.3.1: benchmark results", "",
             "Generated by `python -m bench` (bench/report.py); ratios are wirebroker / Kafka.", ""]
    lines += _setup_section(any_result, wb, kafka)
    lines += ["## Goals (issue 6)", "", "| goal | wirebroker | Kafka | ratio | target | met |", "|---|---|---|---|---|---|"]
    for goal in GOALS:
        mine, theirs = _safe(goal.read, wb), _safe(goal.read, kafka)
        ratio = _ratio(mine, theirs)
        met = "" if ratio is None else ("yes" if (ratio >= goal.target if goal.higher_is_better
                                                  else ratio <= goal.target) else "**no**")
        ratio_text = _fmt(ratio, 2)
        if goal.entry:
            ratio_text = ratio_cell(goal.entry(wb), goal.entry(kafka), ratio_text)
            met = "" if ratio_text != _fmt(ratio, 2) else met
        bound = "≥" if goal.higher_is_better else "≤"
        lines.append(f"| {goal.label} | {_fmt(mine, 2)} | {_fmt(theirs, 2)} | {ratio_text} | {bound} "
                     f"{goal.target:g} | {met} |")
    lines += ["", *_per_request_section(wb, kafka)]
    lines += [f"![throughput, latency, memory and start-up]({chart})", ""]
    lines += _workload_sections(wb, kafka)
    lines += _memory_section(wb, kafka)
    lines += ["", *quietness_section({k: r for k, r in results.items() if r}, NAMES)]
    for section in (BENCH_DIR / "results" / SPARK_READ_NAME, ANALYSIS_PATH):
        if section.exists():
            lines += ["", section.read_text().rstrip(), ""]
    return "\n".join(lines) + "\n"


def _setup_section(any_result: dict, wb: dict, kafka: dict) -> list[str]:
    machine = any_result.get("machine", {})
    return [
        "## Set-up", "",
        f"- Machine: {machine.get('cpus')} CPUs ({machine.get('cpu_model')}), Linux {machine.get('kernel')}, "
        f"Python {machine.get('python')}, {machine.get('java')}. **The load generator runs on the same "
        f"{machine.get('cpus')} cores as the broker** (and so do other processes on this shared machine): every "
        "figure is what broker and client together get out of those cores, not a broker alone on a dedicated host.",
        f"- Load generator: {machine.get('load_generator')}; the same tools, jars and settings for both brokers.",
        f"- Mode: {any_result.get('mode')}; wirebroker (commit {wb.get('machine', {}).get('wirebroker_commit', '?')}) "
        f"run {wb.get('started', 'not run')} with settings "
        f"{wb.get('settings') or 'its defaults'}; Kafka run {kafka.get('started', 'not run')} with settings "
        f"{kafka.get('settings') or 'default'} (single-node KRaft, `-Xmx1G -Xms1G` G1, as kafka-server-start.sh).",
        f"- Brokers and load ran at niceness {machine.get('niceness', 0)}; the machine's load average (1 min) was "
        f"{_load(wb)} for the wirebroker run and {_load(kafka)} for the Kafka run (other work on the shared cores).",
        f"- Rounds: {wb.get('rounds', 1)} for wirebroker, {kafka.get('rounds', 1)} for Kafka, the brokers taking turns; "
        "each figure is from the workload's median comparable round. A run during which other processes used more "
        "than the limit share of the cores (before or while it ran) was retried, and is marked not comparable "
        "when no try was quiet: no ratio is given for it (see the quietness section at the end).",
        "- MB = 2^20 bytes where Kafka's tools print MB/s; CPU per GB counts 10^9 record bytes into or out of the "
        "broker during the workload (user + system seconds of the broker process, all threads, from /proc).", ""]


def _load(result: dict) -> str:
    before, after = result.get("load_average_before"), result.get("load_average_after")
    if not before:
        return "–"
    return f"{before[0]:.1f} before, {after[0]:.1f} after" if after else f"{before[0]:.1f} before"


def _workload_sections(wb: dict, kafka: dict) -> list[str]:
    lines = ["## All workloads", "", "| workload | metric | wirebroker | Kafka | ratio |", "|---|---|---|---|---|"]
    names = list(dict.fromkeys([*wb.get("workloads", {}), *kafka.get("workloads", {})]))
    for name in names:
        mine, theirs = wb.get("workloads", {}).get(name), kafka.get("workloads", {}).get(name)
        kind = (mine or theirs)["params"]["kind"]
        for metric in METRICS_BY_KIND[kind] + COST_METRICS:
            a, b = _safe(metric.read, mine), _safe(metric.read, theirs)
            lines.append(f"| {name} | {metric.label} | {_fmt(a, metric.digits)} | {_fmt(b, metric.digits)} | "
                         f"{ratio_cell(mine, theirs, _fmt(_ratio(a, b), 2))} |")
        lines.append(f"| {name} | every round's {KEY_FIGURES[kind]}, others' share of the cores (✗ not counted) | "
                     f"{rounds_cell(mine)} | {rounds_cell(theirs)} | |")
    return lines + [""]


def _memory_section(wb: dict, kafka: dict) -> list[str]:
    rows = [("start-up median s (launch to first ApiVersions answer)", lambda r: r["startup"]["median_s"], 2),
            ("start-up runs s", None, 2),
            ("idle RSS MiB (after start-up and 5 s)", lambda r: r["idle"]["rss_mib"], 0),
            ("peak RSS MiB over the suite (VmHWM)", lambda r: r["end"]["hwm_mib"], 0)]
    lines = ["## Start-up and memory", "", "| figure | wirebroker | Kafka | ratio |", "|---|---|---|---|"]
    for label, read, digits in rows:
        if read is None:
            runs = [", ".join(_fmt(x, digits) for x in r.get("startup", {}).get("runs_s", [])) or "–"
                    for r in (wb, kafka)]
            lines.append(f"| {label} | {runs[0]} | {runs[1]} | |")
            continue
        a, b = _safe(read, wb), _safe(read, kafka)
        lines.append(f"| {label} | {_fmt(a, digits)} | {_fmt(b, digits)} | {_fmt(_ratio(a, b), 3)} |")
    return lines


def draw_chart(results: dict[str, dict], path: Path) -> None:
    """Six panels, one bar per broker: produce and consume MB/s, latency p99, ping requests/s, broker CPU per GB,
    idle RSS and start-up."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(20, 10))
    panels = [
        (axes[0][0], "produce MB/s (higher is better)", ("produce", "producers"), _figure("mb_per_s")),
        (axes[0][1], "consume MB/s while fetching (higher is better)", ("consume", "group"),
         _figure("fetch_mb_per_s")),
        (axes[0][2], "produce-to-consume p99 ms (lower is better)", ("latency", "e2e"), _figure("p99_ms")),
        (axes[1][0], "closed-loop requests/s (higher is better)", ("ping",), _figure("requests_per_s")),
        (axes[1][1], "broker CPU s per GB (lower is better)", ("produce", "consume", "producers", "group"),
         _entry("cpu_s_per_gb")),
    ]
    for ax, title, kinds, read in panels:
        names = list(dict.fromkeys(name for r in results.values() for name, e in r.get("workloads", {}).items()
                                   if e["params"]["kind"] in kinds))
        _bars(ax, title, names, {kind: [_safe(read, r.get("workloads", {}).get(n)) for n in names]
                                 for kind, r in results.items()})
    _bars(axes[1][2], "idle RSS MiB and start-up s ×100 (lower is better)", ["idle RSS MiB", "start-up s ×100"],
          {kind: [_safe(lambda r: r["idle"]["rss_mib"], r), _scaled(_safe(lambda r: r["startup"]["median_s"], r))]
           for kind, r in results.items()})
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _bars(ax, title: str, labels: list[str], series: dict[str, list[float | None]]) -> None:
    width = 0.8 / max(1, len(series))
    for i, (kind, values) in enumerate(series.items()):
        xs = [x + i * width for x in range(len(labels))]
        ax.bar(xs, [v or 0 for v in values], width, label=NAMES[kind])
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(labels))], labels, rotation=30,
                  ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def _scaled(value: float | None) -> float | None:
    return None if value is None else value * 100


def _safe(read: Callable[[dict], float | None], result: dict | None) -> float | None:
    if not result:
        return None
    try:
        return read(result)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def _ratio(mine: float | None, theirs: float | None) -> float | None:
    if mine is None or not theirs:
        return None
    return mine / theirs


def _fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"
