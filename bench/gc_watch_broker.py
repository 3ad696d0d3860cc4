"""`python -m bench.gc_watch_broker [wirebroker arguments]`: wirebroker that records its garbage collections.

An experiment's launcher (bench/gc_experiment.py), not a broker feature. Every collection's generation and pause
(ms, GIL held) is kept, and written as JSON to $GC_LOG each second: {"pauses": [[gen, ms], ...], "count": n}.
$GC_THRESHOLD ("700,10,10") replaces the thresholds the broker sets.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time

from wirebroker import cli

WRITE_EVERY_S = 1.0
KEPT_PAUSES = 20_000


def watch(path: str) -> None:
    pauses: list[tuple[int, float]] = []
    started = [0.0]

    def on_collection(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], (time.perf_counter() - started[0]) * 1000))

    def write() -> None:
        while True:
            time.sleep(WRITE_EVERY_S)
            count = len(pauses)
            with open(path + ".tmp", "w") as out:
                json.dump({"pauses": pauses[-KEPT_PAUSES:], "count": count}, out)
            os.replace(path + ".tmp", path)

    gc.callbacks.append(on_collection)
    threading.Thread(target=write, daemon=True).start()


def main(argv: list[str]) -> int:
    watch(os.environ["GC_LOG"])
    if os.environ.get("GC_THRESHOLD"):
        thresholds = tuple(int(t) for t in os.environ["GC_THRESHOLD"].split(","))
        cli.tune_garbage_collector = lambda: gc.set_threshold(*thresholds)
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
