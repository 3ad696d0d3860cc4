"""In-process micro-benchmarks behind bench/ANALYSIS.md's proposals (no broker process, no network).

    python -m bench.micro append-ablation   # CPU µs per Log.append_as_leader, with one piece made free at a time
    python -m bench.micro frame-alloc       # a fresh bytearray per large request frame, on a non-main thread

append-ablation appends 1 KB (one record) and 16 KB (160 records of 100 B) batches to a fresh Log, as the produce
path does, and repeats with LogSegment.should_roll cut down to its size check, then with index entries skipped:
the difference bounds what making that piece cheap can save. frame-alloc allocates what
FrameReader._start_large_frame allocates for a 600-700 KB request (64 KB batches for 10 partitions), two alive at a
time, and prints µs and minor page faults per frame; run it again with MALLOC_TRIM_THRESHOLD_=268435456
MALLOC_MMAP_THRESHOLD_=8388608 in the environment to see glibc keep the memory.
"""

from __future__ import annotations

import logging
import os
import random
import resource
import statistics
import sys
import tempfile
import threading
import time
from typing import Callable

from wirebroker.log.config import LogConfig
from wirebroker.log.log import Log
from wirebroker.log.segment import LogSegment
from wirebroker.protocol.records import build_batch

APPENDS = 4000
REPEATS = 5
FRAMES = 3000
FRAME_SIZES = (600_000, 700_000)
FRAMES_ALIVE = 2  # a frame lives until its request is handled; the next one is read meanwhile

ABLATIONS: dict[str, dict[str, Callable]] = {
    "baseline": {},
    "should_roll -> size check only": {
        "should_roll": lambda self, config, max_ts, max_offset, size, now: self.size > config.segment_size - size},
    "index entries -> none": {"_add_index_entries": lambda self, offset, position: None},
}


def append_cpu_us(batch: bytes, appends: int = APPENDS) -> float:
    """CPU µs per append of `batch` (a fresh copy each time: offsets are assigned in place) to a fresh log."""
    with tempfile.TemporaryDirectory() as directory:
        log = Log.open(os.path.join(directory, "bench-0"), LogConfig.default())
        payloads = [bytearray(batch) for _ in range(appends)]
        started = time.process_time()
        for payload in payloads:
            log.append_as_leader(payload, leader_epoch=0)
        elapsed = time.process_time() - started
        log.close()
    return elapsed / appends * 1e6


def append_ablation() -> None:
    now = int(time.time() * 1000)
    batches = {"1 KB x 1": build_batch([(now, None, b"x" * 1000, ())]),
               "100 B x 160": build_batch([(now, None, b"x" * 100, ())] * 160)}
    originals = {name: getattr(LogSegment, name) for patch in ABLATIONS.values() for name in patch}
    try:
        for ablation, patch in ABLATIONS.items():
            for name, original in originals.items():
                setattr(LogSegment, name, patch.get(name, original))
            for label, batch in batches.items():
                runs = [append_cpu_us(batch) for _ in range(REPEATS)]
                print(f"{ablation:32s} {label:12s} median {statistics.median(runs):6.1f} µs CPU per append "
                      f"(min {min(runs):.1f})")
    finally:
        for name, original in originals.items():
            setattr(LogSegment, name, original)


def frame_alloc() -> None:
    result: list[tuple[float, float]] = []

    def allocate() -> None:
        rng = random.Random(1)
        sizes = [rng.randrange(*FRAME_SIZES) for _ in range(FRAMES)]
        alive: list[bytearray] = []
        faults_before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        started = time.perf_counter()
        for size in sizes:
            frame = bytearray(size)
            frame[-1] = 1
            alive.append(frame)
            if len(alive) > FRAMES_ALIVE:
                alive.pop(0)
        elapsed = time.perf_counter() - started
        faults = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - faults_before
        result.append((elapsed / FRAMES * 1e6, faults / FRAMES))

    thread = threading.Thread(target=allocate, name="like-a-network-thread")
    thread.start()
    thread.join()
    us, faults = result[0]
    print(f"{us:.1f} µs per {FRAME_SIZES[0] // 1000}-{FRAME_SIZES[1] // 1000} KB frame, {faults:.0f} minor page "
          f"faults per frame (MALLOC_TRIM_THRESHOLD_={os.environ.get('MALLOC_TRIM_THRESHOLD_', 'default')})")


COMMANDS = {"append-ablation": append_ablation, "frame-alloc": frame_alloc}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    logging.disable(logging.INFO)  # Log.open reports each load
    COMMANDS[argv[0]]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
