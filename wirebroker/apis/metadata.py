"""Metadata: API key 3, versions 0-13.

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
  INVALID_TOPIC_EXCEPTION. Internal topics are never auto-created here. In ZooKeeper mode the creation is written
  to ZooKeeper and the answer does not wait for the controller: a topic not yet in this broker's metadata cache
  (just created here, or by another broker at the same time) is LEADER_NOT_AVAILABLE, and the client asks again,
  as with Kafka's ZooKeeper-era brokers.
- A cluster member that has not yet had the controller's first UpdateMetadata (just started and registered) holds
  the request until it has, at most FIRST_METADATA_WAIT_S, then answers from what it knows: the answer it would give
  at once (no brokers, no controller) is one librdkafka takes as a partial response and never asks again on that
  connection, so its admin client waited for a controller until its request timed out (Kafka's KRaft brokers
  likewise serve no client before their metadata has caught up).
Version notes:
- v10+ carries topic ids; v10+ requests may name topics by id (unknown id: UNKNOWN_TOPIC_ID).
- v8+ may ask for authorized operations (KIP-430 bit sets, from the ACLs; v8-10 for the cluster too).
Authorization (KafkaApis.handleTopicMetadataRequest), with an authorizer:
- Each topic needs DESCRIBE: a listing of all topics leaves the others out; a topic asked for by name is
  TOPIC_AUTHORIZATION_FAILED (without its id), one asked for by id TOPIC_AUTHORIZATION_FAILED without its name.
- Auto-creation needs CREATE on the cluster or on the topic, else TOPIC_AUTHORIZATION_FAILED.
- Authorized operations are filled in for every topic that passed DESCRIBE, existing or not.
- v13+ top-level error_code (room for KIP-1102's REBOOTSTRAP_REQUIRED): always NONE, as Kafka's brokers answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from wirebroker.apis.authorized_operations import (
    authorized_operations,
    cluster_authorized_operations,
)
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.cluster_view import NO_LEADER, TopicView
from wirebroker.cluster.metadata import validate_topic_name
from wirebroker.protocol.errors import ErrorCode, KafkaError, TopicAlreadyExistsError
from wirebroker.protocol.messages.metadata import MetadataRequest, MetadataResponse
from wirebroker.protocol.primitives import UUID_ZERO

log = logging.getLogger(__name__)

API_KEY = 3
FIRST_METADATA_WAIT_S = 5.0  # how long a request waits for the controller's first UpdateMetadata to this broker


def handle(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse | None:
    cache = ctx.broker.metadata_cache
    if cache is None:
        return _answer(ctx, request)
    answer_once = _Once(lambda: ctx.respond(_answer(ctx, request)))
    if cache.when_initialized(answer_once):
        return _answer(ctx, request)

    def expire() -> None:
        if answer_once():
            log.warning("Answered Metadata from %s without the cluster: no UpdateMetadata from the controller within "
                        "%.0fs of this broker's start; is a controller running?", ctx.client,
                        FIRST_METADATA_WAIT_S)

    timer = threading.Timer(FIRST_METADATA_WAIT_S, expire)
    timer.daemon = True
    timer.start()
    return None  # answered through ctx.respond


class _Once:
    """Runs `action` the first time it is called (the first UpdateMetadata or the timer, whichever comes first)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self._action = action
        self._lock = threading.Lock()
        self._done = False

    def __call__(self) -> bool:
        with self._lock:
            if self._done:
                return False
            self._done = True
        try:
            self._action()
        except Exception:  # on the thread applying UpdateMetadata or the timer's: log, never break the caller
            log.exception("Answering a held Metadata request failed")
        return True


def _answer(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
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
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        response.cluster_authorized_operations = cluster_authorized_operations(ctx)
    if request.topics is None or (version == 0 and not request.topics):
        names = view.topic_names()
        described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names, log_denied=False)
        response.topics = [_topic(view.topic(name)) for name in names if name in described]
    else:
        auto_create = request.allow_auto_topic_creation if version >= 4 else True
        response.topics = [_wanted_topic(ctx, wanted, auto_create) for wanted in request.topics]
    if version >= 8 and request.include_topic_authorized_operations:
        for topic in response.topics:
            if topic.error_code not in _NOT_DESCRIBED:
                topic.topic_authorized_operations = authorized_operations(ctx, ResourceType.TOPIC, topic.name)
    return response


# Kafka fills in authorized operations only for the topics that passed DESCRIBE and were looked up.
_NOT_DESCRIBED = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_ID)


def _wanted_topic(ctx: RequestContext, wanted: MetadataRequest.MetadataRequestTopic, auto_create: bool):
    view = ctx.broker.cluster_view
    if wanted.name is not None:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, wanted.name):
            return _error_topic(wanted.name, UUID_ZERO, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        return _named_topic(ctx, wanted.name, auto_create)
    topic = view.topic_by_id(wanted.topic_id)
    unknown_name = None if ctx.api_version >= 12 else ""  # the name is nullable from v12
    if topic is None:
        return _error_topic(unknown_name, wanted.topic_id, ErrorCode.UNKNOWN_TOPIC_ID)
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name):
        # Topic ids are not secret (Kafka's comment); the name is.
        return _error_topic(unknown_name, wanted.topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return _topic(topic)


def _named_topic(ctx: RequestContext, name: str, auto_create: bool):
    broker = ctx.broker
    topic = broker.cluster_view.topic(name)
    if topic is None:
        auto_create = auto_create and broker.config["auto.create.topics.enable"]
        if auto_create and not (ctx.authorize(AclOperation.CREATE, log_denied=False)
                                or ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, name)):
            return _error_topic(name, UUID_ZERO, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        try:
            validate_topic_name(name)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
        if not auto_create or name.startswith("__"):
            return _error_topic(name, UUID_ZERO, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        try:
            created = broker.auto_create_topic(name)
        except TopicAlreadyExistsError:  # created by another request, not yet in this broker's metadata
            return _error_topic(name, UUID_ZERO, ErrorCode.LEADER_NOT_AVAILABLE)
        except KafkaError as exc:
            return _error_topic(name, UUID_ZERO, exc.code)
        topic = broker.cluster_view.topic(name)
        if topic is None:
            return _error_topic(name, created.topic_id, ErrorCode.LEADER_NOT_AVAILABLE)
    return _topic(topic)


def _error_topic(name: str | None, topic_id: bytes, code: int) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id)


def _topic(topic: TopicView) -> MetadataResponse.MetadataResponseTopic:
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
    )


serve(API_KEY, handle)
