"""Three-broker clusters for the matrix's failover column, and the runner's half of the failover handshake.

    with wirebroker_cluster(work_dir, settings) as cluster:     # ZooKeeper + 3 wirebrokers (node ids 1..3)
    with kafka_cluster(work_dir, jars, settings) as cluster:    # 3 Apache Kafka KRaft nodes, broker+controller
        cluster.bootstrap                                       # "127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3"
        cluster.leader_of(topic, 0); cluster.kill(node_id); cluster.restart(node_id)

Both sides get replication factor 3 and min.insync.replicas=2 for new topics and the offsets topic, and a broker
loss seen within ~6 s (ZooKeeper session / KRaft broker session). State is read over the wire with a Metadata v1
request built here (not with wirebroker's code), as any client sees it.

The failover handshake (a driver and the runner, through files in the directory named by COMPAT_FAILOVER_DIR):
the driver produces the first half, writes `ready` (the topic's name) and waits for `killed`; the runner kills -9
the leader of the topic's partition 0, writes `killed` (the node id), and the driver goes on.
"""
from __future__ import annotations

import logging
import os
import socket
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Mapping

from compat_tests.brokers import BrokerProcess, free_port
from compat_tests.reference_kafka import ReferenceKafka, random_cluster_id
from compat_tests.wirebroker_broker import Wirebroker
from wirebroker.cluster.zookeeper_server import ZooKeeperServer

log = logging.getLogger(__name__)

NODE_IDS = (1, 2, 3)
CLUSTER_SETTINGS = {
    "default.replication.factor": 3,
    "offsets.topic.replication.factor": 3,
    "min.insync.replicas": 2,
}
WIREBROKER_CLUSTER_SETTINGS = {
    "offsets.topic.num.partitions": 6,  # Kafka's 50 would make each start-up host 150 replicas
    "zookeeper.session.timeout.ms": 6000,  # a killed broker leaves /brokers/ids within ~6 s (Kafka: 18 s)
}
KAFKA_CLUSTER_SETTINGS = {
    "offsets.topic.num.partitions": 6,
    "transaction.state.log.replication.factor": 3,
    "transaction.state.log.min.isr": 2,
    "share.coordinator.state.topic.replication.factor": 3,
    "share.coordinator.state.topic.min.isr": 2,
    # The controller fences a broker that stopped heartbeating after this (Kafka: 9 s, heartbeats every 2 s).
    "broker.session.timeout.ms": 6000,
    "broker.heartbeat.interval.ms": 1000,
}
# Three JVMs on 2 cores and 24 GiB: a small heap each.
KAFKA_NODE_JVM_OPTS = ("-Xmx512m", "-Xms256m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true")
ZOOKEEPER_TICK_MS = 500
CLUSTER_READY_TIMEOUT_S = 120.0
HANDSHAKE_WAIT_S = 600.0  # the driver's whole run bounds it anyway
METADATA_KEY, METADATA_VERSION = 3, 1


class ClusterError(RuntimeError):
    """A cluster did not come up, or did not show what the failover needs (a leader, three brokers)."""


def metadata_v1(host: str, port: int, topics: list[str] | None, timeout: float = 5.0
                ) -> tuple[list[int], dict[str, dict[int, int]]]:
    """(broker node ids, {topic: {partition: leader}}) from one Metadata v1 request (topics None: all)."""
    body = struct.pack(">hhih", METADATA_KEY, METADATA_VERSION, 11, -1)
    if topics is None:
        body += struct.pack(">i", -1)
    else:
        body += struct.pack(">i", len(topics))
        for topic in topics:
            raw = topic.encode()
            body += struct.pack(">h", len(raw)) + raw
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", _recv(sock, 4))[0]
        reader = _Reader(_recv(sock, size))
    reader.int32()  # correlation id
    brokers = []
    for _ in range(reader.int32()):
        brokers.append(reader.int32())
        reader.string(), reader.int32(), reader.string()  # host, port, rack
    reader.int32()  # controller id
    leaders: dict[str, dict[int, int]] = {}
    for _ in range(reader.int32()):
        error, name, _internal = reader.int16(), reader.string(), reader.int8()
        partitions = leaders.setdefault(name, {})
        for _ in range(reader.int32()):
            _perror, index, leader = reader.int16(), reader.int32(), reader.int32()
            reader.int32_array(), reader.int32_array()  # replicas, isr
            partitions[index] = leader
        if error:
            leaders.pop(name)
    return sorted(brokers), leaders


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def _take(self, fmt: str):
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def int8(self) -> int:
        return self._take(">b")

    def int16(self) -> int:
        return self._take(">h")

    def int32(self) -> int:
        return self._take(">i")

    def string(self) -> str | None:
        length = self.int16()
        if length < 0:
            return None
        value = self.data[self.pos:self.pos + length].decode()
        self.pos += length
        return value

    def int32_array(self) -> list[int]:
        return [self.int32() for _ in range(self.int32())]


