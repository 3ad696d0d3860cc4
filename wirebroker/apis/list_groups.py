"""ListGroups: API key 16, versions 0-5.

Behaviour:
- Every group this coordinator holds (classic, simple and consumer groups), with its protocol type.
Version notes:
- v1+ throttle time; v3+ flexible; v4+ state per group and a states filter (KIP-518); v5+ type per group and a
  types filter, "classic" or "consumer" (KIP-848). Filters compare case-insensitively, as Kafka.
"""

from __future__ import annotations

from wirebroker.apis.registry import serve
from wirebroker.coordinator import group_admin
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.list_groups import (
    ListGroupsRequest,
    ListGroupsResponse,
)
from wirebroker.apis.context import RequestContext

API_KEY = 16


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    coordinator = ctx.broker.group_coordinator
    with coordinator.lock:
        try:
            groups = group_admin.list_groups(coordinator, request.states_filter or [], request.types_filter or [])
        except KafkaError as exc:
            return ListGroupsResponse(error_code=exc.code)
    return ListGroupsResponse(error_code=ErrorCode.NONE, groups=groups)


serve(API_KEY, handle)
