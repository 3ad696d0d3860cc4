"""A broker per test: how long `wirebroker.Broker` takes to start and to tear down (issue 15).

    python -m bench.embedded_startup [--starts N] [--process-starts N] [--out DIR]

Each start is a fresh `Broker()` (a free port, a new temporary data directory), timed from the call to `start()`
until it returns (listening, every layer up), and its teardown from the call to `stop()` until the broker is shut
down and its directory deleted; before stopping, one produce and one read prove it serves. In-process (threads)
N times, then as a child process (`process=True`, ready at its start-up line) --process-starts times. The imports
that the first in-process start pays once per interpreter are timed apart. Writes <out>/embedded-startup.json
(every start) and .md (median, p99 and max per mode).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import time
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def time_starts(count: int, process: bool) -> list[dict[str, float]]:
    from wirebroker.embedded import Broker

    runs = []
    for _ in range(count):
        broker = Broker(process=process)
        started = time.perf_counter()
        broker.start()
        ready = time.perf_counter()
        assert broker.read("probe", from_offset=broker.produce("probe", [b"x"])[0]) == [(0, None, b"x")]
        stopping = time.perf_counter()
        broker.stop()
        stopped = time.perf_counter()
        assert not broker.root.exists()
        runs.append({"start_ms": (ready - started) * 1000, "stop_ms": (stopped - stopping) * 1000})
    return runs


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p99": p99, "max": ordered[-1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=100, help="in-process starts")
    parser.add_argument("--process-starts", type=int, default=20, help="child-process starts")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    began = time.perf_counter()
    for module in ("wirebroker.embedded", "wirebroker.server.broker"):
        importlib.import_module(module)
    imports_ms = (time.perf_counter() - began) * 1000
    results = {"machine": {"cpus": os.cpu_count(), "load_1m": os.getloadavg()[0]}, "imports_ms": imports_ms,
               "thread": time_starts(args.starts, process=False),
               "process": time_starts(args.process_starts, process=True)}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "embedded-startup.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# Embedded broker: start-up and teardown (`python -m bench.embedded_startup`)", "",
             (f"{results['machine']['cpus']} CPUs, load {results['machine']['load_1m']:.1f} at the start; the "
              f"broker's imports, once per interpreter: {imports_ms:.0f} ms."), "",
             "| mode | starts | start median | start p99 | start max | stop median | stop p99 | stop max |",
             "|---|---|---|---|---|---|---|---|"]
    for mode in ("thread", "process"):
        runs = results[mode]
        if not runs:
            continue
        start = summary([run["start_ms"] for run in runs])
        stop = summary([run["stop_ms"] for run in runs])
        lines.append(f"| {mode} | {len(runs)} | " + " | ".join(
            f"{figures[key]:.0f} ms" for figures in (start, stop) for key in ("median", "p99", "max")) + " |")
    (args.out / "embedded-startup.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
