"""What the metadata APIs tell clients about the cluster: brokers, the controller, topics and their partitions.

Metadata, DescribeCluster and DescribeTopicPartitions answer from a `ClusterView`, one object the broker exposes in
either mode: `SingleNodeView` on a single broker (every partition led by this node at epoch 0, the node its only
replica), or the metadata cache a controller fills in a cluster (metadata_cache.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from wirebroker.cluster.metadata import INTERNAL_TOPICS, MetadataStore, TopicMetadata

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class BrokerNode:
    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class PartitionView:
    index: int
    leader: int  # NO_LEADER when no live broker leads it
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicView:
    name: str
    topic_id: bytes
    partitions: tuple[PartitionView, ...]

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


class ClusterView(Protocol):
    @property
    def controller_id(self) -> int: ...

    def alive_brokers(self, listener: str) -> list[BrokerNode]:
        """The live brokers with their endpoint on `listener` (those without one are left out, as Kafka does)."""
        ...

    def topic(self, name: str) -> TopicView | None: ...

    def topic_by_id(self, topic_id: bytes) -> TopicView | None: ...

    def topic_names(self) -> list[str]: ...


class SingleNodeView:
    """A single broker's view: the metadata store's topics, all led here."""

    def __init__(self, store: MetadataStore, node_id: int, endpoint: Callable[[str], tuple[str, int]],
                 rack: str | None) -> None:
        self._store = store
        self._node_id = node_id
        self._endpoint = endpoint
        self._rack = rack

    @property
    def controller_id(self) -> int:
        return self._node_id

    def alive_brokers(self, listener: str) -> list[BrokerNode]:
        host, port = self._endpoint(listener)
        return [BrokerNode(self._node_id, host, port, self._rack)]

    def topic(self, name: str) -> TopicView | None:
        topic = self._store.topic(name)
        return self._view(topic) if topic is not None else None

    def topic_by_id(self, topic_id: bytes) -> TopicView | None:
        topic = self._store.topic_by_id(topic_id)
        return self._view(topic) if topic is not None else None

    def topic_names(self) -> list[str]:
        return [topic.name for topic in self._store.topics()]

    def _view(self, topic: TopicMetadata) -> TopicView:
        node = (self._node_id,)
        return TopicView(topic.name, topic.topic_id,
                         tuple(PartitionView(index, self._node_id, 0, node, node) for index in range(topic.partitions)))
