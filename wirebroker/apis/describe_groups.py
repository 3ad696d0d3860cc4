"""DescribeGroups: API key 15, versions 0-6.

Behaviour:
- Each group's state, protocol type, protocol and members (coordinator/group_admin.py); subscriptions and
  assignments only for a Stable classic group. An unknown group, or a KIP-848 consumer group (see
  ConsumerGroupDescribe), is "Dead" with no error before v6, as Kafka.
Version notes:
- With an authorizer a group needs DESCRIBE, else GROUP_AUTHORIZATION_FAILED (listed after the others, as Kafka).
- v1+ throttle time; v3+ authorized operations of each group described without error (KIP-430, from the ACLs);
  v4+ group_instance_id per member (KIP-345); v5+ flexible; v6+ such a "Dead" group is GROUP_ID_NOT_FOUND with
  Kafka's message, "Group <id> not found." or "Group <id> is not a classic group." (KIP-1043).
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import set_group_operations
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.classic_group import ClassicGroupState
from wirebroker.coordinator.group import GroupType
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)

API_KEY = 15
FIRST_NOT_FOUND_VERSION = 6  # KIP-1043
CLASSIC = GroupType.CLASSIC.value
DEAD = ClassicGroupState.DEAD.value


def handle(ctx: RequestContext, request: DescribeGroupsRequest) -> DescribeGroupsResponse:
    coordinator = ctx.broker.group_coordinator
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, request.groups)
    groups = coordinator.describe_groups([group_id for group_id in request.groups if group_id in allowed])
    if ctx.api_version >= FIRST_NOT_FOUND_VERSION:
        _not_found(coordinator, groups)
    set_group_operations(ctx, groups, request.include_authorized_operations)
    groups += [DescribeGroupsResponse.DescribedGroup(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                                     group_state="", protocol_type="", protocol_data="")
               for group_id in request.groups if group_id not in allowed]
    return DescribeGroupsResponse(groups=groups)


def _not_found(coordinator: GroupCoordinator, groups: list[DescribeGroupsResponse.DescribedGroup]) -> None:
    """GROUP_ID_NOT_FOUND for each group described as "Dead" that is no classic group of this coordinator."""
    unanswered = [g for g in groups if g.error_code == ErrorCode.NONE and g.group_state == DEAD]
    if not unanswered:
        return
    _, listed = coordinator.list_groups([], [])
    types = {g.group_id: g.group_type for g in listed}
    for group in unanswered:
        kind = types.get(group.group_id)
        if kind != CLASSIC:
            group.error_code = ErrorCode.GROUP_ID_NOT_FOUND
            group.error_message = (f"Group {group.group_id} not found." if kind is None
                                   else f"Group {group.group_id} is not a classic group.")


serve(API_KEY, off_network_thread(handle))
