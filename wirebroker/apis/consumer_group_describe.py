"""ConsumerGroupDescribe: API key 69, versions 0-1.

Behaviour:
- For each KIP-848 consumer group: state, group epoch, target assignment epoch, assignor, and every member with its
  subscription, current assignment and target assignment (topic ids and names).
- GROUP_ID_NOT_FOUND for an unknown group or a classic one ("is not a consumer group").
Version notes:
- Authorized operations as KIP-430 with no authorizer; v1+ each member's type (KIP-1099): 0 for a member that joined
  with the classic protocol (JoinGroup), 1 for a consumer-protocol member.
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import group_authorized_operations
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)

API_KEY = 69


def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    groups = ctx.broker.group_coordinator.consumer_group_describe(request.group_ids)
    for described in groups:
        if described.error_code != ErrorCode.GROUP_ID_NOT_FOUND:  # no consumer group by that id: no operations
            described.authorized_operations = group_authorized_operations(request.include_authorized_operations)
    return ConsumerGroupDescribeResponse(groups=groups)


serve(API_KEY, off_network_thread(handle))
