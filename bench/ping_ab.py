"""Broker CPU per request of two (or more) wirebroker source trees, taking turns: did a change to the request path pay?

    git archive BASE | tar -x -C /tmp/base            # the build to compare against, outside the working tree
    python -m bench.ping_ab /tmp/base . [--chunks 9] [--case produce:8:1000 --case api_versions:8:2000 ...]
                                        [--override num.io.threads=8 ...]

Each case is API:CONNECTIONS:REQUESTS[:RECORD_BYTES] (bench/ping.py: `api_versions`, `produce` or `fetch`; REQUESTS
round trips per connection make one chunk; RECORD_BYTES, 1000 by default, sizes the one record a produce sends or a
fetch reads: produce:2:100:300000 exercises frames that arrive in many reads). --override sets a broker config key
on every tree's broker. Per case, one broker per tree starts (`python -m wirebroker` run inside that tree, a
fresh log dir each), gets the topic and a warm-up ping; then the trees take turns chunk by chunk (the order flipping
every chunk), and each chunk's broker CPU time (user + system, all threads, from /proc) is divided by its requests.
Turns that short let the shared machine's changing load fall on every tree alike, which fresh brokers run one after
the other did not (the same build measured 58 and 119 µs per fetch within two minutes at load 5-6). Prints the
median per case and tree, the spread of its chunks, the median of each round's ratio to the first tree (robust to
load that drifts between rounds), and the 1-minute load average over the case.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bench import ping
from bench.procstats import cpu_seconds
from bench.topics import create_topic
from compat_tests.wirebroker_broker import Wirebroker

DEFAULT_CASES = ("produce:8:1000", "api_versions:8:2000", "fetch:8:1500")
WARMUP_REQUESTS = 300  # per connection, before the CPU reading starts (imports, caches, the first segment)
TOPIC = "ping-ab"


class _TreeBroker(Wirebroker):
    """wirebroker run from `tree` (its own package, not the installed one)."""

    def __init__(self, work_dir: Path, tree: Path, settings: Mapping[str, str] | None = None) -> None:
        super().__init__(work_dir, settings=settings)
        self.tree = tree

    def cwd(self) -> Path:
        return self.tree

    def environment(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.tree)}


def measure(trees: list[Path], api: str, connections: int, requests: int, chunks: int, record_size: int = 1000,
            settings: Mapping[str, str] | None = None) -> dict[Path, list[float]]:
    """Per tree, the broker CPU µs per request of each of `chunks` timed pings, the trees taking turns."""
    with contextlib.ExitStack() as stack:
        brokers = {}
        for tree in trees:
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ping-ab-")))
            brokers[tree] = stack.enter_context(_TreeBroker(work_dir, tree, settings))
            create_topic(brokers[tree].bootstrap, TOPIC, 1)
            ping.ping(brokers[tree].bootstrap, api, TOPIC, WARMUP_REQUESTS, connections, record_size)
        per_request: dict[Path, list[float]] = {tree: [] for tree in trees}
        for chunk in range(chunks):
            for tree in trees if chunk % 2 == 0 else trees[::-1]:
                pid = brokers[tree].process.pid
                before = cpu_seconds(pid)
                figures = ping.ping(brokers[tree].bootstrap, api, TOPIC, requests, connections, record_size)
                per_request[tree].append((cpu_seconds(pid) - before) / figures["requests_sent"] * 1e6)
    return per_request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="source trees holding a wirebroker package")
    parser.add_argument("--chunks", type=int, default=9, help="timed pings per tree and case")
    parser.add_argument("--case", action="append", help="API:CONNECTIONS:REQUESTS[:RECORD_BYTES] (repeatable)")
    parser.add_argument("--override", action="append", default=[], help="KEY=VALUE broker setting (repeatable)")
    args = parser.parse_args(argv)
    trees = [tree.resolve() for tree in args.trees]
    settings = dict(item.split("=", 1) for item in args.override)
    for case in args.case or DEFAULT_CASES:
        api, connections, requests, *record_size = case.split(":")
        load_before = os.getloadavg()[0]
        per_request = measure(trees, api, int(connections), int(requests), args.chunks,
                              int(record_size[0]) if record_size else 1000, settings)
        load = f"load {load_before:.1f}-{os.getloadavg()[0]:.1f}"
        first = per_request[trees[0]]
        for tree, figures in per_request.items():
            # Each round's ratio to the first tree: the trees of a round ran seconds apart, under the same load.
            ratio = statistics.median(figure / base for figure, base in zip(figures, first))
            print(f"{case:20} {tree!s:24} median {statistics.median(figures):6.1f} µs/request "
                  f"(chunks {min(figures):.1f}-{max(figures):.1f}, {load}); "
                  f"median round ratio to the first {ratio:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
