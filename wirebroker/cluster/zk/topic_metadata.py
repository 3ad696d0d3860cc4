"""The topics a broker in ZooKeeper mode knows, with MetadataStore's reads, and its producer ids.

Topics, their ids and partition counts are what the controller last told this broker (the metadata cache, filled by
UpdateMetadata), so the admin APIs agree with Metadata answers; config overrides are read from /config/topics once
per topic and then follow the config change notifications.

Producer ids come in blocks of 1000 claimed in /latest_producer_id_block (Kafka's ZkProducerIdManager): the znode
holds the last block handed out, `{"version":1,"broker":1,"block_start":"1000","block_end":"1999"}`, and a broker
claims the next one with a compare-and-set on its version, so no two brokers ever hand out the same id.
"""

from __future__ import annotations

import json
import threading
from typing import Protocol

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from wirebroker.cluster.cluster_view import TopicView
from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.topics import get_topic_config

PRODUCER_ID_BLOCK_SIZE = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
PRODUCER_ID_BLOCK_VERSION = 1


class TopicSource(Protocol):
    def topic(self, name: str) -> TopicView | None: ...

    def topic_by_id(self, topic_id: bytes) -> TopicView | None: ...

    def topic_names(self) -> list[str]: ...


class ZkTopicMetadata:
    def __init__(self, zk: KazooClient, source: TopicSource, node_id: int) -> None:
        self.zk = zk
        self.source = source
        self.node_id = node_id
        # Overrides by (topic, topic id), read once and then kept current by configs_changed: the coordinators ask on
        # every write, and ZooKeeper must not be on that path.
        self._configs: dict[tuple[str, bytes], dict[str, str]] = {}
        self._lock = threading.Lock()
        self._next_producer_id = 0
        self._block_end = -1

    def topic(self, name: str) -> TopicMetadata | None:
        return self._with_configs(self.source.topic(name))

    def topic_by_id(self, topic_id: bytes) -> TopicMetadata | None:
        return self._with_configs(self.source.topic_by_id(topic_id))

    def topics(self) -> list[TopicMetadata]:
        return [topic for topic in map(self.topic, self.source.topic_names()) if topic is not None]

    def configs_changed(self, topic: TopicMetadata) -> None:
        """A topic's new overrides (this broker's change, or another's through /config/changes)."""
        self._configs[(topic.name, topic.topic_id)] = dict(topic.configs)

    def _with_configs(self, view: TopicView | None) -> TopicMetadata | None:
        if view is None:
            return None
        key = (view.name, view.topic_id)  # a topic deleted and created again has a new id
        configs = self._configs.get(key)
        if configs is None:
            configs = self._configs[key] = get_topic_config(self.zk, view.name)
        return TopicMetadata(view.name, view.topic_id, len(view.partitions), configs)

    def allocate_producer_id(self) -> int:
        with self._lock:
            if self._next_producer_id > self._block_end:
                self._next_producer_id, self._block_end = self._claim_block()
            producer_id = self._next_producer_id
            self._next_producer_id += 1
            return producer_id

    def _claim_block(self) -> tuple[int, int]:
        while True:
            try:
                data, stat = self.zk.get(paths.LATEST_PRODUCER_ID_BLOCK)
            except NoNodeError:
                data, stat = None, None
            start = int(json.loads(data)["block_end"]) + 1 if data else 0
            block = {"version": PRODUCER_ID_BLOCK_VERSION, "broker": self.node_id, "block_start": str(start),
                     "block_end": str(start + PRODUCER_ID_BLOCK_SIZE - 1)}
            encoded = json.dumps(block, separators=(",", ":")).encode()
            try:
                if stat is None:
                    self.zk.create(paths.LATEST_PRODUCER_ID_BLOCK, encoded, makepath=True)
                else:
                    self.zk.set(paths.LATEST_PRODUCER_ID_BLOCK, encoded, stat.version)
            except (BadVersionError, NodeExistsError):
                continue  # another broker claimed this block first
            return start, start + PRODUCER_ID_BLOCK_SIZE - 1
