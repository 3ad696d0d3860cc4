"""ConsumerGroupHeartbeat: API key 68, versions 0-1.

Behaviour:
- The KIP-848 consumer group protocol (coordinator/consumer_group_manager.py): join with member epoch 0, heartbeat at
  the member's epoch, leave with -1 (static members: -2); the answer carries the member epoch, the heartbeat
  interval (group.consumer.heartbeat.interval.ms) and, when it changed, the member's assignment by topic id.
- Server-side assignors from group.consumer.assignors (uniform, range); UNSUPPORTED_ASSIGNOR for others.
- Errors: INVALID_REQUEST, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, GROUP_ID_NOT_FOUND
  (the id names a classic group with members), GROUP_MAX_SIZE_REACHED, COORDINATOR_LOAD_IN_PROGRESS.
Version notes:
- v0: a joining member with no member id gets one from the coordinator; v1: the client makes its own (KIP-1082).
Authorization (with an authorizer, as KafkaApis): READ on the group, else GROUP_AUTHORIZATION_FAILED; DESCRIBE on
  every subscribed topic name, else TOPIC_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.client_host import client_host
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import TopicAuthorizationFailedError
from wirebroker.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

API_KEY = 68


def handle(ctx: RequestContext, request: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    subscribed = request.subscribed_topic_names or []
    if len(ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed)) < len(set(subscribed)):
        raise TopicAuthorizationFailedError("The member is not authorized to describe every subscribed topic")
    return ctx.broker.group_coordinator.consumer_group_heartbeat(request, ctx.client_id or "", client_host(ctx))


serve(API_KEY, off_network_thread(handle))
