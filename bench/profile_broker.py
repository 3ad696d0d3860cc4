"""Profile a wirebroker process under one of the benchmark's workloads, and summarise where its time goes.

    python -m bench.profile_broker WORKLOAD [--quick] [--profiler py-spy|yappi] [--seconds S] [--gil] [--lines]
                                            [--override KEY=VALUE ...] [--tag TAG] [--out DIR] [--top N]

Starts wirebroker (fresh log dir, the overrides given) and runs the workload's load exactly as `python -m bench`
does, while profiling the broker:
  py-spy (default)  samples the running broker (`py-spy record --format raw`, 200 samples/s) for --seconds;
                    --gil keeps only the thread holding the GIL (where the interpreter's time goes, which bounds a
                    CPU-bound broker; without it idle threads waiting on queues fill the table); --lines splits
                    functions by source line. Writes <out>/<stem>.folded (collapsed stacks for flame graph tools).
  yappi             runs the broker under bench/yappi_broker.py (deterministic, all threads, CPU clock) for the
                    whole workload: exact call counts, so the table also says how many calls each request makes
                    (per Dispatcher call). Several times slower than the broker alone: read shares, not rates.
                    Writes <out>/<stem>.pstats.
Prints, and writes as <out>/<stem>.txt, the load tool's figures and the top functions by self time and by total
time as shares of the whole.
"""

from __future__ import annotations

import argparse
import collections
import logging
import pstats
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench.runner import fill_topic, parse_settings, run_load
from bench.topics import create_topic
from bench.workloads import suite
from compat_tests.reference_kafka import install_jars
from compat_tests.wirebroker_broker import Wirebroker

SAMPLE_RATE_HZ = 200
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "profiles"
DEFAULT_TOP = 30
# The function that runs once per request whatever the API: the denominator of "calls per request".
PER_REQUEST_FUNCTION = "Dispatcher.__call__"


class YappiWirebroker(Wirebroker):
    """wirebroker started through bench/yappi_broker.py, which saves a pstats profile at shutdown."""

    def __init__(self, work_dir: Path, pstats_path: Path, **kwargs) -> None:
        super().__init__(work_dir, **kwargs)
        self.pstats_path = pstats_path

    def command(self) -> list[str]:
        python, _module_flag, _module, *broker_args = super().command()
        return [python, "-m", "bench.yappi_broker", str(self.pstats_path), *broker_args]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    (workload,) = [w for w in suite("quick" if args.quick else "full") if w.name == args.workload]
    jars = install_jars()
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "-".join([args.workload, args.profiler, *(["gil"] if args.gil else []), *(["lines"] if args.lines else []),
                     *([args.tag] if args.tag else [])])
    settings = parse_settings(args.override)
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as work_dir:
        if args.profiler == "yappi":
            pstats_path = args.out / f"{stem}.pstats"
            broker = YappiWirebroker(Path(work_dir), pstats_path, settings=settings)
            with broker:
                figures = _load(workload, broker.bootstrap, jars)
            summary = summarise_pstats(pstats_path, args.top)
        else:
            folded = args.out / f"{stem}.folded"
            with Wirebroker(Path(work_dir), settings=settings) as broker:
                figures: dict = {}
                loader = threading.Thread(target=lambda: figures.update(_load(workload, broker.bootstrap, jars)))
                loader.start()
                record(broker.process.pid, folded, args.seconds, args.gil, args.lines)
                loader.join()
            summary = summarise_folded(folded.read_text(), args.top)
    text = f"{stem} {settings or ''}\n{figures}\n\n{summary}"
    (args.out / f"{stem}.txt").write_text(text)
    print(text)
    return 0


def _load(workload, bootstrap: str, jars: Path) -> dict:
    create_topic(bootstrap, workload.name, workload.partitions)
    if workload.kind == "consume":
        fill_topic(workload, bootstrap, jars, workload.name)
    return run_load(workload, bootstrap, jars, workload.name)


def record(pid: int, folded: Path, seconds: float, gil_only: bool, lines: bool) -> None:
    """py-spy record of a running process for `seconds`, as collapsed stacks (per function, or per line)."""
    cmd = ["py-spy", "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", str(SAMPLE_RATE_HZ),
           "--format", "raw", "--output", str(folded)]
    if gil_only:
        cmd.append("--gil")
    if not lines:
        cmd.append("--nolineno")
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def summarise_folded(folded: str, top: int = DEFAULT_TOP) -> str:
    """Tables of the `top` functions by self and by total share of the samples in collapsed-stack text."""
    self_counts: collections.Counter[str] = collections.Counter()
    total_counts: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in folded.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = stack.split(";")
        samples += count
        self_counts[frames[-1]] += count
        for frame in set(frames):
            total_counts[frame] += count
    lines = [f"{samples} samples"]
    for title, counts in (("self", self_counts), ("total", total_counts)):
        lines += ["", f"{title:>6}  function"]
        lines += [f"{100 * n / samples:5.1f}%  {frame}" for frame, n in counts.most_common(top)]
    return "\n".join(lines) + "\n"


def summarise_pstats(path: Path, top: int = DEFAULT_TOP) -> str:
    """Tables of the `top` functions by self and by total CPU time, with calls per request, from a yappi profile."""
    stats = pstats.Stats(str(path)).stats  # {(file, line, name): (primitive calls, calls, self, total, callers)}
    requests = max((calls for (_file, _line, name), (_, calls, *_rest) in stats.items()
                    if name == PER_REQUEST_FUNCTION), default=0)
    rows = [(_short(file, name), calls, self_s, total_s) for (file, _line, name), (_, calls, self_s, total_s, _)
            in stats.items()]
    grand_total = sum(self_s for _, _, self_s, _ in rows)
    lines = [f"{grand_total:.1f} CPU s profiled, {requests} requests ({PER_REQUEST_FUNCTION} calls), "
             f"{sum(calls for _, calls, _, _ in rows) / max(1, requests):.0f} Python calls per request"]
    for title, key in (("self", 2), ("total", 3)):
        lines += ["", f"{title:>6}  calls/request  function"]
        for row in sorted(rows, key=lambda r: r[key], reverse=True)[:top]:
            per_request = f"{row[1] / requests:13.2f}" if requests else f"{row[1]:13d}"
            lines.append(f"{100 * row[key] / grand_total:5.1f}%  {per_request}  {row[0]}")
    return "\n".join(lines) + "\n"


def _short(file: str, name: str) -> str:
    """A function's name with its file relative to the package (wirebroker/log/log.py), as py-spy prints it."""
    marker = "/wirebroker/"
    where = "wirebroker/" + file.split(marker, 1)[1] if marker in file else Path(file).name
    return f"{name} ({where})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_broker", description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a workload name from `python -m bench` (e.g. produce-1kb-batch64k-acks1-p10)")
    parser.add_argument("--quick", action="store_true", help="the quick mode's size of the workload")
    parser.add_argument("--profiler", choices=("py-spy", "yappi"), default="py-spy")
    parser.add_argument("--seconds", type=float, default=15.0, help="how long py-spy samples")
    parser.add_argument("--gil", action="store_true", help="py-spy: sample only the thread holding the GIL")
    parser.add_argument("--lines", action="store_true", help="py-spy: one entry per source line, not per function")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a wirebroker setting, e.g. num.io.threads=0")
    parser.add_argument("--tag", default="", help="a suffix for the output files (e.g. io0)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--top", type=int, default=DEFAULT_TOP)
    return parser


if __name__ == "__main__":
    sys.exit(main())
