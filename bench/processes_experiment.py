"""Beyond one core (issue 18 item 4): what wirebroker gains from several broker processes instead of one.

    python -m bench.processes_experiment [--rounds 3] [--layouts single,zk1,zk2] [--scale 0.5] [--workloads A,B]
                                         [--out DIR]
    python -m bench.processes_experiment --reuseport [--rounds 9] [--connections 8] [--requests 1500]
    python -m bench.processes_experiment --pings [--rounds 9] [--pingers 2] [--connections 4] [--requests 1000]

Under the GIL one broker process runs Python on one core at a time. Two ways to use more cores:
- **a process per partition owner, each its own broker** (layout `zkN`): ZooKeeper (Debian's package) and N
  wirebroker processes on their own ports, node ids 1..N, every topic with replication factor 1, so the controller
  spreads the partitions' leaders over the processes (5 + 5 of 10 with N=2). This is Kafka's own answer: a client
  learns each partition's leader from Metadata and sends to that broker's address. `zk1` is the same with one
  broker (what ZooKeeper mode itself costs); `single` is the default single-node broker, no ZooKeeper.
- **processes sharing one port with SO_REUSEPORT** (`--reuseport`): N single-node processes bound to one port
  (bench/reuseport_broker.py); the kernel hands each new connection to one of them by a hash of its addresses.
  Only requests that every process answers alike can go there: ApiVersions is pinged on 1 and on 2 processes
  taking turns chunk by chunk (bench/ping_ab.py's method), and fresh connections ask for Metadata to show which
  broker each one met: a Kafka client routes a partition's requests by the leader's node id to its address, and
  behind a shared port that address is a different broker from one connection to the next.

With `--pings` the broker, not its clients, is the bound: closed-loop Produce requests of one 1 KB record
(bench/ping.py) from several client processes, each to a single-partition topic of its own and to that topic's
leader, against `single` (every topic on the one broker) and `zk2` (the topics' leaders alternate between the two
brokers), the two layouts taking turns chunk by chunk.

Each `zkN`/`single` round starts every layout afresh (its own temp dir) and runs the workloads (the suite's, with
`--scale` of their records) with Kafka's ProducerPerformance / ConsumerPerformance, the layouts taking turns and
their order flipping every round, so that the shared machine's changing load falls on each alike. Per run: the
tool's figures, broker CPU (all broker processes, from /proc) and ZooKeeper's, the load generator's CPU, the
leaders per broker, others' share of the cores (bench/quietness.py) and the load averages. The 2 cores carry the
brokers and the load generator's JVM alike: a second broker process can only use what the JVM leaves.
Writes <out>/processes.json, reuseport.json or owner-pings.json (every run) and the matching .md (medians).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from kafka.admin import KafkaAdminClient

from bench import ping
from bench.procstats import cpu_seconds, load_cpu_seconds
from bench.quietness import QuietnessSampler
from bench.runner import fill_topic, machine_info, run_load
from bench.topics import create_topic
from bench.workloads import Workload, suite
from compat_tests.brokers import BrokerStartError
from compat_tests.reference_kafka import install_jars
from compat_tests.wirebroker_broker import Wirebroker
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.network.ports import free_port
from wirebroker.protocol.headers import request_header_version
from wirebroker.protocol.messages.metadata import MetadataRequest, MetadataResponse
from wirebroker.protocol.messages.request_header import RequestHeader

log = logging.getLogger(__name__)

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "processes"
DEFAULT_LAYOUTS = ("single", "zk1", "zk2")
WORKLOADS = ("produce-1kb-batch64k-acks1-p10", "produce-1kb-default-acks1-p10", "consume-1kb-p10")
# Every layout gets these, so that only the number of processes differs: one replica of everything (a layout of 1
# or 2 brokers cannot hold Kafka's 3), and a small offsets topic (Kafka's 50 partitions would dominate start-up).
SETTINGS = {"default.replication.factor": "1", "offsets.topic.replication.factor": "1", "min.insync.replicas": "1",
            "offsets.topic.num.partitions": "10", "group.initial.rebalance.delay.ms": "0"}
CLUSTER_READY_TIMEOUT_S = 60.0
METADATA_VERSION = 12
METADATA_PROBES = 40
GB = 1e9
MIB = 1 << 20
_SIZE = struct.Struct(">i")


@dataclasses.dataclass
class Layout:
    """Broker processes that serve one bootstrap address, and the ZooKeeper behind them if any."""

    bootstrap: str
    brokers: list[Wirebroker]
    zookeeper: ZooKeeperServer | None = None

    @property
    def broker_pids(self) -> list[int]:
        return [broker.process.pid for broker in self.brokers]


@contextlib.contextmanager
def started(name: str, work_dir: Path) -> Iterator[Layout]:
    """`single`, or `zkN`: ZooKeeper and N brokers (node ids 1..N), every broker registered, a controller elected."""
    if name == "single":
        with Wirebroker(work_dir / "broker", settings=SETTINGS) as broker:
            yield Layout(broker.bootstrap, [broker])
        return
    count = int(name.removeprefix("zk"))
    with contextlib.ExitStack() as stack:
        zookeeper = stack.enter_context(ZooKeeperServer(data_dir=work_dir / "zookeeper"))
        brokers = [Wirebroker(work_dir / f"broker{node}", settings={
            **SETTINGS, "node.id": node, "zookeeper.connect": zookeeper.connect_string}) for node in range(1, count + 1)]
        for broker in brokers:
            stack.callback(broker.stop)  # stopped before ZooKeeper: a controlled shutdown goes through it
            broker.launch()
        for broker in brokers:
            broker.wait_ready()
        bootstrap = ",".join(broker.bootstrap for broker in brokers)
        _wait_for_cluster(bootstrap, count)
        yield Layout(bootstrap, brokers, zookeeper)


def _wait_for_cluster(bootstrap: str, count: int) -> None:
    deadline = time.monotonic() + CLUSTER_READY_TIMEOUT_S
    while True:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="wirebroker-bench")
        try:
            cluster = admin.describe_cluster()
        finally:
            admin.close()
        if len(cluster["brokers"]) == count and cluster.get("controller_id", -1) >= 0:
            return
        if time.monotonic() > deadline:
            raise BrokerStartError(f"the cluster has {cluster} after {CLUSTER_READY_TIMEOUT_S:.0f}s, not {count} brokers")
        time.sleep(0.2)


def leaders_per_broker(bootstrap: str, topic: str) -> dict[str, int]:
    """How many of the topic's partitions each broker leads ({"1": 5, "2": 5})."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="wirebroker-bench")
    try:
        (described,) = admin.describe_topics([topic])
    finally:
        admin.close()
    return {str(node): n for node, n in sorted(Counter(p["leader_id"] for p in described["partitions"]).items())}


