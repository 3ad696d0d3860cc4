"""Which thread counts should wirebroker default to? num.network.threads x num.io.threads, measured both ways.

    python -m bench.threads_experiment [--rounds N] [--configs net3-io8,net3-io0,...] [--only PATTERN] [--out DIR]

Runs a handful of the benchmark's workloads, scaled down (see SCALE), against wirebroker with each setting in turn,
round-robin for N rounds so that the shared machine's changing load falls on every setting alike, and keeps the
median of the rounds. num.io.threads=0 handles each request inline on the network thread that read it (no request
queue, no hand-off between threads); more threads only help if they overlap work that releases the GIL (disk and
socket I/O). Writes <out>/threads.json (every run) and <out>/threads.md (the medians, one row per setting).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import statistics
import sys
import tempfile
from pathlib import Path

from bench.runner import raise_priority, run_suite
from bench.workloads import Workload, select, suite
from compat_tests.reference_kafka import install_jars

DEFAULT_CONFIGS = ("net3-io8", "net3-io0", "net1-io0", "net1-io8", "net1-io2")
DEFAULT_OUT = Path(__file__).resolve().parent / "results"
# (workload, fraction of its full size): enough records to get past the load tool's JIT warm-up, small enough that
# every setting runs three times in ~15 minutes.
SCALE = {
    "produce-100b-default-acks1-p10": 1 / 6,
    "produce-1kb-batch64k-acks1-p10": 1 / 4,
    "consume-1kb-p10": 1 / 10,
    "latency-1kb-1000rps-acks1-p10": 1 / 2,
    "e2e-1kb-acks1-p1": 1 / 4,
    "ping-apiversions-c1": 1,
    "ping-produce-1kb-c1": 1,
    "ping-produce-1kb-c8": 1,
    "ping-fetch-1kb-c1": 1,
    "ping-fetch-1kb-c8": 1,
}
# The figures that rank the settings for each workload, and whether higher is better.
KEY_FIGURES = {
    "produce-100b-default-acks1-p10": ("records_per_s", True),
    "produce-1kb-batch64k-acks1-p10": ("mb_per_s", True),
    "consume-1kb-p10": ("fetch_mb_per_s", True),
    "latency-1kb-1000rps-acks1-p10": ("p99_ms", False),
    "e2e-1kb-acks1-p1": ("mean_ms", False),
    "ping-apiversions-c1": ("p50_us", False),
    "ping-produce-1kb-c1": ("p50_us", False),
    "ping-produce-1kb-c8": ("requests_per_s", True),
    "ping-fetch-1kb-c1": ("p50_us", False),
    "ping-fetch-1kb-c8": ("requests_per_s", True),
}


def scaled_workloads() -> list[Workload]:
    """The experiment's workloads: the full suite's, with fewer records (or seconds) by SCALE."""
    chosen = []
    for workload in suite("full"):
        if workload.name in SCALE:
            factor = SCALE[workload.name]
            chosen.append(dataclasses.replace(workload, num_records=int(workload.num_records * factor),
                                              seconds=workload.seconds * factor,
                                              warmup_s=workload.warmup_s * factor))
    return chosen


def settings_of(config: str) -> dict[str, str]:
    """"net3-io0" -> {"num.network.threads": "3", "num.io.threads": "0"}."""
    network, io = config.split("-")
    return {"num.network.threads": network.removeprefix("net"), "num.io.threads": io.removeprefix("io")}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    raise_priority(args.nice)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    configs = args.configs.split(",")
    jars = install_jars()
    workloads = select(scaled_workloads(), [p for spec in args.only for p in spec.split(",")])
    runs: dict[str, list[dict]] = {config: [] for config in configs}
    for round_number in range(args.rounds):
        for config in configs:
            logging.info("round %d, %s", round_number + 1, config)
            with tempfile.TemporaryDirectory(prefix=f"bench-threads-{config}-") as work_dir:
                runs[config].append(run_suite("wirebroker", workloads, Path(work_dir), jars, settings_of(config)))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "threads.json").write_text(json.dumps(runs, indent=2) + "\n")
    table = render(runs)
    (args.out / "threads.md").write_text(table)
    print(table)
    return 0


def render(runs: dict[str, list[dict]]) -> str:
    """One row per workload figure, one column per setting: medians over the rounds."""
    configs = list(runs)
    lines = ["| workload | figure | " + " | ".join(configs) + " |", "|---|---|" + "---|" * len(configs)]
    measured = {name for results in runs.values() for result in results for name in result["workloads"]}
    for name, (key, higher_is_better) in KEY_FIGURES.items():
        if name not in measured:
            continue
        cost = "cpu_us_per_request" if name.startswith("ping-") else "cpu_s_per_gb"
        for label, read in ((f"{key} ({'higher' if higher_is_better else 'lower'} is better)",
                             lambda e, key=key: e["figures"][key]),
                            (f"broker {cost} (lower is better)", lambda e, cost=cost: e[cost])):
            values = [_median(runs[config], name, read) for config in configs]
            lines.append(f"| {name} | {label} | " + " | ".join(f"{v:,.1f}" for v in values) + " |")
    rounds = max((len(r) for r in runs.values()), default=0)
    return f"Medians of {rounds} round(s), settings as num.network.threads-num.io.threads.\n\n" + "\n".join(lines) + "\n"


def _median(results: list[dict], name: str, read) -> float:
    return statistics.median(read(result["workloads"][name]) for result in results)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.threads_experiment", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--configs", default=",".join(DEFAULT_CONFIGS),
                        help="comma-separated netN-ioM settings (num.network.threads, num.io.threads)")
    parser.add_argument("--nice", type=int, default=0,
                        help="run brokers and load at this niceness (e.g. -10 on a shared machine; needs root)")
    parser.add_argument("--only", action="append", default=[], metavar="PATTERN",
                        help="only the workloads whose name matches (shell pattern; repeat or comma-separate)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser


if __name__ == "__main__":
    sys.exit(main())
