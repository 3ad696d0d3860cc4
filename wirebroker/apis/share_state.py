"""What the share-state APIs share (Kafka's persister RPCs, keys 83-87, answered by the share coordinator): each
names (topic id, partition) pairs of one group and answers each, grouped by topic in request order. A topic id
this broker does not know is UNKNOWN_TOPIC_OR_PARTITION for its partitions; with an authorizer, a principal without
CLUSTER_ACTION on the cluster (they are inter-broker RPCs) gets CLUSTER_AUTHORIZATION_FAILED for each; a Kafka
error raised for one partition is that partition's answer. On a single broker a change made through them drops the
share-partition from the share-partition manager's memory, so its next fetch reads the state again; in a cluster
they are the share-partition leaders' own persister calls, and a leader whose share-partition an admin reset is
fenced by the state epoch instead (coordinator/share_partition_manager.py)."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from wirebroker.apis.context import RequestContext
from wirebroker.apis.share_services import share_services
from wirebroker.cluster.acls import AclOperation
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    ErrorCode,
    KafkaError,
    UnknownTopicOrPartitionError,
)

TOPIC_ID_BYTES = 16


def answer_each(ctx: RequestContext, topics: list[Any], topic_result: type, partition_result: type,
                answer: Callable[[Any, Any], dict[str, Any]], changes: bool = False) -> list[Any]:
    """[topic_result(topic_id, partitions=[partition_result(partition, error_code, **answer(topic, p))])]."""
    results = []
    refused = not ctx.authorize(AclOperation.CLUSTER_ACTION)
    for topic in topics:
        partitions = []
        for partition in topic.partitions:
            try:
                if refused:
                    raise ClusterAuthorizationFailedError()
                known = ctx.broker.metadata.topic_by_id(topic.topic_id)
                if known is None or not 0 <= partition.partition < known.partitions:
                    raise UnknownTopicOrPartitionError("This server does not host this topic-partition.")
                fields = {"error_code": ErrorCode.NONE, **answer(topic, partition)}
            except KafkaError as exc:
                fields = {"error_code": exc.code, "error_message": str(exc)}
            partitions.append(partition_result(partition=partition.partition, **fields))
        results.append(topic_result(topic_id=topic.topic_id, partitions=partitions))
    return results


def is_share_partition_key(key: str) -> bool:
    """Kafka's SharePartitionKey.validate: "group:topic id:partition", a non-empty group (which may hold colons), a
    topic id in Kafka's base64 form and a partition number."""
    fields = key.rsplit(":", 2)
    if len(fields) != 3 or not fields[0] or not fields[2].isdigit():
        return False
    try:
        return len(base64.urlsafe_b64decode(fields[1] + "==")) == TOPIC_ID_BYTES
    except ValueError:
        return False


def forget(ctx: RequestContext, group_id: str, topic_id: bytes, partition: int) -> None:
    if ctx.broker.metadata_cache is None:
        share_services(ctx.broker).partitions.forget([(group_id, topic_id, partition)])
