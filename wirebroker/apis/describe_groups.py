"""DescribeGroups: API key 15, versions 0-5.

Behaviour:
- Each group's state, protocol type, protocol and members (coordinator/group_admin.py); subscriptions and
  assignments only for a Stable classic group. An unknown group, or a KIP-848 consumer group (see
  ConsumerGroupDescribe), is "Dead" with no error, as Kafka.
Version notes:
- v1+ throttle time; v3+ authorized operations (KIP-430; no authorizer: READ, DELETE, DESCRIBE);
  v4+ group_instance_id per member (KIP-345); v5+ flexible.
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import group_authorized_operations
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)

API_KEY = 15


def handle(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    groups = ctx.broker.group_coordinator.describe_groups(request.groups)
    for described in groups:
        described.authorized_operations = group_authorized_operations(request.include_authorized_operations)
    return DescribeGroupsResponse(groups=groups)


serve(API_KEY, off_network_thread(handle))
