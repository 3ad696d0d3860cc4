"""A real multi-broker cluster for tests: a ZooKeeper server and N wirebroker processes on 127.0.0.1 free ports.

    with ClusterProcess(tmp_path, brokers=3, overrides={"min.insync.replicas": "2"}) as cluster:
        producer = Producer({"bootstrap.servers": cluster.bootstrap})
        leader = cluster.leader_of("events", 0)
        cluster.kill(leader)                      # kill -9
        cluster.wait_until(lambda: cluster.leader_of("events", 0) not in (-1, leader), 30, "a new leader")

Brokers are BrokerProcess (node ids 1..N, data in tmp_path/brokerN, log in tmp_path/brokerN-broker.log). The
cluster is up when every broker listens, is registered in /brokers/ids and one of them holds /controller. State is
read the way an operator would: ZooKeeper's znodes with kazoo (JSON parsed here, not by wirebroker's code) and
Metadata requests over the wire (RawClient). A failure inside `with` prints the tail of every broker's log and of
ZooKeeper's, so a failed assertion shows what the brokers said.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self, TypeVar

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.protocol.messages.metadata import MetadataRequest

T = TypeVar("T")

ZOOKEEPER_TICK_MS = 500  # sessions may then be 1 to 10 s: short sessions make a killed broker's loss quick to see
METADATA_VERSION = 12
LOG_TAIL_LINES = 40


def cluster_defaults(brokers: int) -> dict[str, str]:
    """The settings every broker gets unless the test overrides them: the compose cluster's, scaled to N brokers."""
    replication = str(min(3, brokers))
    return {
        "default.replication.factor": replication,
        "offsets.topic.replication.factor": replication,
        "min.insync.replicas": str(min(2, brokers)),
        "num.partitions": "1",
        "offsets.topic.num.partitions": "6",  # Kafka's 50 would make each start-up host 150 replicas
        "zookeeper.session.timeout.ms": "6000",  # a killed broker leaves /brokers/ids within ~6 s (Kafka: 18 s)
        "group.initial.rebalance.delay.ms": "0",
    }


