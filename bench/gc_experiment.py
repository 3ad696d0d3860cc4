"""Does the garbage collector make the tail of produce-to-consume latency? Thresholds compared, taking turns.

    python -m bench.gc_experiment [--thresholds 700,10,10 20000,10,10 ...] [--rounds 2] [--partitions 1000]

Per round and threshold setting: a fresh wirebroker under bench/gc_watch_broker.py, a topic of --partitions
partitions (the objects a broker that has served the suite's bigger workloads holds), then the suite's
latency-1kb-1000rps-acks1-p10 workload (bench/java/FixedRateLatency.java). Prints, per run, the latency
percentiles and, per generation, how many collections ran during the load and their median, p90 and longest pause.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.runner import run_workload
from bench.topics import create_topic
from bench.workloads import select, suite
from compat_tests.reference_kafka import install_jars
from compat_tests.wirebroker_broker import Wirebroker

WORKLOAD = "latency-1kb-1000rps-acks1-p10"
SETTLE_S = 2.0  # the watcher writes each second: wait for the collections of set-up, and after the load for its last


class _WatchedBroker(Wirebroker):
    def __init__(self, work_dir: Path, thresholds: str) -> None:
        super().__init__(work_dir)
        self.gc_log = work_dir / "gc.json"
        self.thresholds = thresholds

    def command(self) -> list[str]:
        cmd = super().command()
        cmd[cmd.index("wirebroker")] = "bench.gc_watch_broker"
        return cmd

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "GC_LOG": str(self.gc_log), "GC_THRESHOLD": self.thresholds}

    def collections(self) -> dict:
        return json.loads(self.gc_log.read_text())


def run(thresholds: str, partitions: int, jars: Path) -> str:
    workload = select(suite("full"), [WORKLOAD])[0]
    with tempfile.TemporaryDirectory(prefix="gc-experiment-") as work_dir:
        with _WatchedBroker(Path(work_dir), thresholds) as broker:
            if partitions:
                create_topic(broker.bootstrap, "held", partitions)
            time.sleep(SETTLE_S)
            before = broker.collections()["count"]
            figures = run_workload(workload, broker.bootstrap, broker.process.pid, jars, topic="latency")["figures"]
            time.sleep(SETTLE_S)
            after = broker.collections()
    during = after["pauses"][-(after["count"] - before):] if after["count"] > before else []
    line = (f"{thresholds:>14}  p50 {figures['p50_ms']:.2f}  p99 {figures['p99_ms']:.2f}  "
            f"p99.9 {figures['p999_ms']:.2f} ms;")
    for generation in (0, 1, 2):
        pauses = sorted(ms for gen, ms in during if gen == generation)
        if pauses:
            line += (f"  gen{generation} {len(pauses)} x median {pauses[len(pauses) // 2]:.2f} "
                     f"p90 {pauses[int(len(pauses) * 0.9)]:.2f} max {pauses[-1]:.1f} ms")
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--thresholds", nargs="+", default=["700,10,10", "20000,10,10"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args(argv)
    jars = install_jars()
    for round_ in range(args.rounds):
        for thresholds in args.thresholds if round_ % 2 == 0 else args.thresholds[::-1]:
            print(f"round {round_ + 1}: {run(thresholds, args.partitions, jars)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
