"""FindCoordinator: API key 10, versions 0-6.

Behaviour:
- Group keys (key type 0): the leader of the group's `__consumer_offsets` partition (this broker on a single
  node), COORDINATOR_NOT_AVAILABLE while the partition has no live leader or its leader no endpoint on this
  listener. `__consumer_offsets` is created on the first ask, as Kafka does, with `offsets.topic.replication.factor`
  replicas in a cluster (an error creating it, such as fewer live brokers, is COORDINATOR_NOT_AVAILABLE, and the
  client retries).
- Transaction keys (key type 1): the same for the transactional id's `__transaction_state` partition
  (`transaction.state.log.num.partitions`, `transaction.state.log.replication.factor` capped to the brokers on a
  single node, `transaction.state.log.min.isr`), created on the first ask; an empty id is INVALID_REQUEST.
- Share keys (key type 2, KIP-932: "group:topic id:partition", asked by share-partition leaders): the leader of
  the key's `__share_group_state` partition (apis/share_services.py), created on the first ask; a key not of that
  form is INVALID_REQUEST; with an authorizer it needs CLUSTER_ACTION, else CLUSTER_AUTHORIZATION_FAILED.
- Any other key type: INVALID_REQUEST.
- With an authorizer a key needs DESCRIBE on its group or transactional id, else GROUP_AUTHORIZATION_FAILED or
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED (the internal topic is then not created).
Version notes:
- v1+ key_type and error_message; v3+ flexible; v4+ many keys per request, answered per key (KIP-699).
"""

from __future__ import annotations

from wirebroker.apis.authorization import refusal_code
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import share_services
from wirebroker.apis.share_state import is_share_partition_key
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.internal_topic import InternalTopic
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

API_KEY = 10
GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2
FIRST_BATCHED_VERSION = 4

_Coordinator = FindCoordinatorResponse.Coordinator
# What a key names, for the DESCRIBE it needs (KafkaApis.getCoordinator).
_RESOURCE_TYPES = {GROUP_KEY_TYPE: ResourceType.GROUP, TRANSACTION_KEY_TYPE: ResourceType.TRANSACTIONAL_ID}


def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    if ctx.api_version >= FIRST_BATCHED_VERSION:
        return FindCoordinatorResponse(coordinators=[_find(ctx, key, request.key_type)
                                                     for key in request.coordinator_keys])
    found = _find(ctx, request.key, request.key_type)
    return FindCoordinatorResponse(error_code=found.error_code, error_message=found.error_message,
                                   node_id=found.node_id, host=found.host, port=found.port)


def _find(ctx: RequestContext, key: str, key_type: int) -> FindCoordinatorResponse.Coordinator:
    resource_type = _RESOURCE_TYPES.get(key_type)
    if resource_type is not None and not ctx.authorize(AclOperation.DESCRIBE, resource_type, key):
        return _error(key, refusal_code(resource_type), None)
    if key_type == GROUP_KEY_TYPE:
        return _coordinator(ctx, key, ctx.broker.offsets_topic, f"group {key}")
    if key_type == TRANSACTION_KEY_TYPE:
        if not key:
            return _error(key, ErrorCode.INVALID_REQUEST, "the transactional id is empty")
        return _coordinator(ctx, key, ctx.broker.transaction_state_topic, f"transactional id {key}")
    if key_type == SHARE_KEY_TYPE:
        if not ctx.authorize(AclOperation.CLUSTER_ACTION):
            return _error(key, refusal_code(ResourceType.CLUSTER), None)
        if not is_share_partition_key(key):
            return _error(key, ErrorCode.INVALID_REQUEST, f"{key!r} is not a share-partition key")
        return _coordinator(ctx, key, share_services(ctx.broker).coordinator.topic, f"share-partition {key}")
    return _error(key, ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")


def _coordinator(ctx: RequestContext, key: str, topic: InternalTopic, what: str) -> FindCoordinatorResponse.Coordinator:
    """The leader of the internal topic's partition of `key`, the topic created first if need be."""
    try:
        topic.ensure_created()
    except KafkaError as exc:
        return _error(key, exc.code, str(exc))
    leader = topic.leader(key)
    node = next((n for n in ctx.broker.cluster_view.alive_brokers(ctx.listener) if n.node_id == leader), None)
    if node is None:
        return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                      f"the {topic.spec.name} partition of {what} has no available leader")
    return _Coordinator(key=key, node_id=node.node_id, host=node.host, port=node.port,
                        error_code=ErrorCode.NONE, error_message=None)


def _error(key: str, code: int, message: str | None) -> FindCoordinatorResponse.Coordinator:
    return _Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)


serve(API_KEY, handle)