def wait_until(condition: Callable[[], T], timeout: float, what: str, interval: float = 0.1,
               describe: Callable[[], str] = lambda: "") -> T:
    """Poll `condition` until it returns something truthy (returned); AssertionError naming `what` on timeout.

    An exception from `condition` counts as "not yet" (a broker restarting refuses connections) and is reported if
    the time runs out."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = condition()
            if last:
                return last
        except Exception as exc:  # noqa: BLE001 - reported below when the wait fails
            last = exc
        if time.monotonic() >= deadline:
            details = describe()
            raise AssertionError(f"{what}: not within {timeout:.0f}s (last: {last!r})" + (f"\n{details}" if details
                                                                                             else ""))
        time.sleep(interval)


def log_tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


class ClusterProcess:
    def __init__(self, tmp_path: Path, brokers: int = 3, overrides: dict[str, str] | None = None,
                 zookeeper_tick_ms: int = ZOOKEEPER_TICK_MS) -> None:
        self.tmp_path = tmp_path
        self.zookeeper = ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=zookeeper_tick_ms)
        self.overrides = {**cluster_defaults(brokers), **(overrides or {})}
        self.node_ids = list(range(1, brokers + 1))
        self.brokers: dict[int, BrokerProcess] = {}
        self.paused: set[int] = set()
        self._zk = None

    # ---- lifecycle ---------------------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> ClusterProcess:
        self.zookeeper.start()
        for node_id in self.node_ids:
            settings = {**self.overrides, "node.id": str(node_id), "zookeeper.connect": self.zookeeper.connect_string}
            self.brokers[node_id] = BrokerProcess(self.tmp_path / f"broker{node_id}", settings)
        for broker in self.brokers.values():
            broker.start()
        self.wait_until(lambda: self.registered_brokers() == self.node_ids, timeout, "every broker registered")
        self.wait_until(lambda: self.controller_id() is not None, timeout, "a controller elected")
        return self

    def stop(self) -> None:
        """Resume paused brokers, stop every broker (SIGTERM, else kill -9), then ZooKeeper."""
        for node_id in list(self.paused):
            self.resume(node_id)
        try:
            for broker in self.brokers.values():
                try:
                    broker.stop(timeout=30)
                except RuntimeError:
                    pass  # BrokerProcess.stop killed it
        finally:
            for broker in self.brokers.values():
                broker.kill()
            if self._zk is not None:
                self._zk.stop()
                self._zk.close()
                self._zk = None
            self.zookeeper.stop()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            print(self.logs())
            self.stop()
            raise

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is not None:
            print(self.logs())
        self.stop()

    # ---- one broker ----------------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        return ",".join(self.brokers[node_id].bootstrap for node_id in self.node_ids)

    def broker(self, node_id: int) -> BrokerProcess:
        return self.brokers[node_id]

    def alive(self) -> list[int]:
        """Brokers whose process runs and is not paused."""
        return [n for n, b in self.brokers.items()
                if b.process is not None and b.process.poll() is None and n not in self.paused]

    def kill(self, node_id: int) -> None:
        """kill -9: a crash, no controlled shutdown."""
        self.paused.discard(node_id)
        self.brokers[node_id].kill()

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the process keeps its sockets and ZooKeeper session until the session times out."""
        os.kill(self.brokers[node_id].process.pid, signal.SIGSTOP)
        self.paused.add(node_id)

    def resume(self, node_id: int) -> None:
        os.kill(self.brokers[node_id].process.pid, signal.SIGCONT)
        self.paused.discard(node_id)

    def restart(self, node_id: int, timeout: float = 60) -> BrokerProcess:
        """Start a broker again on its data and port (stopped cleanly first if it runs); wait until registered."""
        broker = self.brokers[node_id]
        if node_id in self.paused:
            self.resume(node_id)
        broker.restart()
        self.wait_until(lambda: node_id in self.registered_brokers(), timeout, f"broker {node_id} registered again")
        return broker

    def partition_dir(self, node_id: int, topic: str, partition: int) -> Path:
        return self.brokers[node_id].data_dir / f"{topic}-{partition}"

    # ---- cluster state as ZooKeeper and Metadata show it --------------------------------------------------

    def zk(self):
        if self._zk is None:
            from kazoo.client import KazooClient

            self._zk = KazooClient(hosts=self.zookeeper.connect_string, timeout=10)
            self._zk.start(timeout=10)
        return self._zk

    def registered_brokers(self) -> list[int]:
        return sorted(int(child) for child in self.zk().get_children("/brokers/ids"))

    def controller_id(self) -> int | None:
        """The broker holding /controller, None while nobody does."""
        if not self.zk().exists("/controller"):
            return None
        data, _ = self.zk().get("/controller")
        return json.loads(data)["brokerid"]

    def controller_epoch(self) -> int:
        data, _ = self.zk().get("/controller_epoch")
        return int(data)

    def partition_state(self, topic: str, partition: int) -> dict | None:
        """The partition's state znode (leader, leader_epoch, isr, controller_epoch) and its version, None if none."""
        path = f"/brokers/topics/{topic}/partitions/{partition}/state"
        if not self.zk().exists(path):
            return None
        data, stat = self.zk().get(path)
        return {**json.loads(data), "partition_epoch": stat.version}

    def metadata(self, topics: list[str] | None = None, via: int | None = None):
        """A Metadata response from broker `via` (else the first live broker that answers)."""
        candidates = [via] if via is not None else self.alive()
        last_error: Exception | None = None
        for node_id in candidates:
            try:
                with RawClient(self.brokers[node_id].bootstrap) as client:
                    client.sock.settimeout(5)
                    wanted = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
                    return client.request(3, METADATA_VERSION, topics=wanted, allow_auto_topic_creation=False)
            except (OSError, ConnectionError) as exc:
                last_error = exc
        raise ConnectionError(f"no broker of {candidates} answered Metadata: {last_error}")

    def leader_of(self, topic: str, partition: int, via: int | None = None) -> int:
        """The leader a broker's Metadata names (-1 when none, or when the topic or partition is unknown)."""
        for t in self.metadata([topic], via).topics:
            for p in t.partitions:
                if p.partition_index == partition and p.error_code == 0:
                    return p.leader_id
        return -1

    def wait_until(self, condition: Callable[[], T], timeout: float, what: str, interval: float = 0.1) -> T:
        return wait_until(condition, timeout, what, interval, describe=self.logs)

    def logs(self, lines: int = LOG_TAIL_LINES) -> str:
        """The tail of every broker's log and of ZooKeeper's: what to read when a cluster test fails."""
        parts = [f"--- broker {n} ({'paused' if n in self.paused else 'alive' if n in self.alive() else 'down'}), "
                 f"last {lines} lines of {b.log_path}:\n{log_tail(b.log_text(), lines)}"
                 for n, b in self.brokers.items()]
        parts.append(f"--- zookeeper, last {lines} lines:\n{log_tail(self.zookeeper.log_text(), lines)}")
        parts.append(f"--- partition states in ZooKeeper:\n{self._partition_states()}")
        return "\n".join(parts)

    def _partition_states(self) -> str:
        """Every partition's leader, leader epoch and ISR as the controller last wrote them, one line each."""
        try:
            zk, lines = self.zk(), []
            for topic in sorted(zk.get_children("/brokers/topics")):
                path = f"/brokers/topics/{topic}/partitions"
                for partition in sorted(zk.get_children(path) if zk.exists(path) else [], key=int):
                    lines.append(f"{topic}-{partition}: {self.partition_state(topic, int(partition))}")
            return "\n".join(lines)
        except Exception as exc:  # ZooKeeper down or stopping: the logs above are what is left
            return f"(not read: {exc!r})"

