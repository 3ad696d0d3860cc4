"""SyncGroup: API key 14, versions 0-5.

Behaviour:
- The leader sends the generation's assignment; it is written to __consumer_offsets, then every member waiting in
  SyncGroup gets its part (answered later through `ctx.respond`). A follower in a Stable group gets its part at once.
- UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS as Kafka.
Version notes:
- v3+ group_instance_id (KIP-345); v4+ flexible; v5+ protocol type and name, checked against the group's
  (INCONSISTENT_GROUP_PROTOCOL) and returned.
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.sync_group import SyncGroupRequest

API_KEY = 14


def handle(ctx: RequestContext, request: SyncGroupRequest) -> None:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    ctx.broker.group_coordinator.sync_group(request, ctx.respond)


serve(API_KEY, off_network_thread(handle))