def run_workload(workload: Workload, layout: Layout, jars: Path, topic: str) -> dict:
    """Create the topic, fill it for a consume workload, run the load and read what every process spent on it."""
    create_topic(layout.bootstrap, topic, workload.partitions)
    entry: dict = {"params": workload.params(), "leaders": leaders_per_broker(layout.bootstrap, topic)}
    if workload.kind == "consume":
        entry["fill"] = fill_topic(workload, layout.bootstrap, jars, topic)
    pids = layout.broker_pids
    zookeeper_pid = layout.zookeeper.process.pid if layout.zookeeper else None
    brokers_before = [cpu_seconds(pid) for pid in pids]
    zookeeper_before = cpu_seconds(zookeeper_pid) if zookeeper_pid else 0.0
    load_before, load_average, started_at = load_cpu_seconds(), os.getloadavg(), time.monotonic()
    with QuietnessSampler((os.getpid(),)) as quietness:  # the brokers, ZooKeeper and the tools are our children
        figures = run_load(workload, layout.bootstrap, jars, topic)
    per_process = [cpu_seconds(pid) - before for pid, before in zip(pids, brokers_before)]
    produced = workload.kind in ("produce", "producers")
    moved = (figures["records"] * workload.record_size if produced else figures["mb"] * MIB) / GB
    entry.update(figures=figures, wall_s=time.monotonic() - started_at, gb_moved=moved,
                 broker_cpu_s=sum(per_process), broker_cpu_s_per_process=per_process,
                 zookeeper_cpu_s=(cpu_seconds(zookeeper_pid) - zookeeper_before) if zookeeper_pid else 0.0,
                 load_cpu_s=load_cpu_seconds() - load_before,
                 others_share=quietness.result.others_share, own_share=quietness.result.own_share,
                 load_average_before=load_average, load_average_after=os.getloadavg())
    entry["cpu_s_per_gb"] = entry["broker_cpu_s"] / moved
    entry["load_cpu_s_per_gb"] = entry["load_cpu_s"] / moved
    return entry


