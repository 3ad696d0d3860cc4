"""Reading a topic with Spark: the wirebroker data source over the log dir against Spark's Kafka connector through
the broker (issue 16), same Spark, same machine, one run each.

    python -m bench.spark_read                      # the issue's size: 1 GiB of 1 KiB records over 4 partitions
    python -m bench.spark_read --mib 200            # a smaller topic (what this shared 2-core machine can afford)

A wirebroker broker on a free port takes the topic (librdkafka producer, no compression, acks=1); once its high
watermark checkpoint covers every record, one local[2] SparkSession reads the whole topic with each source,
`count(*)` and `sum(length(key) + length(value))`, so that every row is materialised. Each source first reads a small
range to warm up. Rows/s and MB/s (record key + value bytes, 10^6) are per source; the ratio is data source /
connector. Writes results/spark-read.json and results/spark-read.md, and replaces that section of RESULTS.md. pyspark comes from compat_tests/spark_session.py (the compat harness's cached venv).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from bench import report
from bench.topics import create_topic
from compat_tests.wirebroker_broker import Wirebroker

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
REPORT_PATH = BENCH_DIR / "RESULTS.md"
RECORD_BYTES = 1024
KEY_BYTES = 16
TOPIC = "spark-read"
SECTION_HEADING = "## Spark reads a topic: the wirebroker data source against the Kafka connector (issue 16)"
# The data source reads what the high watermark checkpoint covers: make it fresh from the broker's start.
FRESH_CHECKPOINTS = {"replica.high.watermark.checkpoint.interval.ms": 500, "log.initial.task.delay.ms": 0}


def produce(bootstrap: str, partitions: int, records: int) -> int:
    """`records` records of RECORD_BYTES (key + value), spread round-robin; the key + value bytes sent."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 20, "batch.size": 262144,
                         "queue.buffering.max.kbytes": 262144})
    values = [os.urandom(RECORD_BYTES - KEY_BYTES) for _ in range(64)]
    for i in range(records):
        while True:
            try:
                producer.produce(TOPIC, key=b"%016d" % i, value=values[i % len(values)], partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300):
        raise RuntimeError("records left unsent after 300 s")
    return records * RECORD_BYTES


def wait_for_checkpoint(data_dir: Path, partitions: int, records: int, timeout: float = 120) -> None:
    from wirebroker.spark.log_view import LogDirectories

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log_dirs = LogDirectories([str(data_dir)])
        if sum(log_dirs.partition(tp).high_watermark for tp in log_dirs.topic_partitions() if tp.topic == TOPIC) \
                >= records:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the high watermark checkpoint did not cover {records} records in {timeout:.0f} s")


def timed_read(spark, fmt: str, options: dict[str, str]) -> dict[str, float]:
    from pyspark.sql import functions as F

    reader = spark.read.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, value)
    frame = reader.load()
    started = time.perf_counter()
    row = frame.agg(F.count("*").alias("rows"),
                    F.sum(F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0)))
                    .alias("bytes")).first()
    seconds = time.perf_counter() - started
    return {"rows": row["rows"], "bytes": row["bytes"], "seconds": seconds, "rows_per_s": row["rows"] / seconds,
            "mb_per_s": row["bytes"] / seconds / 1e6}


def run(mib: float, partitions: int) -> dict:
    from compat_tests.spark_session import start_session

    records = int(mib * 1024 * 1024) // RECORD_BYTES
    with tempfile.TemporaryDirectory(prefix="spark-read-") as work, \
            Wirebroker(Path(work), settings=FRESH_CHECKPOINTS) as broker:
        data_dir = Path(work) / "data"
        create_topic(broker.bootstrap, TOPIC, partitions)
        started = time.perf_counter()
        produced = produce(broker.bootstrap, partitions, records)
        produce_seconds = time.perf_counter() - started
        wait_for_checkpoint(data_dir, partitions, records)
        spark = start_session("wirebroker-bench-spark-read")
        try:
            sources = {
                "wirebroker data source": ("wirebroker", {"path": str(data_dir), "subscribe": TOPIC}),
                "spark-sql-kafka connector": ("kafka", {"kafka.bootstrap.servers": broker.bootstrap,
                                                        "subscribe": TOPIC}),
            }
            warm_up = json.dumps({TOPIC: {str(p): 1000 for p in range(partitions)}})
            for fmt, options in sources.values():
                timed_read(spark, fmt, {**options, "endingOffsets": warm_up})
            figures = {name: timed_read(spark, fmt, options) for name, (fmt, options) in sources.items()}
        finally:
            spark.stop()
    for figure in figures.values():
        if figure["rows"] != records:
            raise RuntimeError(f"a source read {figure['rows']} rows of {records}")
    ours, theirs = figures["wirebroker data source"], figures["spark-sql-kafka connector"]
    return {"mib": mib, "partitions": partitions, "record_bytes": RECORD_BYTES, "records": records,
            "produced_bytes": produced, "produce_seconds": produce_seconds, "spark": "pyspark 4.2.0, local[2]",
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_before": os.getloadavg()}, "figures": figures,
            "ratio_rows_per_s": ours["rows_per_s"] / theirs["rows_per_s"]}


def markdown(result: dict) -> str:
    lines = [SECTION_HEADING, "",
             (f"`python -m bench.spark_read --mib {result['mib']:g}`: {result['records']:,} records of "
              f"{result['record_bytes']} bytes ({result['mib']:g} MiB) over {result['partitions']} partitions, read "
              f"whole by one {result['spark']} session on this {result['machine']['cpus']}-core machine (load "
              f"{result['machine']['load_before'][0]:.1f} before the run); one run each, after a warm-up read."), "",
             "| source | rows/s | MB/s | seconds |", "|---|---|---|---|"]
    for name, figure in result["figures"].items():
        lines.append(f"| {name} | {figure['rows_per_s']:,.0f} | {figure['mb_per_s']:.1f} | {figure['seconds']:.1f} |")
    lines += ["", f"Ratio data source / connector: **{result['ratio_rows_per_s']:.2f}** (rows/s; MB/s alike).", ""]
    return "\n".join(lines)


def update_report_section(section: str) -> None:
    """Replace this benchmark's section of RESULTS.md in place; the rest stays as `python -m bench` last rendered it
    (bench/report.py includes results/spark-read.md in the next rendering, or here when the section is new)."""
    text = REPORT_PATH.read_text()
    start = text.find(SECTION_HEADING)
    if start < 0:
        text = report.render(report.load_results(RESULTS_DIR), Path(RESULTS_DIR.name) / report.CHART_NAME)
    else:
        end = text.find("\n## ", start + len(SECTION_HEADING))
        text = text[:start] + section.rstrip() + "\n" + (text[end:] if end >= 0 else "")
    REPORT_PATH.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=1024, help="topic size in MiB (default %(default)g: 1 GiB)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    result = run(args.mib, args.partitions)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "spark-read.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / report.SPARK_READ_NAME).write_text(markdown(result))
    if args.out == RESULTS_DIR:
        update_report_section(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
