"""The admin side of groups: describe, list and delete (Kafka's describeGroups, listGroups, deleteGroups).

Describe: a Stable classic group shows its protocol and every member's subscription and assignment; in any other
state the members are listed without them (as Kafka: they are not settled). A group this coordinator does not know
is described as Dead with no error (DescribeGroups v0-5), and so is a KIP-848 consumer group, as Kafka does
(ConsumerGroupDescribe describes those). List: every group with its protocol type, state (v4+) and type (v5+),
filtered by state and type case-insensitively. Delete: only groups with no members (NON_EMPTY_GROUP otherwise);
their offsets go with them.
"""

from __future__ import annotations

from wirebroker.coordinator.classic_group import ClassicGroup, ClassicGroupState
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.describe_groups import DescribeGroupsResponse
from wirebroker.protocol.messages.list_groups import ListGroupsResponse

_Group = DescribeGroupsResponse.DescribedGroup
_Member = DescribeGroupsResponse.DescribedGroupMember


def describe(c: GroupCoordinator, group_id: str) -> _Group:
    try:
        c.check_loaded()
    except KafkaError as exc:
        return _Group(error_code=exc.code, group_id=group_id, group_state="", protocol_type="", protocol_data="")
    group = c.group(group_id)
    if not isinstance(group, ClassicGroup):
        # Kafka describes only classic groups here; consumer groups answer ConsumerGroupDescribe.
        return _Group(error_code=ErrorCode.NONE, group_id=group_id, group_state=ClassicGroupState.DEAD.value,
                      protocol_type="", protocol_data="", members=[])
    stable = group.is_in(ClassicGroupState.STABLE)
    members = [
        _Member(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata(group.protocol_name) if stable else b"",
                member_assignment=m.assignment if stable else b"")
        for m in group.members.values()
    ]
    return _Group(error_code=ErrorCode.NONE, group_id=group_id, group_state=group.state_name,
                  protocol_type=group.protocol_type or "", protocol_data=group.protocol_name if stable else "",
                  members=members)


def list_groups(c: GroupCoordinator, states: list[str], types: list[str]) -> list[ListGroupsResponse.ListedGroup]:
    c.check_loaded()
    wanted_states = {s.lower() for s in states}
    wanted_types = {t.lower() for t in types}
    listed = []
    for group in list(c.groups.values()):
        if wanted_states and group.state_name.lower() not in wanted_states:
            continue
        if wanted_types and group.type.value not in wanted_types:
            continue
        listed.append(ListGroupsResponse.ListedGroup(group_id=group.group_id, protocol_type=group.protocol_type or "",
                                                     group_state=group.state_name, group_type=group.type.value))
    return listed


def delete_group(c: GroupCoordinator, group_id: str) -> int:
    try:
        c.check_loaded()
    except KafkaError as exc:
        return exc.code
    group = c.group(group_id)
    if group is None or group.state_name == ClassicGroupState.DEAD.value:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if not group.is_empty():
        return ErrorCode.NON_EMPTY_GROUP
    try:
        c.delete_group(group)
    except KafkaError as exc:
        return exc.code
    return ErrorCode.NONE
