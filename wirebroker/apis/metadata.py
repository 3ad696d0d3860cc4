"""Metadata: API key 3, versions 0-12.

Behaviour:
- Brokers: this node, at the advertised address of the listener the request came in on.
- Topics: the requested ones, or all of them for a null list (v1+) or an empty list (v0).
- A requested topic that does not exist is created when `auto.create.topics.enable` is on and the request allows
  it (v4+ `allow_auto_topic_creation`; always before v4), with `num.partitions` partitions, like Kafka: Metadata is
  the request that auto-creates, never Produce. Otherwise UNKNOWN_TOPIC_OR_PARTITION. An illegal name gives
  INVALID_TOPIC_EXCEPTION. Internal topics are never auto-created here.
- Every partition is led by this node, leader epoch 0, with this node as the only replica and in-sync replica.
Version notes:
- v10+ carries topic ids; v10+ requests may name topics by id (unknown id: UNKNOWN_TOPIC_ID).
- v8+ may ask for authorized operations; with no authorizer everything is allowed (KIP-430 bit sets).
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import (
    AUTHORIZED_OPERATIONS_OMITTED,
    CLUSTER_OPERATIONS,
    TOPIC_OPERATIONS,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.metadata import TopicMetadata, validate_topic_name
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.metadata import MetadataRequest, MetadataResponse
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 3


def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    version = ctx.api_version
    host, port = broker.advertised_endpoint(ctx.listener)
    response = MetadataResponse(
        brokers=[MetadataResponse.MetadataResponseBroker(node_id=broker.node_id, host=host, port=port, rack=None)],
        cluster_id=broker.cluster_id,
        controller_id=broker.node_id,
    )
    include_operations = version >= 8 and request.include_topic_authorized_operations
    if version >= 8 and version <= 10 and request.include_cluster_authorized_operations:
        response.cluster_authorized_operations = CLUSTER_OPERATIONS
    if request.topics is None or (version == 0 and not request.topics):
        response.topics = [_topic(t, broker.node_id, include_operations) for t in broker.metadata.topics()]
        return response
    auto_create = request.allow_auto_topic_creation if version >= 4 else True
    for wanted in request.topics:
        if wanted.name is None:
            topic = broker.metadata.topic_by_id(wanted.topic_id)
            unknown_name = None if version >= 12 else ""  # the name is nullable from v12
            response.topics.append(
                _topic(topic, broker.node_id, include_operations) if topic
                else _error_topic(unknown_name, wanted.topic_id, ErrorCode.UNKNOWN_TOPIC_ID)
            )
        else:
            response.topics.append(_named_topic(ctx, wanted.name, auto_create, include_operations))
    return response


def _named_topic(ctx: RequestContext, name: str, auto_create: bool, include_operations: bool):
    broker = ctx.broker
    topic = broker.metadata.topic(name)
    if topic is None:
        try:
            validate_topic_name(name)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
        if not (auto_create and broker.config["auto.create.topics.enable"]) or name.startswith("__"):
            return _error_topic(name, UUID_ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        try:
            topic = broker.auto_create_topic(name)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
    return _topic(topic, broker.node_id, include_operations)


def _error_topic(name: str | None, topic_id: bytes, code: int) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id)


def _topic(topic: TopicMetadata, node_id: int, include_operations: bool) -> MetadataResponse.MetadataResponseTopic:
    node = [node_id]
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=[
            MetadataResponse.MetadataResponsePartition(
                error_code=ErrorCode.NONE, partition_index=index, leader_id=node_id, leader_epoch=0,
                replica_nodes=node, isr_nodes=node, offline_replicas=[],
            )
            for index in range(topic.partitions)
        ],
        topic_authorized_operations=TOPIC_OPERATIONS if include_operations else AUTHORIZED_OPERATIONS_OMITTED,
    )


serve(API_KEY, handle)
