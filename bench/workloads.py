"""The benchmark's workloads: what each one sends, how much, and its name (the key in results and for --only).

Names read as kind-size-batching-acks-partitions, e.g. `produce-1kb-batch64k-acks1-p10`:
  produce   ProducerPerformance at full speed into a fresh topic
  consume   a fresh topic filled with records (64 KB batches, acks=1), then read by ConsumerPerformance
  producers bench/java/ManyClients.java: C producers at client defaults, each on its own connection (-cC)
  group     a filled topic read by a consumer group of C members (ManyClients.java, -gC)
  latency   FixedRateLatency: produce-to-consume latency at a fixed, moderate rate
  e2e       Kafka's EndToEndLatency: one record in flight at a time
  ping      bench/ping.py: one prebuilt request (ApiVersions, Produce or Fetch of one 1 KB record) in a closed loop
            on C raw connections (-cC): a broker's cost per request, without a client library's
  startup   launch to the first answered ApiVersions, on an empty log dir, a few times
Batching `default` leaves the producer's own defaults (Kafka 4.x clients: batch.size=16384, linger.ms=5);
`batch64k` sets batch.size=65536 linger.ms=5. Quick mode keeps every workload but moves ~1/20 of the bytes; smoke
mode moves a few MB each, to check that every workload runs end to end (its figures mean nothing).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

BATCHING = {
    "default": {},
    "batch64k": {"batch.size": 65536, "linger.ms": 5},
}
RECORD_SIZES = {"100b": 100, "1kb": 1000}
MB = 1_000_000
# Bytes each produce run moves: a few seconds of Apache Kafka's best rate here (past the JIT's warm-up), and what
# lets the whole suite run on both brokers in ~15 minutes.
PRODUCE_BYTES = {"full": 300 * MB, "quick": 15 * MB, "smoke": 2 * MB}
# The issue asks for consumption from a 1 GB topic.
CONSUME_BYTES = {"full": 1000 * MB, "quick": 20 * MB, "smoke": 2 * MB}
# 1000 records/s of 1 KB: a steady trickle that neither broker batches much, so latency is the request path's.
LATENCY_RATE_PER_S = 1000
LATENCY_SECONDS = {"full": 20.0, "quick": 5.0, "smoke": 2.0}
LATENCY_WARMUP_S = {"full": 5.0, "quick": 1.0, "smoke": 0.5}
E2E_RECORDS = {"full": 2000, "quick": 200, "smoke": 50}
PING_REQUESTS = {"full": 5000, "quick": 500, "smoke": 100}  # per workload, shared by its connections
PING_CONNECTIONS = (1, 8)
STARTUP_REPEATS = {"full": 3, "quick": 1, "smoke": 1}
# Workloads users run (issue 18): many partitions, many connections, a consumer group.
MANY_PARTITIONS = (100, 1000)
MANY_PRODUCERS = 100
GROUP_MEMBERS = 8


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str
    partitions: int = 1
    record_size: int = 1000
    num_records: int = 0
    acks: str = "1"
    producer_props: dict[str, object] = field(default_factory=dict)
    rate_per_s: int = 0
    seconds: float = 0.0
    warmup_s: float = 0.0
    repeats: int = 1
    api: str = ""
    connections: int = 0
    clients: int = 0  # producers or group members of the ManyClients workloads

    def params(self) -> dict[str, object]:
        """The workload's settings, as recorded beside its figures."""
        return {key: value for key, value in vars(self).items()
                if key != "name" and value not in (0, 0.0, {}, "")}


def suite(mode: str = "full") -> list[Workload]:
    """Every workload, in the order they run, sized for mode "full" or "quick"."""
    workloads = [Workload("startup", "startup", repeats=STARTUP_REPEATS[mode])]
    for size_name, size in RECORD_SIZES.items():
        for batching, props in BATCHING.items():
            for acks in ("1", "all"):
                workloads.append(_produce(mode, size_name, size, batching, props, acks, partitions=10))
    workloads.append(_produce(mode, "1kb", 1000, "batch64k", BATCHING["batch64k"], "1", partitions=100))
    for partitions in MANY_PARTITIONS:
        workloads.append(_produce(mode, "1kb", 1000, "default", BATCHING["default"], "1", partitions=partitions))
    workloads.append(Workload(f"producers-1kb-default-acks1-p10-c{MANY_PRODUCERS}", "producers", partitions=10,
                              num_records=PRODUCE_BYTES[mode] // 1000, clients=MANY_PRODUCERS))
    for size_name, partitions in (("1kb", 10), ("1kb", 100), ("1kb", 1000), ("100b", 10)):
        size = RECORD_SIZES[size_name]
        workloads.append(Workload(f"consume-{size_name}-p{partitions}", "consume", partitions=partitions,
                                  record_size=size, num_records=CONSUME_BYTES[mode] // size))
    workloads.append(Workload(f"group-1kb-p{GROUP_MEMBERS}-g{GROUP_MEMBERS}", "group", partitions=GROUP_MEMBERS,
                              num_records=CONSUME_BYTES[mode] // 1000, clients=GROUP_MEMBERS))
    for acks in ("1", "all"):
        workloads.append(Workload(f"latency-1kb-{LATENCY_RATE_PER_S}rps-acks{acks}-p10", "latency", partitions=10,
                                  acks=acks, rate_per_s=LATENCY_RATE_PER_S, seconds=LATENCY_SECONDS[mode],
                                  warmup_s=LATENCY_WARMUP_S[mode]))
    workloads.append(Workload("e2e-1kb-acks1-p1", "e2e", num_records=E2E_RECORDS[mode]))
    for connections in PING_CONNECTIONS:  # ApiVersions costs a quarter of a Produce: 4x the requests, as long a run
        workloads.append(Workload(f"ping-apiversions-c{connections}", "ping", api="api_versions",
                                  connections=connections, num_records=4 * PING_REQUESTS[mode] // connections))
    for api in ("produce", "fetch"):
        for connections in PING_CONNECTIONS:
            workloads.append(Workload(f"ping-{api}-1kb-c{connections}", "ping", api=api, connections=connections,
                                      num_records=PING_REQUESTS[mode] // connections))
    return workloads


def _produce(mode: str, size_name: str, size: int, batching: str, props: dict[str, object], acks: str,
             partitions: int) -> Workload:
    return Workload(f"produce-{size_name}-{batching}-acks{acks}-p{partitions}", "produce", partitions=partitions,
                    record_size=size, num_records=PRODUCE_BYTES[mode] // size, acks=acks,
                    producer_props={**props, "acks": acks})


def select(workloads: list[Workload], patterns: list[str]) -> list[Workload]:
    """The workloads whose name matches any of the shell-style patterns (all of them when there are none)."""
    if not patterns:
        return workloads
    chosen = [w for w in workloads if any(fnmatch.fnmatchcase(w.name, p) for p in patterns)]
    if not chosen:
        raise ValueError(f"no workload matches {patterns}; names are: {', '.join(w.name for w in workloads)}")
    return chosen
