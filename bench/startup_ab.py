"""`wirebroker` with no config: the ready-in of two (or more) source trees, started in turn.

    python -m bench.startup_ab TREE_A TREE_B [TREE ...] [--starts N] [--json FILE]

Ready-in is what the bench `startup` workload measures: from launching `python -m wirebroker` to its first
ApiVersions answer, here probed every millisecond (the workload's 10 ms poll would round the figure). Each start
runs the default configuration (localhost listeners on 127.0.0.1 and ::1, ./wirebroker-data in a fresh working
directory); only the port differs, so that another broker on 9092 does not matter. Each round starts every tree
once, in an order that rotates from one round to the next (A B, then B A), so that load from other
work on the machine and any drift hit every tree alike; each tree is byte-compiled
first (a missing or stale .pyc costs hundreds of ms, and PYTHONDONTWRITEBYTECODE stops the broker writing them).
Beside it: the CPU time the broker's threads ran until that answer (on a machine shared with other work, the
wall clock stretches with the load; the CPU time far less), and the broker's own "ready in N ms" (from main() on:
interpreter start and the cli's imports not counted).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compat_tests.brokers import api_versions_answers
from wirebroker.network.ports import free_port

PROBE_POLL_S = 0.001
START_TIMEOUT_S = 30.0
SETTLE_S = 0.2  # between starts: the previous broker's shutdown is off the cores
_READY_LINE = re.compile(rb"ready in (\d+) ms")


def compile_tree(tree: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "wirebroker")], check=True)


def one_start(tree: Path) -> dict[str, float]:
    """Launch the tree's broker in a fresh directory; ms to its first ApiVersions answer and its own figure."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="startup-ab-") as work:
        out_path = Path(work) / "broker.out"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        load = os.getloadavg()[0]
        with open(out_path, "wb") as out:
            launched = time.perf_counter()
            process = subprocess.Popen([sys.executable, "-m", "wirebroker", "-o",
                                        f"listeners=PLAINTEXT://localhost:{port}"],
                                       cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                while not api_versions_answers("127.0.0.1", port):
                    if process.poll() is not None or time.perf_counter() - launched > START_TIMEOUT_S:
                        raise RuntimeError(f"{tree}: no ApiVersions answer:\n{out_path.read_text(errors='replace')}")
                    time.sleep(PROBE_POLL_S)
                ready_ms = (time.perf_counter() - launched) * 1000
                cpu_ms = _cpu_ms(process.pid)
            finally:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(20)
        own = _READY_LINE.search(out_path.read_bytes())
        return {"ready_ms": ready_ms, "cpu_ms": cpu_ms, "own_ms": float(own.group(1)) if own else float("nan"),
                "load1": load}


def _cpu_ms(pid: int) -> float:
    """CPU time the process's threads have run so far (/proc/<pid>/task/*/schedstat, in ns): what a start costs,
    far less moved by other work on the machine than the wall clock."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
            continue
    return total / 1e6


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p90": p90, "min": ordered[0], "n": len(ordered)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path, help="two or more source trees (each holding wirebroker/)")
    parser.add_argument("--starts", type=int, default=16, help="starts of each tree")
    parser.add_argument("--json", type=Path, help="write every start here")
    args = parser.parse_args(argv)
    trees = [tree.resolve() for tree in args.trees]
    for tree in trees:
        compile_tree(tree)
    runs: dict[str, list[dict[str, float]]] = {str(tree): [] for tree in trees}
    for tree in trees:  # warm the page cache with each tree's files; not counted
        one_start(tree)
    for round_ in range(args.starts):
        for tree in trees[round_ % len(trees):] + trees[:round_ % len(trees)]:
            runs[str(tree)].append(one_start(tree))
            time.sleep(SETTLE_S)
    for tree in trees:
        starts = runs[str(tree)]
        ready, cpu = summary([r["ready_ms"] for r in starts]), summary([r["cpu_ms"] for r in starts])
        own = summary([r["own_ms"] for r in starts])
        print(f"{tree}: ready-in median {ready['median']:.1f} ms, p90 {ready['p90']:.1f}, min {ready['min']:.1f} "
              f"(n={ready['n']}); CPU to ready median {cpu['median']:.1f} ms, p90 {cpu['p90']:.1f}; "
              f"own 'ready in' median {own['median']:.0f} ms")
    loads = [r["load1"] for starts in runs.values() for r in starts]
    print(f"1-minute load average during the starts: {min(loads):.2f} to {max(loads):.2f} "
          f"(median {statistics.median(loads):.2f}) on {os.cpu_count()} cores")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
