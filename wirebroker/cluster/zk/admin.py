"""Topic administration in ZooKeeper mode (Kafka's ZK-era ZkAdminManager over AdminZkClient): any broker writes the
znodes, the active controller does the rest.

- create_topic: replicas assigned over the live brokers (assign_replicas_to_brokers, rack-aware), a new topic id;
  /config/topics/<topic> then /brokers/topics/<topic>, whose appearance the controller watches.
- create_partitions: the new partitions' replicas appended to /brokers/topics/<topic> (a compare-and-set on the
  znode's version), continuing the round robin from partition 0's first replica as Kafka does.
- delete_topic: /admin/delete_topics/<topic>; the controller stops and deletes the replicas, then the znodes.
- set_topic_configs: /config/topics/<topic> and a /config/changes/config_change_<seq> notification
  (`{"version":2,"entity_path":"topics/<topic>"}`), which every broker's ConfigChangeListener turns into a
  CONFIGS_CHANGED for its listeners, so logs everywhere take the new settings.

Each writes ZooKeeper and returns at once, as Kafka's AdminZkClient does: the change is done when the controller has
carried it out, which the API handlers wait for in the topic purgatory, off the request thread, until the broker's
metadata shows it (apis/delayed_topic_change.py). No CREATED/DELETED/PARTITIONS_ADDED is published: in this mode
replicas come and go by the controller's LeaderAndIsr and StopReplica.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NoNodeError

from wirebroker.cluster.controller import USE_DEFAULT, Change, TopicAdmin
from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.assignment import BrokerMetadata, assign_replicas_to_brokers
from wirebroker.cluster.zk.brokers import get_live_brokers
from wirebroker.cluster.zk.change_notifications import (
    ChangeNotificationListener,
    notify,
)
from wirebroker.cluster.zk.controller_requests import topic_id_bytes
from wirebroker.cluster.zk.data import ReplicaAssignment, TopicAssignment
from wirebroker.cluster.zk.topics import (
    create_topic,
    get_topic_assignment,
    get_topic_config,
    mark_topic_for_deletion,
    set_topic_config,
)
from wirebroker.log.metadata_files import uuid_to_kafka_string
from wirebroker.protocol.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    UnknownTopicOrPartitionError,
)

log = logging.getLogger(__name__)

CONFIG_CHANGE_VERSION = 2
TOPICS_ENTITY = "topics"


class ZkAdmin(TopicAdmin):
    def __init__(self, zk: KazooClient, default_partitions: int, default_replication_factor: int) -> None:
        super().__init__(default_partitions, default_replication_factor)
        self.zk = zk

    def registered_brokers(self) -> list[int]:
        return sorted(int(child) for child in self.zk.get_children(paths.BROKER_IDS))

    def create_topic(self, name: str, partitions: int = USE_DEFAULT, replication_factor: int = USE_DEFAULT,
                     configs: Mapping[str, str] | None = None, validate_only: bool = False,
                     assignment: Mapping[int, Sequence[int]] | None = None) -> TopicMetadata:
        partitions, replication_factor, configs = self.check_new_topic(
            name, self.zk.exists(paths.topic(name)) is not None, partitions, replication_factor, configs)
        replicas = assignment or assign_replicas_to_brokers(self._brokers(), partitions, replication_factor)
        if validate_only:
            return TopicMetadata(name, bytes(16), partitions, configs)
        topic_id = uuid.uuid4()
        assignment = TopicAssignment(uuid_to_kafka_string(topic_id), {
            p: ReplicaAssignment(tuple(r)) for p, r in replicas.items()})
        create_topic(self.zk, name, assignment, configs)
        log.info("Creating topic %s with configuration %s and initial partition assignment %s", name, configs,
                 {p: list(r) for p, r in sorted(replicas.items())})
        return TopicMetadata(name, topic_id.bytes, partitions, configs)

    def delete_topic(self, name: str) -> TopicMetadata:
        assignment = get_topic_assignment(self.zk, name)
        if assignment is None:
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
        mark_topic_for_deletion(self.zk, name)
        log.info("Topic %s marked for deletion", name)
        return TopicMetadata(name, topic_id_bytes(assignment.topic_id), len(assignment.partitions),
                             get_topic_config(self.zk, name))

    def replication_factor(self, name: str) -> int:
        assignment = get_topic_assignment(self.zk, name)
        if assignment is None:
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
        return len(assignment.partitions[0].replicas)

    def create_partitions(self, name: str, count: int, validate_only: bool = False,
                          assignment: Sequence[Sequence[int]] | None = None) -> TopicMetadata:
        try:
            data, stat = self.zk.get(paths.topic(name))
        except NoNodeError:
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.") from None
        existing = TopicAssignment.decode(data)
        current = len(existing.partitions)
        if count <= current:
            raise InvalidPartitionsError(
                f"Topic currently has {current} partitions, which is higher than the requested {count}.")
        first = existing.partitions[0].replicas
        brokers = self._brokers()
        # Kafka continues the round robin from the broker of partition 0's first replica.
        start_index = next((i for i, b in enumerate(brokers) if b.broker_id >= first[0]), 0)
        added = ({current + i: list(replicas) for i, replicas in enumerate(assignment)} if assignment
                 else assign_replicas_to_brokers(brokers, count - current, len(first), fixed_start_index=start_index,
                                                 start_partition_id=current))
        topic = TopicMetadata(name, topic_id_bytes(existing.topic_id), count, get_topic_config(self.zk, name))
        if validate_only:
            return topic
        partitions = {**existing.partitions, **{p: ReplicaAssignment(tuple(r)) for p, r in added.items()}}
        try:
            self.zk.set(paths.topic(name), TopicAssignment(existing.topic_id, partitions).encode(), stat.version)
        except BadVersionError:
            raise InvalidReplicaAssignmentError(
                f"The assignment of topic {name} changed while partitions were added; try again") from None
        log.info("Adding partitions %s to topic %s", {p: r for p, r in sorted(added.items())}, name)
        return topic

    def set_topic_configs(self, name: str, configs: Mapping[str, str], validate_only: bool = False) -> TopicMetadata:
        self.validate_configs(configs)
        assignment = get_topic_assignment(self.zk, name)
        if assignment is None:
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
        topic = TopicMetadata(name, topic_id_bytes(assignment.topic_id), len(assignment.partitions), dict(configs))
        if validate_only:
            return topic
        set_topic_config(self.zk, name, configs)
        notify(self.zk, paths.CONFIG_CHANGES, paths.CONFIG_CHANGE_PREFIX,
               json.dumps({"version": CONFIG_CHANGE_VERSION, "entity_path": f"{TOPICS_ENTITY}/{name}"},
                          separators=(",", ":")).encode())
        self._publish(Change.CONFIGS_CHANGED, topic)  # here at once; other brokers through the notification
        return topic

    def configs_changed(self, topic: TopicMetadata) -> None:
        """Another broker changed the topic's configs (ConfigChangeListener)."""
        self._publish(Change.CONFIGS_CHANGED, topic)

    def _brokers(self) -> list[BrokerMetadata]:
        return [BrokerMetadata(b.broker_id, b.rack) for b in get_live_brokers(self.zk).values()]


class ConfigChangeListener:
    """Every broker's watch on /config/changes (Kafka's ZkNodeChangeNotificationListener with the topic config
    handler): each new notification for a topic re-reads /config/topics/<topic> and publishes CONFIGS_CHANGED
    through `admin`'s listeners. Notifications present at start-up are taken as applied (the logs read their
    configs when created)."""

    def __init__(self, zk: KazooClient, admin: ZkAdmin) -> None:
        self.zk = zk
        self.admin = admin
        self._notifications = ChangeNotificationListener(zk, paths.CONFIG_CHANGES, paths.CONFIG_CHANGE_PREFIX,
                                                         self._apply)

    def start(self) -> None:
        self._notifications.start()

    def _apply(self, data: bytes) -> None:
        entity_type, _, name = json.loads(data).get("entity_path", "").partition("/")
        if entity_type != TOPICS_ENTITY:
            return
        assignment = get_topic_assignment(self.zk, name)
        if assignment is None:
            return
        configs = get_topic_config(self.zk, name)
        log.info("Processing override for entity topics/%s: %s", name, configs)
        self.admin.configs_changed(TopicMetadata(
            name, topic_id_bytes(assignment.topic_id), len(assignment.partitions), configs))
