"""The cluster metadata of a single-node broker: topics, their ids, partition counts and config overrides.

Kafka keeps this in its metadata log (`__cluster_metadata`); a single node keeps it in one JSON file,
`<first log dir>/cluster-metadata.json`, rewritten atomically (write a temporary file, fsync, rename) on every
change so a crash leaves either the old or the new state. Readers get immutable `TopicMetadata` values and never
take the lock: every change publishes a new dict.
"""

from __future__ import annotations

import json
import os
import re
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wirebroker.protocol.errors import (
    InvalidPartitionsError,
    InvalidTopicError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

METADATA_FILE = "cluster-metadata.json"
MAX_TOPIC_NAME_LENGTH = 249  # Kafka's Topic.MAX_NAME_LENGTH: a partition dir name must fit in 255 bytes
_LEGAL_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    topic_id: bytes  # 16 bytes, Kafka's Uuid
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)  # topic-level overrides only

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


def validate_topic_name(name: str) -> None:
    """Kafka's Topic.validate: InvalidTopicException for names a partition directory cannot carry."""
    if not name:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicError("Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, topic name: {name}"
        )
    if not _LEGAL_TOPIC_NAME.match(name):
        raise InvalidTopicError(
            f"Topic name \"{name}\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'"
        )


class MetadataStore:
    """Topics by name and by id, with the next producer id to hand out; persisted on every change."""

    def __init__(self, log_dir: Path, cluster_id: str, node_id: int) -> None:
        self.path = log_dir / METADATA_FILE
        self.cluster_id = cluster_id
        self.node_id = node_id
        self._lock = threading.Lock()
        self._topics: dict[str, TopicMetadata] = {}
        self._by_id: dict[bytes, TopicMetadata] = {}
        self._next_producer_id = 0
        self._load()

    # ---- reads (lock-free) ---------------------------------------------------------------------------------

    def topic(self, name: str) -> TopicMetadata | None:
        return self._topics.get(name)

    def topic_by_id(self, topic_id: bytes) -> TopicMetadata | None:
        return self._by_id.get(topic_id)

    def topics(self) -> list[TopicMetadata]:
        return list(self._topics.values())

    # ---- changes -------------------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, configs: Mapping[str, str] | None = None) -> TopicMetadata:
        validate_topic_name(name)
        if partitions < 1:
            raise InvalidPartitionsError(f"Number of partitions must be larger than 0, got {partitions}")
        with self._lock:
            if name in self._topics:
                raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
            topic = TopicMetadata(name, uuid.uuid4().bytes, partitions, dict(configs or {}))
            self._publish({**self._topics, name: topic})
            return topic

    def delete_topic(self, name: str) -> TopicMetadata:
        with self._lock:
            topic = self._topics.get(name)
            if topic is None:
                raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
            self._publish({n: t for n, t in self._topics.items() if n != name})
            return topic

    def set_partition_count(self, name: str, partitions: int) -> TopicMetadata:
        with self._lock:
            topic = self._require(name)
            if partitions <= topic.partitions:
                raise InvalidPartitionsError(
                    f"Topic currently has {topic.partitions} partitions, {partitions} would not be an increase."
                )
            updated = TopicMetadata(topic.name, topic.topic_id, partitions, topic.configs)
            self._publish({**self._topics, name: updated})
            return updated

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> TopicMetadata:
        with self._lock:
            topic = self._require(name)
            updated = TopicMetadata(topic.name, topic.topic_id, topic.partitions, dict(configs))
            self._publish({**self._topics, name: updated})
            return updated

    def allocate_producer_id(self) -> int:
        with self._lock:
            producer_id = self._next_producer_id
            self._next_producer_id += 1
            self._save(self._topics)
            return producer_id

    # ---- persistence ---------------------------------------------------------------------------------------

    def _require(self, name: str) -> TopicMetadata:
        topic = self._topics.get(name)
        if topic is None:
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
        return topic

    def _publish(self, topics: dict[str, TopicMetadata]) -> None:
        self._save(topics)
        self._topics = topics
        self._by_id = {t.topic_id: t for t in topics.values()}

    def _save(self, topics: Mapping[str, TopicMetadata]) -> None:
        state = {
            "version": 1,
            "cluster_id": self.cluster_id,
            "next_producer_id": self._next_producer_id,
            "topics": [
                {"name": t.name, "topic_id": uuid.UUID(bytes=t.topic_id).hex, "partitions": t.partitions,
                 "configs": dict(t.configs)}
                for t in topics.values()
            ],
        }
        temporary = self.path.with_suffix(".tmp")
        with open(temporary, "w") as out:
            json.dump(state, out, indent=1)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)

    def _load(self) -> None:
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._save({})
            return
        state = json.loads(self.path.read_text())
        self._next_producer_id = state["next_producer_id"]
        topics = {
            t["name"]: TopicMetadata(t["name"], uuid.UUID(hex=t["topic_id"]).bytes, t["partitions"], t["configs"])
            for t in state["topics"]
        }
        self._topics = topics
        self._by_id = {t.topic_id: t for t in topics.values()}
