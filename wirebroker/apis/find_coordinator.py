"""FindCoordinator: API key 10, versions 0-6.

Behaviour:
- Group keys (key type 0): this broker coordinates every group; `__consumer_offsets` is created on the first ask,
  as Kafka does (an error creating it is COORDINATOR_NOT_AVAILABLE, and the client retries).
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
    try:
        if key_type == GROUP_KEY_TYPE:
            broker.offsets_topic.ensure_created()
        elif key_type == TRANSACTION_KEY_TYPE:
            if getattr(broker, "transaction_coordinator", None) is None:
                return _error(key, ErrorCode.COORDINATOR_NOT_AVAILABLE, "no transaction coordinator runs here")
        else:
            return _error(key, ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")
    except KafkaError as exc:
        return _error(key, exc.code, str(exc))
    host, port = broker.advertised_endpoint(ctx.listener)
    return _Coordinator(key=key, node_id=broker.node_id, host=host, port=port, error_code=ErrorCode.NONE,
                        error_message=None)


def _error(key: str, code: int, message: str) -> FindCoordinatorResponse.Coordinator:
    return _Coordinator(key=key, node_id=-1, host="", port=-1, error_code=code, error_message=message)


serve(API_KEY, handle)
