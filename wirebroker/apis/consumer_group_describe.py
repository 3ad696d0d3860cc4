"""ConsumerGroupDescribe: API key 69, version 0.

Behaviour:
- For each KIP-848 consumer group: state, group epoch, target assignment epoch, assignor, and every member with its
  subscription, current assignment and target assignment (topic ids and names).
- GROUP_ID_NOT_FOUND for an unknown group or a classic one ("is not a consumer group").
Version notes:
- v0 only; authorized operations as KIP-430 with no authorizer.
"""

from __future__ import annotations

from wirebroker.apis.authorized_operations import group_authorized_operations
from wirebroker.apis.registry import serve
from wirebroker.coordinator.consumer_group import Assignment, ConsumerGroup
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.consumer_group_describe import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
from wirebroker.apis.context import RequestContext

API_KEY = 69

_R = ConsumerGroupDescribeResponse


def handle(ctx: RequestContext, request: ConsumerGroupDescribeRequest) -> ConsumerGroupDescribeResponse:
    coordinator = ctx.broker.group_coordinator
    groups = []
    for group_id in request.group_ids:
        with coordinator.lock:
            try:
                coordinator.check_loaded()
                group = coordinator.group(group_id)
                if not isinstance(group, ConsumerGroup):
                    groups.append(_R.DescribedGroup(
                        group_id=group_id, error_code=ErrorCode.GROUP_ID_NOT_FOUND,
                        error_message=f"Group {group_id} not found." if group is None
                        else f"Group {group_id} is not a consumer group."))
                    continue
                described = _describe(ctx, group, coordinator.config.consumer_assignors[0])
            except KafkaError as exc:
                described = _R.DescribedGroup(group_id=group_id, error_code=exc.code, error_message=str(exc))
        described.authorized_operations = group_authorized_operations(request.include_authorized_operations)
        groups.append(described)
    return _R(groups=groups)


def _describe(ctx: RequestContext, group: ConsumerGroup, default_assignor: str) -> ConsumerGroupDescribeResponse.DescribedGroup:
    assignor = next((m.server_assignor for m in group.members.values() if m.server_assignor), default_assignor)
    return _R.DescribedGroup(
        error_code=ErrorCode.NONE, group_id=group.group_id, group_state=group.state_name,
        group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, assignor_name=assignor,
        members=[
            _R.Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                      member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                      subscribed_topic_names=list(m.subscribed_topic_names),
                      subscribed_topic_regex=m.subscribed_topic_regex,
                      assignment=_assignment(ctx, m.assigned),
                      target_assignment=_assignment(ctx, group.target_assignment.get(m.member_id, {})))
            for m in group.members.values()
        ])


def _assignment(ctx: RequestContext, assignment: Assignment) -> ConsumerGroupDescribeResponse.Assignment:
    metadata = ctx.broker.metadata
    topics = []
    for topic_id, partitions in sorted(assignment.items()):
        topic = metadata.topic_by_id(topic_id)
        topics.append(_R.TopicPartitions(topic_id=topic_id, topic_name=topic.name if topic else "",
                                         partitions=sorted(partitions)))
    return _R.Assignment(topic_partitions=topics)


serve(API_KEY, handle)
