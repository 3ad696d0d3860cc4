"""The admin side of groups: describe, list and delete (Kafka's describeGroups, consumerGroupDescribe, listGroups,
deleteGroups).

Describe: a Stable classic group shows its protocol and every member's subscription and assignment; in any other
state the members are listed without them (as Kafka: they are not settled). A group this coordinator does not know
is described as Dead with no error, and so is a KIP-848 consumer group, as Kafka does (DescribeGroups v6 makes both
GROUP_ID_NOT_FOUND, apis/describe_groups.py). ConsumerGroupDescribe describes those: epochs, assignor, and each
member's subscription, current and target assignment by topic id and name, and its protocol, classic or consumer
(KIP-1099); GROUP_ID_NOT_FOUND for an unknown or classic group. List: every group with its protocol type, state
(v4+) and type (v5+), filtered by state and type case-insensitively. Delete: only groups with no members
(NON_EMPTY_GROUP otherwise); their offsets go with them, in the same batch of tombstones.
"""

from __future__ import annotations

import logging

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup, ClassicGroupState
from wirebroker.coordinator.consumer_group import Assignment, ConsumerGroup
from wirebroker.coordinator.group import Group
from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.coordinator.offset_metadata_manager import OffsetMetadataManager
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeResponse,
)
from wirebroker.protocol.messages.describe_groups import DescribeGroupsResponse
from wirebroker.protocol.messages.list_groups import ListGroupsResponse

log = logging.getLogger(__name__)

_Group = DescribeGroupsResponse.DescribedGroup
_Member = DescribeGroupsResponse.DescribedGroupMember


def describe_error(group_id: str, code: int) -> _Group:
    return _Group(error_code=code, group_id=group_id, group_state="", protocol_type="", protocol_data="")


def describe(runtime: GroupRuntime, group_id: str) -> _Group:
    group = runtime.groups.get(group_id)
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


def list_groups(runtime: GroupRuntime, states: list[str], types: list[str]) -> list[ListGroupsResponse.ListedGroup]:
    wanted_states = {s.lower() for s in states}
    wanted_types = {t.lower() for t in types}
    listed = []
    for group in list(runtime.groups.values()):
        if wanted_states and group.state_name.lower() not in wanted_states:
            continue
        if wanted_types and group.type.value not in wanted_types:
            continue
        listed.append(ListGroupsResponse.ListedGroup(group_id=group.group_id, protocol_type=group.protocol_type or "",
                                                     group_state=group.state_name, group_type=group.type.value))
    return listed


def delete_group(runtime: GroupRuntime, offsets: OffsetMetadataManager, group_id: str) -> int:
    """DeleteGroups' error code for one group."""
    group = runtime.groups.get(group_id)
    if group is None or group.state_name == ClassicGroupState.DEAD.value:
        return ErrorCode.GROUP_ID_NOT_FOUND
    if not group.is_empty():
        return ErrorCode.NON_EMPTY_GROUP
    try:
        delete(runtime, offsets, group)
    except KafkaError as exc:
        return exc.code
    return ErrorCode.NONE


def delete(runtime: GroupRuntime, offsets: OffsetMetadataManager, group: Group) -> None:
    """Tombstones for the group's offsets and metadata, then the group is gone."""
    out = offsets.tombstones(group.group_id)
    if isinstance(group, ClassicGroup):
        out.append(records.group_metadata_tombstone(group.group_id))
        group.state = ClassicGroupState.DEAD
    else:  # a consumer or share group
        out += group.group_tombstones()
    offsets.write(group.group_id, out)
    if not isinstance(group, ClassicGroup):
        group.deleted = True
    runtime.groups.pop(group.group_id, None)
    log.info("group %s deleted", group.group_id)


_Described = ConsumerGroupDescribeResponse.DescribedGroup


def describe_consumer_group_error(group_id: str, error: KafkaError) -> _Described:
    return _Described(group_id=group_id, error_code=error.code, error_message=str(error))

# ConsumerGroupDescribe's member types (KIP-1099): joined with JoinGroup, or with ConsumerGroupHeartbeat.
CLASSIC_MEMBER, CONSUMER_MEMBER = 0, 1


def describe_consumer_group(runtime: GroupRuntime, group_id: str) -> _Described:
    group = runtime.groups.get(group_id)
    if not isinstance(group, ConsumerGroup):
        return _Described(group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                          error_message=f"Group {group_id} not found." if group is None
                          else f"Group {group_id} is not a consumer group.")
    assignor = next((m.server_assignor for m in group.members.values() if m.server_assignor),
                    runtime.config.consumer_assignors[0])
    return _Described(
        error_code=ErrorCode.NONE, group_id=group.group_id, group_state=group.state_name,
        group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, assignor_name=assignor,
        members=[
            ConsumerGroupDescribeResponse.Member(
                member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                client_id=m.client_id, client_host=m.client_host, subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex, assignment=_assignment(runtime, m.assigned),
                target_assignment=_assignment(runtime, group.target_assignment.get(m.member_id, {})),
                member_type=CLASSIC_MEMBER if m.uses_classic_protocol else CONSUMER_MEMBER)
            for m in group.members.values()
        ])


def _assignment(runtime: GroupRuntime, assignment: Assignment) -> ConsumerGroupDescribeResponse.Assignment:
    topics = []
    for topic_id, partitions in sorted(assignment.items()):
        topic = runtime.topics.topic_by_id(topic_id)
        topics.append(ConsumerGroupDescribeResponse.TopicPartitions(
            topic_id=topic_id, topic_name=topic.name if topic else "", partitions=sorted(partitions)))
    return ConsumerGroupDescribeResponse.Assignment(topic_partitions=topics)
