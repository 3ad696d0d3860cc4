"""DescribeTopicPartitions: API key 75, version 0 (KIP-966).

The Java admin client (3.9+, Spark's included) describes topics with it instead of Metadata, in pages.

Behaviour (Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache):
- The requested topics, or all topics for an empty list, in name order, from the cursor on: the cursor's topic
  starts at its partition_index, later topics at 0. A cursor naming a topic missing from a non-empty list fails the
  request: every requested topic gets INVALID_REQUEST.
- At most min(response_partition_limit, 2000) partitions per answer. When the limit stops a topic part-way, or
  falls exactly before the next topic, next_cursor says where the next page starts.
- Each partition is led by this node (its leader epoch from the replica layer), with this node as the only replica
  and in-sync replica, and no eligible leader replicas (KIP-966's ELR needs more than one broker).
- A requested topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for an illegal
  name. Authorized operations are always filled in: everything is allowed without an authorizer (KIP-430).
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import TOPIC_OPERATIONS
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.metadata import INTERNAL_TOPICS, TopicMetadata, validate_topic_name
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
    cursor = request.cursor
    remaining = min(MAX_PARTITIONS_PER_RESPONSE, request.response_partition_limit)
    response = DescribeTopicPartitionsResponse()
    for name in names:
        if remaining == 0:
            response.next_cursor = _Cursor(topic_name=name, partition_index=0)
            break
        topic = ctx.broker.metadata.topic(name)
        if topic is None:
            if request.topics:
                response.topics.append(_missing_topic(name))
            continue
        first = cursor.partition_index if cursor is not None and cursor.topic_name == name else 0
        end = min(topic.partitions, first + remaining)
        response.topics.append(_topic(ctx, topic, range(first, end)))
        if end < topic.partitions:
            response.next_cursor = _Cursor(topic_name=name, partition_index=end)
            break
        remaining -= max(end - first, 0)
    return response


def _topic_names(ctx: RequestContext, request: DescribeTopicPartitionsRequest) -> list[str]:
    cursor_topic = request.cursor.topic_name if request.cursor is not None else ""
    if not request.topics:
        return sorted(t.name for t in ctx.broker.metadata.topics() if t.name >= cursor_topic)
    names = {t.name for t in request.topics if t.name >= cursor_topic}
    if request.cursor is not None and request.cursor.topic_name not in names:
        raise InvalidRequestError(
            f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: {request.cursor.topic_name}")
    return sorted(names)


def _topic(ctx: RequestContext, topic: TopicMetadata, indexes: range) -> _Topic:
    node = ctx.broker.node_id
    replica_manager = ctx.broker.replica_manager
    partitions = []
    for index in indexes:
        hosted = replica_manager.partition(topic.name, index)
        partitions.append(_Partition(
            error_code=ErrorCode.NONE, partition_index=index, leader_id=node,
            leader_epoch=hosted.leader_epoch if hosted is not None else 0,
            replica_nodes=[node], isr_nodes=[node], eligible_leader_replicas=[], last_known_elr=[],
            offline_replicas=[],
        ))
    return _Topic(error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=topic.is_internal,
                  partitions=partitions, topic_authorized_operations=TOPIC_OPERATIONS)


def _missing_topic(name: str) -> _Topic:
    try:
        validate_topic_name(name)
    except KafkaError as exc:
        return _error_topic(name, exc.code, name in INTERNAL_TOPICS)
    return _error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name in INTERNAL_TOPICS)


def _error_topic(name: str, code: int, is_internal: bool = False) -> _Topic:
    return _Topic(error_code=code, name=name, topic_id=UUID_ZERO, is_internal=is_internal, partitions=[])


serve(API_KEY, handle)
