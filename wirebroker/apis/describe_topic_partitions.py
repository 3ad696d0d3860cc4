"""DescribeTopicPartitions: API key 75, version 0 (KIP-966).

The Java admin client (3.9+, Spark's included) describes topics with it instead of Metadata, in pages.

Behaviour (Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache):
- The requested topics, or all topics for an empty list, in name order, from the cursor on: the cursor's topic
  starts at its partition_index, later topics at 0. A cursor naming a topic missing from a non-empty list fails the
  request: every requested topic gets INVALID_REQUEST.
- At most min(response_partition_limit, 2000) partitions per answer. When the limit stops a topic part-way, or
  falls exactly before the next topic, next_cursor says where the next page starts.
- Each partition's leader, leader epoch, replicas, ISR and offline replicas come from the broker's cluster view
  (this node alone on a single broker; the controller's metadata cache in a cluster), with no eligible leader
  replicas (KIP-966's ELR is KRaft's). A partition without a live leader is LEADER_NOT_AVAILABLE, leader -1.
- A requested topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for an illegal
  name. Authorized operations are always filled in (KIP-430, from the ACLs; all of them without an authorizer).
- With an authorizer each topic needs DESCRIBE: the others are left out of a listing of all topics, and a topic
  asked for by name is TOPIC_AUTHORIZATION_FAILED, after the page (it takes no room in it).
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import authorized_operations
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.cluster_view import NO_LEADER, PartitionView, TopicView
from wirebroker.cluster.metadata import INTERNAL_TOPICS, validate_topic_name
from wirebroker.protocol.errors import ErrorCode, InvalidRequestError, KafkaError
from wirebroker.protocol.messages.describe_topic_partitions import (
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
)
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 75

MAX_PARTITIONS_PER_RESPONSE = 2000  # Kafka's max.request.partition.size.limit default
NO_MORE_PARTITIONS = -1

_Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
_Partition = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponsePartition
_Cursor = DescribeTopicPartitionsResponse.Cursor


def handle(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> DescribeTopicPartitionsResponse:
    try:
        names = _topic_names(ctx, request)
    except KafkaError as exc:
        return DescribeTopicPartitionsResponse(topics=[_error_topic(t.name, exc.code) for t in request.topics])
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names, log_denied=bool(request.topics))
    refused = [_error_topic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for name in names
               if name not in described and request.topics]
    names = [name for name in names if name in described]
    cursor = request.cursor
    remaining = min(MAX_PARTITIONS_PER_RESPONSE, request.response_partition_limit)
    response = DescribeTopicPartitionsResponse()
    for name in names:
        if remaining == 0:
            response.next_cursor = _Cursor(topic_name=name, partition_index=0)
            break
        topic = ctx.broker.cluster_view.topic(name)
        if topic is None:
            if request.topics:
                response.topics.append(_missing_topic(name))
            continue
        first = cursor.partition_index if cursor is not None and cursor.topic_name == name else 0
        count = len(topic.partitions)
        end = min(count, first + remaining)
        response.topics.append(_topic(topic, topic.partitions[first:end]))
        if end < count:
            response.next_cursor = _Cursor(topic_name=name, partition_index=end)
            break
        remaining -= max(end - first, 0)
    for topic in response.topics:
        topic.topic_authorized_operations = authorized_operations(ctx, ResourceType.TOPIC, topic.name)
    response.topics.extend(refused)
    return response


def _topic_names(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> list[str]:
    cursor_topic = request.cursor.topic_name if request.cursor is not None else ""
    if not request.topics:
        return sorted(name for name in ctx.broker.cluster_view.topic_names() if name >= cursor_topic)
    names = {t.name for t in request.topics if t.name >= cursor_topic}
    if request.cursor is not None and request.cursor.topic_name not in names:
        raise InvalidRequestError(
            f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: {request.cursor.topic_name}")
    return sorted(names)


def _topic(topic: TopicView, partitions: tuple[PartitionView, ...]) -> _Topic:
    return _Topic(error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=topic.is_internal,
                  partitions=[_Partition(
                      error_code=ErrorCode.NONE if p.leader != NO_LEADER else ErrorCode.LEADER_NOT_AVAILABLE,
                      partition_index=p.index, leader_id=p.leader, leader_epoch=p.leader_epoch,
                      replica_nodes=list(p.replicas), isr_nodes=list(p.isr), eligible_leader_replicas=[],
                      last_known_elr=[], offline_replicas=list(p.offline_replicas))
                      for p in partitions])


def _missing_topic(name: str) -> _Topic:
    try:
        validate_topic_name(name)
    except KafkaError as exc:
        return _error_topic(name, exc.code, name in INTERNAL_TOPICS)
    return _error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name in INTERNAL_TOPICS)


def _error_topic(name: str, code: int, is_internal: bool = False) -> _Topic:
    return _Topic(error_code=code, name=name, topic_id=UUID_ZERO, is_internal=is_internal, partitions=[])


serve(API_KEY, handle)
