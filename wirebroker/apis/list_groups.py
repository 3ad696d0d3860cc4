"""ListGroups: API key 16, versions 0-5.

Behaviour:
- Every group this coordinator holds (classic, simple and consumer groups), with its protocol type.
Version notes:
- v1+ throttle time; v3+ flexible; v4+ state per group and a states filter (KIP-518); v5+ type per group and a
  types filter, "classic" or "consumer" (KIP-848). Filters compare case-insensitively, as Kafka.
Authorization (with an authorizer, as KafkaApis): DESCRIBE on the cluster lists every group; without it, only the groups with DESCRIBE.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.list_groups import (
    ListGroupsRequest,
    ListGroupsResponse,
)

API_KEY = 16


def handle(ctx: RequestContext, request: ListGroupsRequest) -> ListGroupsResponse:
    code, groups = ctx.broker.group_coordinator.list_groups(request.states_filter or [], request.types_filter or [])
    if not ctx.authorize(AclOperation.DESCRIBE, log_denied=False):  # DESCRIBE on the cluster lists every group
        described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, (g.group_id for g in groups),
                                   log_denied=False)
        groups = [group for group in groups if group.group_id in described]
    return ListGroupsResponse(error_code=code, groups=groups)


serve(API_KEY, off_network_thread(handle))
