"""DeleteShareGroupOffsets: API key 92, version 0 (KIP-932; kafka-share-groups.sh --delete-offsets).

Behaviour:
- Deletes the share-partition states of the named topics for an empty share group (tombstones in
  `__share_group_state`), those its coordinator initialised: the group's record has them deleting, then neither
  initialised nor deleting, so that its next member's heartbeat initialises them again at
  share.auto.offset.reset. A topic the group never initialised has nothing to delete (NONE).
- Group errors: GROUP_ID_NOT_FOUND (unknown, or a group of another kind), NON_EMPTY_GROUP, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS. An unknown topic answers UNKNOWN_TOPIC_OR_PARTITION.
Authorization (with an authorizer): DELETE on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic, else
TOPIC_AUTHORIZATION_FAILED for it.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.share_group_admin import on_empty_share_group
from wirebroker.apis.share_services import share_services
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ErrorCode,
    GroupAuthorizationFailedError,
    KafkaError,
)
from wirebroker.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
)

API_KEY = 92

_Topic = DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic


def handle(ctx: RequestContext, request: DeleteShareGroupOffsetsRequest) -> DeleteShareGroupOffsetsResponse:
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        # Kafka answers with its default message here (getErrorResponse(Errors)), not without one.
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                               error_message=str(GroupAuthorizationFailedError()), responses=[])
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, (t.topic_name for t in request.topics))

    def delete() -> DeleteShareGroupOffsetsResponse:
        coordinator = ctx.broker.group_coordinator
        group = coordinator.share_group(request.group_id)
        topics = []
        deleted: set[bytes] = set()
        for asked in request.topics:
            topic = ctx.broker.metadata.topic(asked.topic_name)
            if asked.topic_name not in readable:
                topics.append(_Topic(topic_name=asked.topic_name, topic_id=bytes(16),
                                     error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                continue
            if topic is None:
                topics.append(_Topic(topic_name=asked.topic_name, topic_id=bytes(16),
                                     error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                     error_message="This server does not host this topic-partition."))
                continue
            if topic.topic_id in group.initialized or topic.topic_id in group.initializing:
                deleted.add(topic.topic_id)
            topics.append(_Topic(topic_name=asked.topic_name, topic_id=topic.topic_id, error_code=ErrorCode.NONE))
        if deleted:
            coordinator.record_share_state_deletion(group, deleted, done=False)
            share_services(ctx.broker).partitions.delete_state(request.group_id, group.partitions_with_state(deleted))
            coordinator.record_share_state_deletion(group, deleted, done=True)
        return DeleteShareGroupOffsetsResponse(error_code=ErrorCode.NONE, responses=topics)

    def error(exc: KafkaError) -> DeleteShareGroupOffsetsResponse:
        return DeleteShareGroupOffsetsResponse(error_code=exc.code, error_message=str(exc), responses=[])

    return on_empty_share_group(ctx, request.group_id, delete, error)


serve(API_KEY, off_network_thread(handle))
