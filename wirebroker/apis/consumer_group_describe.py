"""ConsumerGroupDescribe: API key 69, versions 0-1.

Behaviour:
- For each KIP-848 consumer group: state, group epoch, target assignment epoch, assignor, and every member with its
  subscription, current assignment and target assignment (topic ids and names).
- GROUP_ID_NOT_FOUND for an unknown group or a classic one ("is not a consumer group").
- With an authorizer a group needs DESCRIBE, else GROUP_AUTHORIZATION_FAILED (listed after the others).
- Authorized operations (KIP-430, from the ACLs) of each group described without error.
Version notes:
- v1+ each member's type (KIP-1099): 0 for a member that joined with the classic protocol (JoinGroup), 1 for a
  consumer-protocol member.
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import set_group_operations
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)

API_KEY = 69


def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_ids)
    groups = ctx.broker.group_coordinator.consumer_group_describe([g for g in request.group_ids if g in allowed])
    set_group_operations(ctx, groups, request.include_authorized_operations)
    groups += [ConsumerGroupDescribeResponse.DescribedGroup(group_id=group_id,
                                                            error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
               for group_id in request.group_ids if group_id not in allowed]
    return ConsumerGroupDescribeResponse(groups=groups)


serve(API_KEY, off_network_thread(handle))
