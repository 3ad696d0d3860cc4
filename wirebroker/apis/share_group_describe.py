"""ShareGroupDescribe: API key 77, version 1 (KIP-932 share groups).

Behaviour:
- For each share group: state (Empty, Stable, Reconciling, Dead), group epoch, assignment epoch, the assignor
  ("simple", Kafka's only share assignor), and every member with its rack, epoch, client, subscription and assigned
  partitions (topic ids and names).
- GROUP_ID_NOT_FOUND for an unknown group or one of another kind ("is not a share group"); NOT_COORDINATOR and
  COORDINATOR_LOAD_IN_PROGRESS as every group API.
Authorization (with an authorizer): DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED for it.
Version notes:
- Authorized operations are left unset (INT32_MIN) whether asked or not.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ErrorCode,
    KafkaError,
)
from wirebroker.protocol.messages.share_group_describe import (
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)

API_KEY = 77
SHARE_ASSIGNOR = "simple"  # Kafka's SimpleAssignor, group.share.assignors' only value

_Described = ShareGroupDescribeResponse.DescribedGroup


def handle(ctx: RequestContext, request: ShareGroupDescribeRequest) -> ShareGroupDescribeResponse:
    coordinator = ctx.broker.group_coordinator
    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, request.group_ids)
    return ShareGroupDescribeResponse(groups=[
        coordinator.serve_share(group_id, lambda group_id=group_id: _describe(ctx, coordinator.share_group(group_id)),
                                lambda exc, group_id=group_id: _error(group_id, exc))
        if group_id in allowed else _refused(group_id)
        for group_id in request.group_ids])


def _refused(group_id: str) -> _Described:
    """No message, as Kafka's KafkaApis answers a group it may not describe."""
    return _Described(group_id=group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None,
                      group_state="", assignor_name="")


def _error(group_id: str, exc: KafkaError) -> _Described:
    return _Described(group_id=group_id, error_code=exc.code, error_message=str(exc), group_state="",
                      assignor_name="")


def _describe(ctx: RequestContext, group) -> _Described:
    def assignment(assigned: dict[bytes, frozenset[int]]) -> ShareGroupDescribeResponse.Assignment:
        topics = []
        for topic_id, partitions in sorted(assigned.items()):
            topic = ctx.broker.metadata.topic_by_id(topic_id)
            topics.append(ShareGroupDescribeResponse.TopicPartitions(
                topic_id=topic_id, topic_name=topic.name if topic else "", partitions=sorted(partitions)))
        return ShareGroupDescribeResponse.Assignment(topic_partitions=topics)

    return _Described(
        error_code=ErrorCode.NONE, group_id=group.group_id, group_state=group.state_name,
        group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, assignor_name=SHARE_ASSIGNOR,
        members=[ShareGroupDescribeResponse.Member(
            member_id=m.member_id, rack_id=m.rack_id, member_epoch=m.member_epoch, client_id=m.client_id,
            client_host=m.client_host, subscribed_topic_names=list(m.subscribed_topic_names),
            assignment=assignment(m.assigned)) for m in group.members.values()])


serve(API_KEY, off_network_thread(handle))
