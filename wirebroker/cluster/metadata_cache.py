"""A cluster member's view of the cluster, as the controller last told it (Kafka's ZkMetadataCache).

UpdateMetadata fills it: the live brokers (each with an endpoint per listener and its rack) replace the previous
set; partition states (leader, leader epoch, ISR, partition epoch, replicas, offline replicas) are merged in, and a
partition whose leader is LEADER_DURING_DELETE (-2) is removed, its topic with its last partition. Readers get
immutable snapshots and never take the lock: every update publishes a new `_Snapshot`.

It is the `ClusterView` of the metadata APIs in a cluster, and answers the replica layer's questions: which broker
is the controller and where to reach a broker on the inter-broker listener.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from wirebroker.cluster.cluster_view import (
    NO_LEADER,
    BrokerNode,
    PartitionView,
    TopicView,
)

log = logging.getLogger(__name__)

LEADER_DURING_DELETE = -2  # Kafka's LeaderAndIsr.LeaderDuringDelete
NO_CONTROLLER = -1


@dataclass(frozen=True, slots=True)
class LiveBroker:
    node_id: int
    endpoints: Mapping[str, tuple[str, int]]  # listener name -> (host, port)
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition state of an UpdateMetadata request."""

    topic: str
    topic_id: bytes
    index: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class _Snapshot:
    controller_id: int = NO_CONTROLLER
    brokers: Mapping[int, LiveBroker] = field(default_factory=dict)
    partitions: Mapping[str, Mapping[int, PartitionMetadata]] = field(default_factory=dict)  # topic -> index -> state
    topic_ids: Mapping[str, bytes] = field(default_factory=dict)


class MetadataCache:
    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self._lock = threading.Lock()
        self._snapshot = _Snapshot()
        self._initialized = False  # the controller's first UpdateMetadata has arrived
        self._on_initialized: list[Callable[[], None]] = []

    # ---- updates (UpdateMetadata) --------------------------------------------------------------------------

    def update(self, controller_id: int, brokers: Iterable[LiveBroker],
               partitions: Iterable[PartitionMetadata]) -> list[tuple[str, int]]:
        """Apply an UpdateMetadata request; returns the partitions it deleted."""
        with self._lock:
            old = self._snapshot
            states = {topic: dict(by_index) for topic, by_index in old.partitions.items()}
            topic_ids = dict(old.topic_ids)
            deleted = []
            for state in partitions:
                if state.leader == LEADER_DURING_DELETE:
                    if states.get(state.topic, {}).pop(state.index, None) is not None:
                        deleted.append((state.topic, state.index))
                    if not states.get(state.topic):
                        states.pop(state.topic, None)
                        topic_ids.pop(state.topic, None)
                    continue
                states.setdefault(state.topic, {})[state.index] = state
                if any(state.topic_id):
                    topic_ids[state.topic] = state.topic_id
            live = {broker.node_id: broker for broker in brokers}
            self._snapshot = _Snapshot(controller_id, live, states, topic_ids)
            waiting, self._on_initialized = self._on_initialized, []
            self._initialized = True
        for callback in waiting:
            callback()
        if controller_id != old.controller_id:
            log.info("Broker %d: the controller is now broker %d (was %d)", self.node_id, controller_id,
                     old.controller_id)
        if set(live) != set(old.brokers):
            log.info("Broker %d: live brokers are now %s", self.node_id, sorted(live))
        return deleted

    def when_initialized(self, callback: Callable[[], None]) -> bool:
        """False while the controller has not sent its first UpdateMetadata: `callback` then runs once it has (on
        the thread applying it). True, and `callback` is not kept, when the cache already holds the cluster."""
        with self._lock:
            if not self._initialized:
                self._on_initialized.append(callback)
            return self._initialized

    # ---- the replica layer's questions ---------------------------------------------------------------------

    @property
    def controller_id(self) -> int:
        return self._snapshot.controller_id

    def endpoint(self, node_id: int, listener: str) -> tuple[str, int] | None:
        broker = self._snapshot.brokers.get(node_id)
        return broker.endpoints.get(listener) if broker is not None else None

    def alive_broker_ids(self) -> list[int]:
        return sorted(self._snapshot.brokers)

    def partition_state(self, topic: str, index: int) -> PartitionMetadata | None:
        return self._snapshot.partitions.get(topic, {}).get(index)

    # ---- ClusterView -----------------------------------------------------------------------------------------

    def alive_brokers(self, listener: str) -> list[BrokerNode]:
        return [BrokerNode(broker.node_id, *broker.endpoints[listener], broker.rack)
                for broker in sorted(self._snapshot.brokers.values(), key=lambda b: b.node_id)
                if listener in broker.endpoints]

    def topic(self, name: str) -> TopicView | None:
        snapshot = self._snapshot
        by_index = snapshot.partitions.get(name)
        if not by_index:
            return None
        alive = snapshot.brokers
        return TopicView(name, snapshot.topic_ids.get(name, bytes(16)), tuple(
            PartitionView(state.index, state.leader if state.leader in alive else NO_LEADER, state.leader_epoch,
                          state.replicas, state.isr, state.offline_replicas)
            for _, state in sorted(by_index.items())))

    def topic_by_id(self, topic_id: bytes) -> TopicView | None:
        for name, known in self._snapshot.topic_ids.items():
            if known == topic_id:
                return self.topic(name)
        return None

    def topic_names(self) -> list[str]:
        return sorted(self._snapshot.partitions)
