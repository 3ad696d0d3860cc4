"""LeaveGroup: API key 13, versions 0-5.

Behaviour:
- Removes the members from their classic group, which rebalances without them; a pending member (KIP-394) just
  goes. Per member: UNKNOWN_MEMBER_ID, or FENCED_INSTANCE_ID for a static member whose instance id now has
  another member id.
Version notes:
- v0-2 one member_id, its error at the top level; v3+ a batch of members with group_instance_id (KIP-345), one
  error each; v4+ flexible; v5+ a reason per member (KIP-800).
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.leave_group import (
    LeaveGroupRequest,
    LeaveGroupResponse,
)

API_KEY = 13
FIRST_BATCHED_VERSION = 3


def handle(ctx: RequestContext, request: LeaveGroupRequest) -> LeaveGroupResponse:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    batched = ctx.api_version >= FIRST_BATCHED_VERSION
    leaving = ([(m.member_id, m.group_instance_id, m.reason) for m in request.members] if batched
               else [(request.member_id, None, None)])
    code, members = ctx.broker.group_coordinator.leave_group(request.group_id, leaving)
    if batched:
        return LeaveGroupResponse(error_code=code, members=members)
    return LeaveGroupResponse(error_code=code if code != ErrorCode.NONE else members[0].error_code)


serve(API_KEY, off_network_thread(handle))
