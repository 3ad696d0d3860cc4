"""ShareGroupHeartbeat: API key 76, version 1 (KIP-932 share groups; v0 was the early-access version Kafka 4.1
removed).

Behaviour:
- Join with member epoch 0 (the member id is the client's own) and the subscribed topic names, heartbeat at the
  member's epoch, leave with -1 (coordinator/share_group_manager.py). The answer carries the member epoch, the
  heartbeat interval (group.share.heartbeat.interval.ms) and, when it changed, the member's partitions by topic
  id; a partition may be given to several members.
- Errors: INVALID_REQUEST, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND (the id names a group of
  another kind), GROUP_MAX_SIZE_REACHED (group.share.max.size), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED; DESCRIBE on
every subscribed topic, else TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.client_host import client_host
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import share_services
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import TopicAuthorizationFailedError
from wirebroker.protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

API_KEY = 76


def handle(ctx: RequestContext, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    subscribed = request.subscribed_topic_names or []
    if len(ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed)) < len(set(subscribed)):
        raise TopicAuthorizationFailedError("The member is not authorized to describe every subscribed topic")
    share_services(ctx.broker)  # the group configs (session timeout, heartbeat interval) are wired at the first one
    return ctx.broker.group_coordinator.share_group_heartbeat(request, ctx.client_id or "", client_host(ctx))


serve(API_KEY, off_network_thread(handle))