def _recv(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("connection closed mid-response")
        data += chunk
    return data


class BrokerCluster:
    """Three broker processes (node ids 1..3) and whatever coordinates them; start()/stop() or `with`."""

    def __init__(self, name: str, brokers: dict[int, BrokerProcess]) -> None:
        self.name = name
        self.brokers = brokers

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values())

    def start(self) -> "BrokerCluster":
        # Every member runs before any is waited for: a KRaft node answers only once the quorum has a leader.
        for broker in self.brokers.values():
            broker.launch()
        for broker in self.brokers.values():
            broker.wait_ready(CLUSTER_READY_TIMEOUT_S)
        self.wait_all_brokers()
        return self

    def stop(self) -> None:
        # All at once: the last KRaft node stopped alone waits out its controlled shutdown without a quorum.
        with ThreadPoolExecutor(max_workers=len(self.brokers)) as pool:
            list(pool.map(lambda broker: broker.stop(), self.brokers.values()))

    def alive(self) -> list[int]:
        return [n for n, b in self.brokers.items() if b.process is not None and b.process.poll() is None]

    def metadata(self, topics: list[str] | None) -> tuple[list[int], dict[str, dict[int, int]]]:
        """Metadata from the first live broker that answers."""
        last: Exception | None = None
        for node_id in self.alive():
            try:
                return metadata_v1("127.0.0.1", self.brokers[node_id].port, topics)
            except (OSError, struct.error) as exc:
                last = exc
        raise ClusterError(f"no live broker answered Metadata: {last!r}")

    def leader_of(self, topic: str, partition: int, timeout: float = 30.0) -> int:
        """The node id leading topic/partition, waiting while it has none."""
        return _wait(lambda: _leader(self.metadata([topic])[1], topic, partition), timeout,
                     f"a leader for {topic}-{partition}")

    def wait_all_brokers(self, timeout: float = CLUSTER_READY_TIMEOUT_S) -> None:
        """Until every live broker lists all three brokers in Metadata (so RF=3 topics can be created)."""
        def every_broker_sees_three() -> bool:
            return all(metadata_v1("127.0.0.1", self.brokers[n].port, [])[0] == list(NODE_IDS) for n in NODE_IDS)
        _wait(every_broker_sees_three, timeout, f"{self.name}: all of brokers {list(NODE_IDS)} in Metadata")

    def kill(self, node_id: int) -> None:
        self.brokers[node_id].kill()

    def restart(self, node_id: int) -> None:
        """Start a killed broker again on its port and data, and wait until the cluster lists it again."""
        self.brokers[node_id].start(CLUSTER_READY_TIMEOUT_S)
        self.wait_all_brokers()

    def __enter__(self) -> "BrokerCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _leader(leaders: dict[str, dict[int, int]], topic: str, partition: int) -> int | None:
    leader = leaders.get(topic, {}).get(partition, -1)
    return leader if leader >= 0 else None


def _wait(condition: Callable[[], object], timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = condition()
            if last:
                return last
        except (OSError, struct.error, ClusterError) as exc:  # a broker starting or just killed: not yet
            last = exc
        time.sleep(0.2)
    raise ClusterError(f"{what}: not within {timeout:.0f}s (last: {last!r})")


class WirebrokerCluster(BrokerCluster):
    """ZooKeeper (Debian's, wirebroker.cluster.zookeeper_server) and three wirebrokers registered in it."""

    def __init__(self, work_dir: Path, settings: Mapping[str, object]) -> None:
        self.zookeeper = ZooKeeperServer(port=free_port(), data_dir=work_dir / "zookeeper",
                                         tick_time_ms=ZOOKEEPER_TICK_MS)
        merged = {**settings, **CLUSTER_SETTINGS, **WIREBROKER_CLUSTER_SETTINGS,
                  "zookeeper.connect": self.zookeeper.connect_string}
        brokers: dict[int, BrokerProcess] = {
            n: Wirebroker(work_dir / f"broker{n}", settings={**merged, "node.id": n}) for n in NODE_IDS}
        super().__init__("wirebroker ×3", brokers)

    def start(self) -> "BrokerCluster":
        self.zookeeper.start()
        return super().start()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            self.zookeeper.stop()


def kafka_cluster(work_dir: Path, jars_dir: Path, settings: Mapping[str, object]) -> BrokerCluster:
    """Three Apache Kafka nodes in combined mode with a static three-voter quorum, formatted with one cluster id."""
    controller_ports = {n: free_port() for n in NODE_IDS}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in controller_ports.items())
    cluster_id = random_cluster_id()
    merged = {**settings, **CLUSTER_SETTINGS, **KAFKA_CLUSTER_SETTINGS}
    brokers: dict[int, BrokerProcess] = {
        n: ReferenceKafka(work_dir / f"broker{n}", jars_dir, node_id=n, settings=merged,
                          controller_port=controller_ports[n], voters=voters, cluster_id=cluster_id,
                          jvm_opts=KAFKA_NODE_JVM_OPTS)
        for n in NODE_IDS}
    return BrokerCluster("Apache Kafka ×3", brokers)


def _read_if_exists(path: Path) -> str:
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        return ""


class FailoverKiller(threading.Thread):
    """The runner's half of the handshake for one driver run: kill -9 partition 0's leader when the driver asks."""

    def __init__(self, cluster: BrokerCluster, handshake_dir: Path) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self.dir = handshake_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.done = threading.Event()
        self.killed: int | None = None
        self.error: str | None = None

    def run(self) -> None:
        ready = self.dir / "ready"
        deadline = time.monotonic() + HANDSHAKE_WAIT_S
        # The topic's name, once written: a driver's plain write can be seen between the file's creation and its
        # content (a fresh-clone make test once read "" and asked for the leader of no topic).
        while not (topic := _read_if_exists(ready)):
            if self.done.is_set() or time.monotonic() > deadline:
                return
            time.sleep(0.1)
        try:
            leader = self.cluster.leader_of(topic, 0)
            log.info("%s: killing broker %d, the leader of %s-0 (kill -9)", self.cluster.name, leader, topic)
            self.cluster.kill(leader)
            self.killed = leader
        except ClusterError as exc:
            self.error = str(exc)
        finally:
            _write_atomically(self.dir / "killed", str(self.killed if self.killed is not None else -1))

    def finish(self) -> None:
        """After the driver exits: bring the killed broker back so the next driver finds three."""
        self.done.set()
        self.join()
        if self.killed is not None:
            self.cluster.restart(self.killed)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)

