"""Topics in ZooKeeper: replica assignments (/brokers/topics/<topic>), config overrides (/config/topics/<topic>) and
deletion requests (/admin/delete_topics/<topic>), as Kafka's AdminZkClient and KafkaZkClient keep them.

Any broker may create a topic (config first, then the assignment, whose appearance the controller watches);
changes to an existing assignment (new partitions, reassignment) are the controller's and are fenced by its epoch.
"""

from __future__ import annotations

from collections.abc import Mapping

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import NodeExistsError, NoNodeError

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.data import TopicAssignment, decode_topic_config, encode_topic_config
from wirebroker.cluster.zk.fenced import Write, commit_fenced
from wirebroker.protocol.errors import TopicAlreadyExistsError


def create_topic(zk: KazooClient, topic: str, assignment: TopicAssignment,
                 config: Mapping[str, str] | None = None) -> None:
    """Kafka's AdminZkClient.createTopicWithAssignment: TopicAlreadyExistsError when /brokers/topics/<topic> exists."""
    if zk.exists(paths.topic(topic)):
        raise TopicAlreadyExistsError(f"Topic '{topic}' already exists.")
    set_topic_config(zk, topic, config or {})
    try:
        zk.create(paths.topic(topic), assignment.encode(), makepath=True)
    except NodeExistsError:
        raise TopicAlreadyExistsError(f"Topic '{topic}' already exists.") from None


def get_all_topics(zk: KazooClient) -> list[str]:
    try:
        return sorted(zk.get_children(paths.TOPICS))
    except NoNodeError:
        return []


def get_topic_assignment(zk: KazooClient, topic: str) -> TopicAssignment | None:
    try:
        data, _ = zk.get(paths.topic(topic))
    except NoNodeError:
        return None
    return TopicAssignment.decode(data)


def get_all_topic_assignments(zk: KazooClient) -> dict[str, TopicAssignment]:
    assignments = {topic: get_topic_assignment(zk, topic) for topic in get_all_topics(zk)}
    return {topic: assignment for topic, assignment in assignments.items() if assignment is not None}


def set_topic_assignment(zk: KazooClient, topic: str, assignment: TopicAssignment, epoch_zk_version: int) -> None:
    """The controller's change of an existing assignment (partitions added, reassignment), fenced by its epoch."""
    def write(transaction: TransactionRequest) -> None:
        transaction.set_data(paths.topic(topic), assignment.encode())

    result = commit_fenced(zk, epoch_zk_version, {topic: write})[topic]
    if isinstance(result, Exception):
        raise result


def get_topic_config(zk: KazooClient, topic: str) -> dict[str, str]:
    """The topic's overrides (an empty dict when it has none)."""
    try:
        data, _ = zk.get(paths.topic_config(topic))
    except NoNodeError:
        return {}
    return decode_topic_config(data)


def set_topic_config(zk: KazooClient, topic: str, config: Mapping[str, str]) -> None:
    """Replace the topic's overrides (Kafka's setOrCreateEntityConfigs)."""
    data = encode_topic_config(config)
    try:
        zk.set(paths.topic_config(topic), data)
    except NoNodeError:
        zk.create(paths.topic_config(topic), data, makepath=True)


def mark_topic_for_deletion(zk: KazooClient, topic: str) -> None:
    """Queue the topic for the controller's TopicDeletionManager (a second request is a no-op)."""
    try:
        zk.create(paths.delete_topic(topic), b"", makepath=True)
    except NodeExistsError:
        pass


def get_topics_marked_for_deletion(zk: KazooClient) -> list[str]:
    try:
        return sorted(zk.get_children(paths.DELETE_TOPICS))
    except NoNodeError:
        return []


def delete_topic_znodes(zk: KazooClient, topic: str, epoch_zk_version: int) -> None:
    """The controller's last step of a deletion: the assignment with its partition states, the config, the request.
    Each removal is fenced by the controller epoch; the assignment's children go first (ZooKeeper deletes leaves)."""
    partitions = [int(p) for p in _children(zk, paths.topic_partitions(topic))]
    levels = [
        [paths.partition_state(topic, p) for p in partitions],
        [paths.topic_partition(topic, p) for p in partitions],
        [paths.topic_partitions(topic)],
        [paths.topic(topic), paths.topic_config(topic), paths.delete_topic(topic)],
    ]
    for level in levels:
        results = commit_fenced(zk, epoch_zk_version, {path: _delete(path) for path in level})
        for result in results.values():
            if isinstance(result, Exception) and not isinstance(result, NoNodeError):
                raise result


def _delete(path: str) -> Write:
    return lambda transaction: transaction.delete(path)


def _children(zk: KazooClient, path: str) -> list[str]:
    try:
        return zk.get_children(path)
    except NoNodeError:
        return []