def scaled_workloads(scale: float, names: tuple[str, ...] | list[str] = WORKLOADS) -> list[Workload]:
    """The suite's workloads of these names, with `scale` of their records."""
    by_name = {workload.name: workload for workload in suite("full")}
    return [dataclasses.replace(by_name[name], num_records=int(by_name[name].num_records * scale)) for name in names]


def measure_layouts(layouts: list[str], workloads: list[Workload], rounds: int, jars: Path) -> dict[str, list[dict]]:
    """Every layout through the workloads, `rounds` times, the layouts taking turns (order flipped every round)."""
    runs: dict[str, list[dict]] = {name: [] for name in layouts}
    for round_number in range(rounds):
        for name in layouts if round_number % 2 == 0 else layouts[::-1]:
            log.info("round %d, %s (load %.1f)", round_number + 1, name, os.getloadavg()[0])
            with tempfile.TemporaryDirectory(prefix=f"bench-processes-{name}-") as work_dir, \
                    started(name, Path(work_dir)) as layout:
                runs[name].append({"round": round_number + 1, "workloads": {
                    w.name: run_workload(w, layout, jars, f"{w.name}-r{round_number}") for w in workloads}})
    return runs


def render_layouts(runs: dict[str, list[dict]]) -> str:
    """Medians over the rounds: one row per workload figure, one column per layout."""
    names = list(runs)
    rows = [("records/s", lambda e: e["figures"].get("fetch_records_per_s", e["figures"]["records_per_s"])),
            ("MB/s", lambda e: e["figures"].get("fetch_mb_per_s", e["figures"].get("mb_per_s"))),
            ("broker CPU s per GB", lambda e: e["cpu_s_per_gb"]),
            ("load generator CPU s per GB", lambda e: e["load_cpu_s_per_gb"]),
            ("ZooKeeper CPU s", lambda e: e["zookeeper_cpu_s"]),
            ("others' share of the cores", lambda e: e["others_share"])]
    lines = ["| workload | figure | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for workload in runs[names[0]][0]["workloads"]:
        for label, read in rows:
            cells = []
            for name in names:
                values = [read(r["workloads"][workload]) for r in runs[name]]
                cells.append(f"{statistics.median(values):,.2f} ({min(values):,.2f}-{max(values):,.2f})")
            lines.append(f"| {workload} | {label} | " + " | ".join(cells) + " |")
    rounds = max(len(r) for r in runs.values())
    return (f"Medians of {rounds} round(s) (min-max in brackets); records/s and MB/s of a consume workload are "
            "ConsumerPerformance's fetch figures (without the group join).\n\n" + "\n".join(lines) + "\n")


# ---- small requests, where the broker is the bound ---------------------------------------------------------

# A client process: connects and warms up, says "ready", waits for a line on stdin, then pings and prints its figures.
PINGER = """
import json, sys
from bench import ping
address, topic, requests, connections = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ping.ping(address, "produce", topic, 1, connections)
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(ping.ping(address, "produce", topic, requests, connections)), flush=True)
"""
TOPIC_TRIES = 8


def topics_led_by(layout: Layout, nodes: list[int]) -> dict[str, str]:
    """One single-partition topic led by each of `nodes` (in order; a node may repeat): {topic: leader's address}."""
    address = {int(broker.settings.get("node.id", 0)): broker.bootstrap for broker in layout.brokers}
    led: dict[int, list[str]] = {}
    for attempt in range(TOPIC_TRIES * len(nodes)):
        topic = f"ping-{attempt}"
        create_topic(layout.bootstrap, topic, 1)
        (leader,) = (int(node) for node in leaders_per_broker(layout.bootstrap, topic))
        led.setdefault(leader, []).append(topic)
        if all(len(led.get(node, ())) >= nodes.count(node) for node in nodes):
            return {led[node].pop(): address[node] for node in nodes}
    raise RuntimeError(f"no topic led by each of {nodes} after {TOPIC_TRIES * len(nodes)} topics: {led}")


def owner_pings(layout: Layout, targets: dict[str, str], connections: int, requests: int) -> dict:
    """One client process per topic pinging its leader, all released at once; requests/s is every request the
    broker(s) answered from the release to the last answer."""
    pingers = [subprocess.Popen([sys.executable, "-c", PINGER, address, topic, str(requests), str(connections)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
               for topic, address in targets.items()]
    for pinger in pingers:
        if pinger.stdout.readline().strip() != "ready":
            raise RuntimeError(f"a pinger did not start: exit status {pinger.wait()}")
    pids = layout.broker_pids
    before = [cpu_seconds(pid) for pid in pids]
    with QuietnessSampler((os.getpid(),)) as quietness:
        released = time.monotonic()
        for pinger in pingers:
            pinger.stdin.write("go\n")
            pinger.stdin.flush()
        results = [json.loads(pinger.communicate()[0]) for pinger in pingers]
        seconds = time.monotonic() - released
    spent = [cpu_seconds(pid) - cpu for pid, cpu in zip(pids, before)]
    answered = sum(r["requests_sent"] for r in results)
    return {"requests_per_s": answered / seconds, "p50_us": statistics.median(r["p50_us"] for r in results),
            "cpu_us_per_request": sum(spent) / answered * 1e6, "cpu_s_per_process": spent,
            "others_share": quietness.result.others_share, "load_average": os.getloadavg()}


def measure_owner_pings(rounds: int, pingers: int, connections: int, requests: int) -> dict:
    """Produce pings of `pingers` clients on one broker (`single`) and spread over brokers (`zk2`), taking turns."""
    with contextlib.ExitStack() as stack:
        layouts, targets = {}, {}
        for name in ("single", "zk2"):
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-pings-{name}-")))
            layouts[name] = stack.enter_context(started(name, work_dir))
            nodes = [int(b.settings.get("node.id", 0)) for b in layouts[name].brokers]
            targets[name] = topics_led_by(layouts[name], [nodes[i % len(nodes)] for i in range(pingers)])
            owner_pings(layouts[name], targets[name], connections, ping.WARMUP_REQUESTS)
        chunks: dict[str, list[dict]] = {name: [] for name in layouts}
        for chunk in range(rounds):
            for name in ("single", "zk2") if chunk % 2 == 0 else ("zk2", "single"):
                chunks[name].append(owner_pings(layouts[name], targets[name], connections, requests))
    return {"pingers": pingers, "connections_per_pinger": connections, "requests_per_connection": requests,
            "targets": targets, "chunks": chunks}


def render_owner_pings(result: dict) -> str:
    lines = [(f"Produce v9 pings (one 1 KB record, acks=1) from {result['pingers']} client processes x "
              f"{result['connections_per_pinger']} connections, {result['requests_per_connection']} requests each "
              f"per chunk, each client to its topic's leader; medians of {len(result['chunks']['single'])} chunks "
              "(min-max)."), "",
             "| layout | requests/s | p50 µs | broker CPU µs per request | others' share |", "|---|---|---|---|---|"]
    for name, chunks in result["chunks"].items():
        cells = []
        for key in ("requests_per_s", "p50_us", "cpu_us_per_request", "others_share"):
            values = [c[key] for c in chunks]
            cells.append(f"{statistics.median(values):,.2f} ({min(values):,.2f}-{max(values):,.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# ---- SO_REUSEPORT ---------------------------------------------------------------------------------------------


class ReuseportBroker(Wirebroker):
    """A single-node wirebroker sharing `port` with others (bench/reuseport_broker.py), node id `node`."""

    name = "wirebroker-reuseport"

    def __init__(self, work_dir: Path, port: int, node: int) -> None:
        super().__init__(work_dir, port=port, settings={**SETTINGS, "node.id": node})

    def command(self) -> list[str]:
        python, _, _, *overrides = super().command()  # [python, "-m", "wirebroker", "--override", ...]
        return [python, "-m", "bench.reuseport_broker", str(self.port), *overrides]

    def wait_ready(self, timeout: float = CLUSTER_READY_TIMEOUT_S, poll_s: float = 0.05) -> None:
        """Its own "listening on" line: an ApiVersions answer on the shared port may come from another process."""
        deadline = time.monotonic() + timeout
        while "listening on" not in self.log_tail():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise BrokerStartError(f"{self.name} did not start:\n{self.log_tail()}")
            time.sleep(poll_s)


@contextlib.contextmanager
def sharing_one_port(count: int, work_dir: Path) -> Iterator[list[ReuseportBroker]]:
    port = free_port()
    with contextlib.ExitStack() as stack:
        brokers = [ReuseportBroker(work_dir / f"broker{node}", port, node) for node in range(count)]
        for broker in brokers:
            stack.callback(broker.stop)
            broker.launch()
            broker.wait_ready()
        yield brokers


def metadata_answers(bootstrap: str, probes: int = METADATA_PROBES) -> dict[str, int]:
    """Ask `probes` fresh connections for Metadata; how often each node id answered as the cluster's one broker."""
    header = RequestHeader(request_api_key=MetadataRequest.API_KEY, request_api_version=METADATA_VERSION,
                           correlation_id=1, client_id="wirebroker-bench")
    payload = (header.encode(request_header_version(MetadataRequest.API_KEY, METADATA_VERSION))
               + MetadataRequest(topics=[]).encode(METADATA_VERSION))
    host, port = bootstrap.rsplit(":", 1)
    seen: Counter[str] = Counter()
    for _ in range(probes):
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(_SIZE.pack(len(payload)) + payload)
            frame = _read_frame(sock)
        # correlation id (4 bytes), then the flexible response header's empty tagged-field section (1 byte)
        response = MetadataResponse.decode(frame[5:], METADATA_VERSION)
        seen[",".join(str(b.node_id) for b in response.brokers)] += 1
    return dict(sorted(seen.items()))


def _read_frame(sock: socket.socket) -> bytes:
    data = b""
    while len(data) < 4 or len(data) < 4 + _SIZE.unpack_from(data)[0]:
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        data += chunk
    return data[4:]


def measure_reuseport(rounds: int, connections: int, requests: int) -> dict:
    """ApiVersions pings on 1 and on 2 processes sharing a port, taking turns; Metadata answers behind the port."""
    with contextlib.ExitStack() as stack:
        groups = {}
        for count in (1, 2):
            work_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"bench-reuseport{count}-")))
            groups[count] = stack.enter_context(sharing_one_port(count, work_dir))
            ping.ping(groups[count][0].bootstrap, "api_versions", "-", ping.WARMUP_REQUESTS, connections)
        chunks: dict[int, list[dict]] = {1: [], 2: []}
        for chunk in range(rounds):
            for count in (1, 2) if chunk % 2 == 0 else (2, 1):
                brokers = groups[count]
                before = [cpu_seconds(b.process.pid) for b in brokers]
                with QuietnessSampler((os.getpid(),)) as quietness:
                    figures = ping.ping(brokers[0].bootstrap, "api_versions", "-", requests, connections)
                spent = [cpu_seconds(b.process.pid) - cpu for b, cpu in zip(brokers, before)]
                chunks[count].append({
                    "requests_per_s": figures["requests_per_s"], "p50_us": figures["p50_us"],
                    "cpu_us_per_request": sum(spent) / figures["requests_sent"] * 1e6, "cpu_s_per_process": spent,
                    "others_share": quietness.result.others_share, "load_average": os.getloadavg()})
        return {"connections": connections, "requests_per_connection": requests, "chunks": chunks,
                "metadata_answers": {count: metadata_answers(groups[count][0].bootstrap) for count in (1, 2)}}


def render_reuseport(result: dict) -> str:
    chunks_per_setting = len(result["chunks"][1])
    lines = [(f"ApiVersions v3 pings, {result['connections']} connections, {result['requests_per_connection']} "
              f"requests each per chunk; medians of {chunks_per_setting} chunks per setting (min-max)."), "",
             "| processes on the port | requests/s | p50 µs | broker CPU µs per request | others' share |",
             "|---|---|---|---|---|"]
    for count, chunks in result["chunks"].items():
        cells = []
        for key in ("requests_per_s", "p50_us", "cpu_us_per_request", "others_share"):
            values = [c[key] for c in chunks]
            cells.append(f"{statistics.median(values):,.2f} ({min(values):,.2f}-{max(values):,.2f})")
        lines.append(f"| {count} | " + " | ".join(cells) + " |")
    lines += ["", f"Metadata over {METADATA_PROBES} fresh connections to the shared port, by the broker ids answered:"]
    lines += [f"- {count} process(es): {answers}" for count, answers in result["metadata_answers"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    args.out.mkdir(parents=True, exist_ok=True)
    header = {"machine": machine_info(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "load_average_before": os.getloadavg()}
    if args.reuseport:
        result = measure_reuseport(args.rounds, args.connections, args.requests)
        name, table = "reuseport", render_reuseport(result)
    elif args.pings:
        result = measure_owner_pings(args.rounds, args.pingers, args.connections, args.requests)
        name, table = "owner-pings", render_owner_pings(result)
    else:
        jars = install_jars()
        workloads = scaled_workloads(args.scale, args.workloads.split(","))
        result = measure_layouts(args.layouts.split(","), workloads, args.rounds, jars)
        name, table = "processes", render_layouts(result)
    document = {**header, "load_average_after": os.getloadavg(), "runs": result}
    (args.out / f"{name}.json").write_text(json.dumps(document, indent=2) + "\n")
    (args.out / f"{name}.md").write_text(table)
    print(table)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.processes_experiment",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (layouts) or chunks per setting (--reuseport)")
    parser.add_argument("--layouts", default=",".join(DEFAULT_LAYOUTS), help="comma-separated: single, zk1, zk2, ...")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated names of the suite's produce/producers/consume workloads")
    parser.add_argument("--scale", type=float, default=0.5, help="fraction of each workload's full record count")
    parser.add_argument("--reuseport", action="store_true", help="the shared-port measurement instead of layouts")
    parser.add_argument("--pings", action="store_true",
                        help="produce pings from --pingers clients to their topics' leaders: single against zk2")
    parser.add_argument("--pingers", type=int, default=2, help="client processes of --pings")
    parser.add_argument("--connections", type=int, default=8, help="connections (of each client with --pings)")
    parser.add_argument("--requests", type=int, default=1500, help="ApiVersions per connection and chunk")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser


if __name__ == "__main__":
    sys.exit(main())
