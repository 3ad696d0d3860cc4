"""Heartbeat: API key 12, versions 0-4.

Behaviour:
- Keeps a classic group member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin; UNKNOWN_MEMBER_ID,
  ILLEGAL_GENERATION, FENCED_INSTANCE_ID when it is no longer the member it thinks it is.
Version notes:
- v3+ group_instance_id (KIP-345); v4+ flexible.
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse

API_KEY = 12


def handle(ctx: RequestContext, request: HeartbeatRequest) -> HeartbeatResponse:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    return HeartbeatResponse(error_code=ctx.broker.group_coordinator.heartbeat(request))


serve(API_KEY, off_network_thread(handle))
