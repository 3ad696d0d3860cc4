"""The single-node controller: creates and deletes topics, adds partitions, changes topic configs.

Kafka's KRaft controller validates such requests, writes them to the metadata log, and brokers apply the records
(BrokerMetadataPublisher). Here the controller validates, writes the metadata store, then publishes the change to
its listeners (the replica manager creates or deletes logs), in that order, so a crash between the two is repaired
at start-up when the replica manager hosts every partition the store names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from enum import Enum

from wirebroker.cluster.metadata import MetadataStore, TopicMetadata, validate_topic_name
from wirebroker.log.config import LogConfig
from wirebroker.protocol.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    TopicAlreadyExistsError,
)

log = logging.getLogger(__name__)

USE_DEFAULT = -1  # CreateTopics' "let the broker decide" for partitions and replication factor


class Change(Enum):
    CREATED = "created"
    DELETED = "deleted"
    PARTITIONS_ADDED = "partitions added"
    CONFIGS_CHANGED = "configs changed"


Listener = Callable[[Change, TopicMetadata], None]


class Controller:
    def __init__(self, store: MetadataStore, default_partitions: int, default_replication_factor: int,
                 live_brokers: int = 1) -> None:
        self.store = store
        self.default_partitions = default_partitions
        self.default_replication_factor = default_replication_factor
        self.live_brokers = live_brokers
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _publish(self, change: Change, topic: TopicMetadata) -> None:
        """Tell the listeners; the change is already stored, so a failing listener is logged, not re-raised (a
        client told of a failure would retry a change that happened). Start-up re-applies the stored state."""
        log.info("topic %s (%d partitions): %s", topic.name, topic.partitions, change.value)
        for listener in self._listeners:
            try:
                listener(change, topic)
            except Exception:
                log.exception("applying '%s' to topic %s failed; it is stored and will be applied at the next start",
                              change.value, topic.name)

    def create_topic(self, name: str, partitions: int = USE_DEFAULT, replication_factor: int = USE_DEFAULT,
                     configs: Mapping[str, str] | None = None, validate_only: bool = False) -> TopicMetadata:
        validate_topic_name(name)
        if self.store.topic(name) is not None:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        partitions = self.default_partitions if partitions == USE_DEFAULT else partitions
        if partitions < 1:
            raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
        replication_factor = self.default_replication_factor if replication_factor == USE_DEFAULT else replication_factor
        self.check_replication_factor(replication_factor)
        configs = dict(configs or {})
        self.validate_configs(configs)
        if validate_only:
            return TopicMetadata(name, bytes(16), partitions, configs)
        topic = self.store.create_topic(name, partitions, configs)
        self._publish(Change.CREATED, topic)
        return topic

    def check_replication_factor(self, replication_factor: int) -> None:
        if replication_factor < 1:
            raise InvalidReplicationFactorError("Replication factor must be larger than 0, or -1 to use the default.")
        if replication_factor > self.live_brokers:
            raise InvalidReplicationFactorError(
                f"Unable to replicate the partition {replication_factor} time(s): The target replication factor of "
                f"{replication_factor} cannot be reached because only {self.live_brokers} broker(s) are registered."
            )

    @staticmethod
    def validate_configs(configs: Mapping[str, str]) -> None:
        try:
            LogConfig.from_props(configs)
        except InvalidConfigError:
            raise
        except ValueError as exc:
            raise InvalidConfigError(str(exc)) from None

    def delete_topic(self, name: str) -> TopicMetadata:
        topic = self.store.delete_topic(name)
        self._publish(Change.DELETED, topic)
        return topic

    def create_partitions(self, name: str, count: int, validate_only: bool = False) -> TopicMetadata:
        topic = self.store.topic(name)
        if topic is not None and count <= topic.partitions:
            raise InvalidPartitionsError(
                f"Topic currently has {topic.partitions} partitions, which is higher than the requested {count}."
            )
        if validate_only:
            return self.store._require(name)
        topic = self.store.set_partition_count(name, count)
        self._publish(Change.PARTITIONS_ADDED, topic)
        return topic

    def set_topic_configs(self, name: str, configs: Mapping[str, str], validate_only: bool = False) -> TopicMetadata:
        self.validate_configs(configs)
        if validate_only:
            return self.store._require(name)
        topic = self.store.set_topic_configs(name, configs)
        self._publish(Change.CONFIGS_CHANGED, topic)
        return topic
