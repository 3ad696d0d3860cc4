"""Metadata: API key 3, versions 0-12.

Behaviour:
- Answers from the broker's cluster view (cluster/cluster_view.py): on a single broker, this node at the advertised
  address of the listener the request came in on, leading every partition at epoch 0 as the only replica; in a
  cluster, the metadata cache the controller fills: the live brokers' endpoints on that listener, the controller
  id, and each partition's leader, epoch, replicas, ISR and offline replicas. A partition whose leader is not alive
  has leader -1 and LEADER_NOT_AVAILABLE.
- Topics: the requested ones, or all of them for a null list (v1+) or an empty list (v0).
- A requested topic that does not exist is created when `auto.create.topics.enable` is on and the request allows
  it (v4+ `allow_auto_topic_creation`; always before v4), with `num.partitions` partitions, like Kafka: Metadata is
  the request that auto-creates, never Produce. Otherwise UNKNOWN_TOPIC_OR_PARTITION. An illegal name gives
  INVALID_TOPIC_EXCEPTION. Internal topics are never auto-created here. A topic created but not yet in a
  cluster's metadata cache is LEADER_NOT_AVAILABLE, as with Kafka.
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
from wirebroker.cluster.cluster_view import NO_LEADER, TopicView
from wirebroker.cluster.metadata import validate_topic_name
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.metadata import MetadataRequest, MetadataResponse
from wirebroker.protocol.primitives import UUID_ZERO

API_KEY = 3


def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    view = broker.cluster_view
    version = ctx.api_version
    response = MetadataResponse(
        brokers=[MetadataResponse.MetadataResponseBroker(node_id=node.node_id, host=node.host, port=node.port,
                                                         rack=node.rack)
                 for node in view.alive_brokers(ctx.listener)],
        cluster_id=broker.cluster_id,
        controller_id=view.controller_id,
    )
    include_operations = version >= 8 and request.include_topic_authorized_operations
    if version >= 8 and version <= 10 and request.include_cluster_authorized_operations:
        response.cluster_authorized_operations = CLUSTER_OPERATIONS
    if request.topics is None or (version == 0 and not request.topics):
        response.topics = [_topic(view.topic(name), include_operations) for name in view.topic_names()]
        return response
    auto_create = request.allow_auto_topic_creation if version >= 4 else True
    for wanted in request.topics:
        if wanted.name is None:
            topic = view.topic_by_id(wanted.topic_id)
            unknown_name = None if version >= 12 else ""  # the name is nullable from v12
            response.topics.append(
                _topic(topic, include_operations) if topic
                else _error_topic(unknown_name, wanted.topic_id, ErrorCode.UNKNOWN_TOPIC_ID)
            )
        else:
            response.topics.append(_named_topic(ctx, wanted.name, auto_create, include_operations))
    return response


def _named_topic(ctx: RequestContext, name: str, auto_create: bool, include_operations: bool):
    broker = ctx.broker
    topic = broker.cluster_view.topic(name)
    if topic is None:
        try:
            validate_topic_name(name)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
        if not (auto_create and broker.config["auto.create.topics.enable"]) or name.startswith("__"):
            return _error_topic(name, UUID_ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        try:
            created = broker.auto_create_topic(name)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
        topic = broker.cluster_view.topic(name)
        if topic is None:
            return _error_topic(name, created.topic_id, ErrorCode.LEADER_NOT_AVAILABLE)
    return _topic(topic, include_operations)


def _error_topic(name: str | None, topic_id: bytes, code: int) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id)


def _topic(topic: TopicView, include_operations: bool) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=[
            MetadataResponse.MetadataResponsePartition(
                error_code=ErrorCode.NONE if p.leader != NO_LEADER else ErrorCode.LEADER_NOT_AVAILABLE,
                partition_index=p.index, leader_id=p.leader, leader_epoch=p.leader_epoch,
                replica_nodes=list(p.replicas), isr_nodes=list(p.isr), offline_replicas=list(p.offline_replicas),
            )
            for p in topic.partitions
        ],
        topic_authorized_operations=TOPIC_OPERATIONS if include_operations else AUTHORIZED_OPERATIONS_OMITTED,
    )


serve(API_KEY, handle)
