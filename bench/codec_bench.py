"""Codec benchmark: wirebroker's generated message classes against kafka-python 3's codecs, on the same messages.

    python bench/codec_bench.py [--repeat N] [--output PATH]

Three messages a broker handles on its hot paths:

- a Produce v9 request: one partition carrying a 16 KiB record batch (the batch stays opaque bytes); decoded twice
  on wirebroker's side: into the full ProduceRequest (what clients and tools use) and flat, as the broker reads it
  (FlatProduceRequest, protocol/codegen/flat.py: one (topic, partition, records) tuple per partition, every byte
  read and checked as by the full reader, nothing deferred);
- a Fetch v12 response: one topic, 50 partitions, each with a small records payload;
- a Metadata v12 response: 100 topics x 10 partitions, three brokers.

Each message is built once with wirebroker's classes and encoded; kafka-python decodes those bytes into its own
object, and the script checks that kafka-python encodes that object to the very same bytes, so both sides time the
same work. Then decode (bytes -> object) and encode (object -> bytes) are timed timeit-style on each side: the loop
count is calibrated to ~0.2 s, the four timings of a message take turns for N rounds, and each reports the median of
its rounds (the best round is kept beside it).
Time is the process's CPU time, not wall time, and the garbage collector is off while timing (timeit's default), so
that other processes on a shared machine disturb the numbers as little as possible; taking turns spreads what
disturbance is left over both sides alike.

Prints a table of operations per second and the wirebroker/kafka-python ratio, and writes the numbers as JSON to
bench/results/codec.json (schema: {"python", "kafka_python", "goal_ratio", "repeat", "load_average_before",
"load_average_after", "cases": [{"name", "bytes", "wirebroker": {"decode_ops", "encode_ops", "decode_best_ops",
"encode_best_ops"}, "kafka_python": {...}, "ratio": {"decode", "encode"}}]}: ops are medians, ratios are of the
medians; the load averages are the 1-minute figures, to judge how quiet the machine was).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import timeit
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import kafka
from kafka.protocol.consumer import FetchResponse as KpFetchResponse
from kafka.protocol.metadata import MetadataResponse as KpMetadataResponse
from kafka.protocol.producer import ProduceRequest as KpProduceRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `python bench/codec_bench.py` from a checkout

from wirebroker.protocol.messages.fetch import FetchResponse  # noqa: E402
from wirebroker.protocol.messages.metadata import MetadataResponse  # noqa: E402
from wirebroker.protocol.messages.produce import FlatProduceRequest, ProduceRequest  # noqa: E402

GOAL_RATIO = 3.0  # the speed-up over kafka-python the generated codecs aim for
BATCH_BYTES = 16 * 1024
FETCH_PARTITIONS = 50
FETCH_RECORDS_BYTES = 120  # about one small record batch
METADATA_TOPICS = 100
METADATA_PARTITIONS = 10
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "codec.json"


@dataclass(frozen=True)
class Case:
    name: str
    version: int
    wb_cls: type
    kp_cls: type
    build: Callable[[], Any]
    reader: type | None = None  # the class wirebroker decodes with, if not wb_cls (a flat reader)


def produce_request() -> ProduceRequest:
    batch = bytes(i % 251 for i in range(BATCH_BYTES))
    partition = ProduceRequest.PartitionProduceData(index=0, records=batch)
    topic = ProduceRequest.TopicProduceData(name="bench-topic", partition_data=[partition])
    return ProduceRequest(acks=-1, timeout_ms=30000, topic_data=[topic])


def fetch_response() -> FetchResponse:
    records = bytes(range(FETCH_RECORDS_BYTES))
    partitions = [
        FetchResponse.PartitionData(partition_index=i, high_watermark=1000 + i, last_stable_offset=1000 + i,
                                    log_start_offset=0, aborted_transactions=None, records=records)
        for i in range(FETCH_PARTITIONS)
    ]
    topic = FetchResponse.FetchableTopicResponse(topic="bench-topic", partitions=partitions)
    return FetchResponse(session_id=17, responses=[topic])


def metadata_response() -> MetadataResponse:
    brokers = [MetadataResponse.MetadataResponseBroker(node_id=n, host=f"broker-{n}.example", port=9093, rack=None)
               for n in range(3)]
    topics = [
        MetadataResponse.MetadataResponseTopic(
            name=f"topic-{t:03d}", topic_id=t.to_bytes(16, "big"), partitions=[
                MetadataResponse.MetadataResponsePartition(
                    partition_index=p, leader_id=p % 3, leader_epoch=4, replica_nodes=[0, 1, 2],
                    isr_nodes=[0, 1, 2], offline_replicas=[])
                for p in range(METADATA_PARTITIONS)
            ])
        for t in range(METADATA_TOPICS)
    ]
    return MetadataResponse(brokers=brokers, cluster_id="bench-cluster", controller_id=0, topics=topics)


CASES = (
    Case("Produce v9 request, 1 partition, 16 KiB batch", 9, ProduceRequest, KpProduceRequest, produce_request),
    Case("Produce v9 request, read flat as the broker does", 9, ProduceRequest, KpProduceRequest, produce_request,
         FlatProduceRequest),
    Case("Fetch v12 response, 50 partitions", 12, FetchResponse, KpFetchResponse, fetch_response),
    Case("Metadata v12 response, 100 topics x 10 partitions", 12, MetadataResponse, KpMetadataResponse,
         metadata_response),
)


def ops_per_second(operations: dict[str, Callable[[], Any]], repeat: int) -> dict[str, list[float]]:
    """Operations per second of each operation in each of `repeat` rounds, the operations taking turns."""
    timers = {name: timeit.Timer(operation, timer=time.process_time) for name, operation in operations.items()}
    numbers = {name: timer.autorange()[0] for name, timer in timers.items()}
    rounds: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(repeat):
        for name, timer in timers.items():
            rounds[name].append(numbers[name] / timer.timeit(numbers[name]))
    return rounds


def measure(case: Case, repeat: int) -> dict[str, Any]:
    wb_message = case.build()
    wire = wb_message.encode(case.version)
    kp_message = case.kp_cls.decode(wire, version=case.version)
    kp_message._header = None  # set by kafka-python's constructor, not by its decoder; encode() reads it
    if kp_message.encode(version=case.version) != wire:
        raise SystemExit(f"{case.name}: kafka-python encodes the message differently; the timings would not compare")
    version, wb_cls, kp_cls = case.version, case.reader or case.wb_cls, case.kp_cls
    rounds = ops_per_second({
        "wb_decode": lambda: wb_cls.decode(wire, version),
        "kp_decode": lambda: kp_cls.decode(wire, version=version),
        "wb_encode": lambda: wb_message.encode(version),
        "kp_encode": lambda: kp_message.encode(version=version),
    }, repeat)
    wb, kp = ({**{f"{op}_ops": statistics.median(rounds[f"{side}_{op}"]) for op in ("decode", "encode")},
               **{f"{op}_best_ops": max(rounds[f"{side}_{op}"]) for op in ("decode", "encode")}}
              for side in ("wb", "kp"))
    ratio = {op: wb[f"{op}_ops"] / kp[f"{op}_ops"] for op in ("decode", "encode")}
    return {"name": case.name, "bytes": len(wire), "wirebroker": wb, "kafka_python": kp, "ratio": ratio}


def print_table(results: list[dict[str, Any]]) -> None:
    header = f"{'message':<52} {'op':<7} {'wirebroker/s':>13} {'kafka-python/s':>15} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for result in results:
        for op in ("decode", "encode"):
            wb, kp, ratio = result["wirebroker"][f"{op}_ops"], result["kafka_python"][f"{op}_ops"], result["ratio"][op]
            flag = "" if ratio >= GOAL_RATIO else f"  < {GOAL_RATIO:g}x"
            print(f"{result['name']:<52} {op:<7} {wb:>13,.0f} {kp:>15,.0f} {ratio:>6.2f}x{flag}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds; each timing reports their median")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="where to write the JSON results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    results = [measure(case, args.repeat) for case in CASES]
    load_after = os.getloadavg()[0]
    print_table(results)
    print(f"\n1-minute load average: {load_before:.2f} before, {load_after:.2f} after (2 cores here)")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    report = {"python": platform.python_version(), "kafka_python": kafka.__version__, "goal_ratio": GOAL_RATIO,
              "repeat": args.repeat, "load_average_before": load_before, "load_average_after": load_after, "cases": results}
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwritten to {args.output}")


if __name__ == "__main__":
    main()
