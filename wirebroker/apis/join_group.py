"""JoinGroup: API key 11, versions 0-9.

Behaviour:
- The classic group protocol's join (coordinator/classic_group_manager.py): the answer waits until the rebalance
  completes (every member rejoined, or the rebalance timeout) and is given later through `ctx.respond`.
- A new member gets its member id; its session timeout must lie within group.min/max.session.timeout.ms
  (INVALID_SESSION_TIMEOUT); protocols must match the group's (INCONSISTENT_GROUP_PROTOCOL).
- COORDINATOR_LOAD_IN_PROGRESS while __consumer_offsets is being loaded.
Version notes:
- v0 has no rebalance timeout (the session timeout stands in for it); v4+ a new dynamic member first gets
  MEMBER_ID_REQUIRED and its id, and must rejoin with it (KIP-394); v5+ group_instance_id for static membership
  (KIP-345); v6+ flexible; v7+ protocol type and name in the answer; v8+ reason (KIP-800); v9+ skip_assignment
  for a static leader rejoining a stable group (KIP-814).
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.client_host import client_host
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.join_group import JoinGroupRequest

API_KEY = 11
FIRST_REBALANCE_TIMEOUT_VERSION = 1


def handle(ctx: RequestContext, request: JoinGroupRequest) -> None:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    if ctx.api_version < FIRST_REBALANCE_TIMEOUT_VERSION:
        request.rebalance_timeout_ms = request.session_timeout_ms
    ctx.broker.group_coordinator.join_group(request, ctx.api_version, ctx.client_id or "", client_host(ctx),
                                            ctx.respond)


serve(API_KEY, off_network_thread(handle))
