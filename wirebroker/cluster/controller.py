"""Topic administration: creating and deleting topics, adding partitions, changing topic configs.

TopicAdmin is what the API handlers call, in either mode: the single-node Controller here, or, with
`zookeeper.connect`, cluster/zk/admin.py's ZkAdmin (Kafka's AdminZkClient), which writes the znodes and leaves the
rest to the active controller. Both check the same things and tell the same listeners.

The single-node controller:

Kafka's KRaft controller validates such requests, writes them to the metadata log, and brokers apply the records
(BrokerMetadataPublisher). Here the controller validates, writes the metadata store, then publishes the change to
its listeners (the replica manager creates or deletes logs), in that order, so a crash between the two is repaired
at start-up when the replica manager hosts every partition the store names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
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


class TopicAdmin:
    """The operations on topics, with the checks and the listeners both implementations share."""

    def __init__(self, default_partitions: int, default_replication_factor: int) -> None:
        self.default_partitions = default_partitions
        self.default_replication_factor = default_replication_factor
        self._listeners: list[Listener] = []

    def registered_brokers(self) -> list[int]:
        """The ids of the brokers replicas can be assigned to."""
        raise NotImplementedError

    def internal_topic_replication_factor(self, wanted: int) -> int:
        """The replication factor an internal topic (`__consumer_offsets`) is created with: `wanted`, or an error
        while fewer brokers are up (Kafka refuses, and the coordinator answers COORDINATOR_NOT_AVAILABLE)."""
        self.check_replication_factor(wanted)
        return wanted

    def create_topic(self, name: str, partitions: int = USE_DEFAULT, replication_factor: int = USE_DEFAULT,
                     configs: Mapping[str, str] | None = None, validate_only: bool = False,
                     assignment: Mapping[int, Sequence[int]] | None = None) -> TopicMetadata:
        """`assignment`: the replicas of each partition when the request names them (already checked against the
        registered brokers), else they are assigned here."""
        raise NotImplementedError

    def delete_topic(self, name: str) -> TopicMetadata:
        raise NotImplementedError

    def create_partitions(self, name: str, count: int, validate_only: bool = False,
                          assignment: Sequence[Sequence[int]] | None = None) -> TopicMetadata:
        """`assignment`: the new partitions' replicas when the request names them (already checked)."""
        raise NotImplementedError

    def replication_factor(self, name: str) -> int:
        """The replica count of the topic's partitions (what added partitions must have)."""
        raise NotImplementedError

    def set_topic_configs(self, name: str, configs: Mapping[str, str], validate_only: bool = False) -> TopicMetadata:
        raise NotImplementedError

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

    def check_new_topic(self, name: str, exists: bool, partitions: int, replication_factor: int,
                        configs: Mapping[str, str] | None) -> tuple[int, int, dict[str, str]]:
        """The partition count, replication factor and configs a new topic gets, defaults applied, once checked in
        Kafka's order."""
        validate_topic_name(name)
        if exists:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        partitions = self.default_partitions if partitions == USE_DEFAULT else partitions
        if partitions < 1:
            raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
        if replication_factor == USE_DEFAULT:
            replication_factor = self.default_replication_factor
        self.check_replication_factor(replication_factor)
        configs = dict(configs or {})
        self.validate_configs(configs)
        return partitions, replication_factor, configs

    def check_replication_factor(self, replication_factor: int) -> None:
        live = len(self.registered_brokers())
        if replication_factor < 1:
            raise InvalidReplicationFactorError("Replication factor must be larger than 0, or -1 to use the default.")
        if replication_factor > live:
            raise InvalidReplicationFactorError(
                f"Unable to replicate the partition {replication_factor} time(s): The target replication factor of "
                f"{replication_factor} cannot be reached because only {live} broker(s) are registered."
            )

    @staticmethod
    def validate_configs(configs: Mapping[str, str]) -> None:
        try:
            LogConfig.from_props(configs)
        except InvalidConfigError:
            raise
        except ValueError as exc:
            raise InvalidConfigError(str(exc)) from None


class Controller(TopicAdmin):
    """The single-node controller: the metadata store holds every topic, this broker every replica."""

    def __init__(self, store: MetadataStore, default_partitions: int, default_replication_factor: int) -> None:
        super().__init__(default_partitions, default_replication_factor)
        self.store = store

    def registered_brokers(self) -> list[int]:
        return [self.store.node_id]

    def internal_topic_replication_factor(self, wanted: int) -> int:
        """Capped at the one broker there is, with a warning: Kafka's refusal would leave a single node without
        consumer groups under the default factor of 3."""
        if wanted > 1:
            log.warning("creating an internal topic with replication factor 1: its replication factor setting is %d "
                        "but this is a single-node broker", wanted)
        return 1

    def create_topic(self, name: str, partitions: int = USE_DEFAULT, replication_factor: int = USE_DEFAULT,
                     configs: Mapping[str, str] | None = None, validate_only: bool = False,
                     assignment: Mapping[int, Sequence[int]] | None = None) -> TopicMetadata:
        partitions, replication_factor, configs = self.check_new_topic(
            name, self.store.topic(name) is not None, partitions, replication_factor, configs)
        if validate_only:
            return TopicMetadata(name, bytes(16), partitions, configs)
        topic = self.store.create_topic(name, partitions, configs)
        self._publish(Change.CREATED, topic)
        return topic

    def delete_topic(self, name: str) -> TopicMetadata:
        topic = self.store.delete_topic(name)
        self._publish(Change.DELETED, topic)
        return topic

    def replication_factor(self, name: str) -> int:
        return 1

    def create_partitions(self, name: str, count: int, validate_only: bool = False,
                          assignment: Sequence[Sequence[int]] | None = None) -> TopicMetadata:
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
