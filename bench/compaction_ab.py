"""Does the log cleaner cost producers and consumers their throughput? A compacted topic, cleaner on and off (issue 13).

    python -m bench.compaction_ab [--rounds N] [--records N] [--keys N] [--dirty-ratio R] [--io-max-bytes B]
                                  [--out DIR]

Each round runs both settings in turn (round-robin, so that the shared machine's changing load falls on both alike):
a fresh wirebroker, one compacted topic with 1 MiB segments and min.cleanable.dirty.ratio R (Kafka's default 0.5;
0.01 has the cleaner work all the time), log.cleaner.backoff.ms=100 (and log.cleaner.io.max.bytes.per.second B, the
operator's knob for the cleaner's share, when given), one confluent-kafka producer writing --records records of 100 bytes over
--keys keys as fast as it can, and one consumer reading from offset 0 at the same time until the producer's last
record. Figures per run: the producer's and the consumer's records/s, the topic's bytes on disk at the end, and the
CPU seconds (user + system, from /proc) of the broker process and of its log cleaner process (which cleans away from
the broker's interpreter) while the records went through. On a shared machine the records/s move with everything
else that runs; the broker's CPU seconds show what the cleaner costs the data path itself.
Writes <out>/compaction-ab-ratio<R>[-io<B>].json (every run) and .md (medians, and cleaner-on over cleaner-off).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat_tests.wirebroker_broker import Wirebroker

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
SETTINGS = {"cleaner-on": {"log.cleaner.enable": "true", "log.cleaner.backoff.ms": "100"},
            "cleaner-off": {"log.cleaner.enable": "false"}}
TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)}
VALUE = b"v" * 100
TOPIC = "table"


def run(setting: str, records: int, keys: int, dirty_ratio: float, io_max_bytes: float | None,
        work_dir: Path) -> dict:
    settings = dict(SETTINGS[setting])
    if io_max_bytes is not None and setting == "cleaner-on":
        settings["log.cleaner.io.max.bytes.per.second"] = str(io_max_bytes)
    broker = Wirebroker(work_dir, settings=settings).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        config = {**TOPIC_CONFIG, "min.cleanable.dirty.ratio": str(dirty_ratio)}
        admin.create_topics([NewTopic(TOPIC, 1, 1, config=config)])[TOPIC].result(10)
        consumed: dict = {}
        pid = broker.process.pid
        broker_cpu_before = cpu_seconds(pid)
        reader = threading.Thread(target=_consume, args=(broker.bootstrap, records - 1, consumed))
        reader.start()
        produce_s = _produce(broker.bootstrap, records, keys)
        reader.join()
        broker_cpu = cpu_seconds(pid) - broker_cpu_before
        cleaner_cpu = sum(cpu_seconds(child) for child in children(pid))
        disk = sum(p.stat().st_size for p in (work_dir / "data" / f"{TOPIC}-0").glob("*.log"))
    finally:
        broker.stop()
    return {"setting": setting, "records": records, "keys": keys, "dirty_ratio": dirty_ratio,
            "io_max_bytes_per_second": io_max_bytes,
            "load_average": os.getloadavg()[0],
            "produce_records_per_s": records / produce_s,
            "consume_records_per_s": consumed["last_offset"] / consumed["seconds"],
            "bytes_on_disk": disk, "broker_cpu_seconds": broker_cpu, "cleaner_process_cpu_seconds": cleaner_cpu}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The processes the broker's threads started (its log cleaner processes)."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def _produce(bootstrap: str, records: int, keys: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    start = time.monotonic()
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, VALUE, b"key-%d" % (i % keys))
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(60)
    return time.monotonic() - start


def _consume(bootstrap: str, last_offset: int, result: dict) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    start = time.monotonic()
    try:
        while True:
            message = consumer.poll(1)
            if message is not None and not message.error() and message.offset() == last_offset:
                break
    finally:
        consumer.close()
    result.update(last_offset=last_offset, seconds=time.monotonic() - start)


def report(runs: list[dict]) -> str:
    def median(setting: str, figure: str) -> float:
        return statistics.median(r[figure] for r in runs if r["setting"] == setting)
    rounds = len(runs) // len(SETTINGS)
    first = runs[0]
    title = (f"Medians of {rounds} round(s): {first['records']:,} records of {len(VALUE)} bytes over "
             f"{first['keys']:,} keys into one compacted partition (1 MiB segments, "
             f"min.cleanable.dirty.ratio {first['dirty_ratio']}, log.cleaner.io.max.bytes.per.second "
             f"{first['io_max_bytes_per_second'] or 'unlimited'}), "
             f"a consumer reading from offset 0 meanwhile. The machine ({os.cpu_count()} cores) was shared with "
             "other work; its 1-minute load average over the runs: "
             f"{min(r['load_average'] for r in runs):.1f} to {max(r['load_average'] for r in runs):.1f}.")
    lines = [title, "",
             "| figure | cleaner-on | cleaner-off | on / off |", "|---|---|---|---|"]
    for figure in ("produce_records_per_s", "consume_records_per_s", "bytes_on_disk", "broker_cpu_seconds"):
        on, off = median("cleaner-on", figure), median("cleaner-off", figure)
        lines.append(f"| {figure} | {on:,.{2 if on < 100 else 0}f} | {off:,.{2 if off < 100 else 0}f} | {on / off:.2f} |")
    lines.append(f"| cleaner_process_cpu_seconds | {median('cleaner-on', 'cleaner_process_cpu_seconds'):.2f} | - | - |")
    ratios = [on["produce_records_per_s"] / off["produce_records_per_s"]
              for on, off in zip(runs[::2], runs[1::2])]
    lines += ["", "Producer records/s on / off, round by round: " + ", ".join(f"{r:.2f}" for r in ratios)
              + f" (median {statistics.median(ratios):.2f})."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=2_000)
    parser.add_argument("--dirty-ratio", type=float, default=0.5)
    parser.add_argument("--io-max-bytes", type=float, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for setting in SETTINGS:
                runs.append(run(setting, args.records, args.keys, args.dirty_ratio, args.io_max_bytes,
                                Path(tmp) / f"{setting}-{round_}"))
                print(json.dumps(runs[-1]), file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"compaction-ab-ratio{args.dirty_ratio:g}"
    if args.io_max_bytes is not None:
        name += f"-io{int(args.io_max_bytes)}"
    (args.out / f"{name}.json").write_text(json.dumps(runs, indent=1) + "\n")
    text = report(runs)
    (args.out / f"{name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
