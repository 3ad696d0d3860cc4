"""FindCoordinator: API key 10, versions 0-6.

Behaviour:
- Group keys (key type 0): the leader of the group's `__consumer_offsets` partition (this broker on a single
  node), COORDINATOR_NOT_AVAILABLE while the partition has no live leader or its leader no endpoint on this
  listener. `__consumer_offsets` is created on the first ask, as Kafka does, with `offsets.topic.replication.factor`
  replicas in a cluster (an error creating it, such as fewer live brokers, is COORDINATOR_NOT_AVAILABLE, and the
  client retries).
- Transaction keys (key type 1): this broker when it runs a transaction coordinator, else COORDINATOR_NOT_AVAILABLE.
- Any other key type: INVALID_REQUEST.
Version notes:
- v1+ key_type and error_message; v3+ flexible; v4+ many keys per request, answered per key (KIP-699).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.find_coordinator import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)

API_KEY = 10
GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
FIRST_BATCHED_VERSION = 4

_Coordinator = FindCoordinatorResponse.Coordinator


def handle(ctx: RequestContext, request: FindCoordinatorRequest) -> FindCoordinatorResponse:
    if ctx.api_version >= FIRST_BATCHED_VERSION:
        return FindCoordinatorResponse(coordinators=[_find(ctx, key, request.key_type)
                                                     for key in request.coordinator_keys])
    found = _find(ctx, request.key, request.key_type)
    return FindCoordinatorResponse(error_code=found.error_code, error_message=found.error_message,
                                   node_id=found.node_id, host=found.host, port=found.port)


def _find(ctx: RequestContext, key: str, key_type: int) -> FindCoordinatorResponse.Coordinator:
    broker = ctx.broker
    if key_type == GROUP_KEY_TYPE:
        return _group_coordinator(ctx, key)
    if key_type == TRANSACTION_KEY_TYPE:
        if getattr(broker, "transaction_coordinator", None) is None:
            return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "no transaction coordinator runs here")
        host, port = broker.advertised_endpoint(ctx.listener)
        return _Coordinator(key=key, node_id=broker.node_id, host=host, port=port, error_code=ErrorCode.NONE,
                            error_message=None)
    return _error(key, ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")


def _group_coordinator(ctx: RequestContext, group_id: str) -> FindCoordinatorResponse.Coordinator:
    offsets_topic = ctx.broker.offsets_topic
    try:
        offsets_topic.ensure_created()
    except KafkaError as exc:
        return _error(group_id, exc.code, str(exc))
    leader = offsets_topic.leader(group_id)
    node = next((n for n in ctx.broker.cluster_view.alive_brokers(ctx.listener) if n.node_id == leader), None)
    if node is None:
        return _error(group_id, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                      f"the __consumer_offsets partition of group {group_id} has no available leader")
    return _Coordinator(key=group_id, node_id=node.node_id, host=node.host, port=node.port,
                        error_code=ErrorCode.NONE, error_message=None)


def _error(key: str, code: int, message: str) -> FindCoordinatorResponse.Coordinator:
    return _Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)


serve(API_KEY, handle)
