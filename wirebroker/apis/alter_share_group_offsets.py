"""AlterShareGroupOffsets: API key 91, version 0 (KIP-932; kafka-share-groups.sh --reset-offsets).

Behaviour:
- Starts each named partition of an empty share group at the offset given: its share-partition state is written
  again in `__share_group_state` with that start offset, nothing in flight and the next state epoch, and the next
  ShareFetch starts there; the partitions are recorded as initialised by the group (its ShareGroupStatePartitionMetadata
  record, as Kafka's initializeShareGroupState after an alter), so that a member joining is assigned them.
- A group id that names no group creates an empty share group (a ShareGroupMetadata record at epoch 1), as Kafka's
  GroupMetadataManager.alterShareGroupOffsets does, so offsets can be set before the first member joins.
- Group errors: GROUP_ID_NOT_FOUND (a group of another kind), NON_EMPTY_GROUP (members consume it),
  NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. An unknown topic or partition answers UNKNOWN_TOPIC_OR_PARTITION
  for it; the others are still reset.
Authorization (with an authorizer): READ on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic, else
TOPIC_AUTHORIZATION_FAILED in its partitions.
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
from wirebroker.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
)

API_KEY = 91

_Topic = AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic
_Partition = AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponsePartition


def handle(ctx: RequestContext, request: AlterShareGroupOffsetsRequest) -> AlterShareGroupOffsetsResponse:
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        # Kafka answers with its default message here (getErrorResponse(Errors)), not without one.
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                              error_message=str(GroupAuthorizationFailedError()), responses=[])
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, (t.topic_name for t in request.topics))

    def alter() -> AlterShareGroupOffsetsResponse:
        reset: dict[tuple[bytes, int], int] = {}
        topics = []
        for asked in request.topics:
            topic = ctx.broker.metadata.topic(asked.topic_name)
            answered = _Topic(topic_name=asked.topic_name, topic_id=topic.topic_id if topic else bytes(16),
                              partitions=[])
            for partition in asked.partitions:
                known = topic is not None and 0 <= partition.partition_index < topic.partitions
                if asked.topic_name not in readable:
                    answered.partitions.append(_Partition(partition_index=partition.partition_index,
                                                          error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED))
                    continue
                if known:
                    reset[(topic.topic_id, partition.partition_index)] = partition.start_offset
                answered.partitions.append(_Partition(
                    partition_index=partition.partition_index,
                    error_code=ErrorCode.NONE if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=None if known else "This server does not host this topic-partition."))
            topics.append(answered)
        share_services(ctx.broker).partitions.reset(request.group_id, reset)
        ctx.broker.group_coordinator.share_state_initialized(request.group_id, sorted(reset), assign=False)
        return AlterShareGroupOffsetsResponse(error_code=ErrorCode.NONE, responses=topics)

    def error(exc: KafkaError) -> AlterShareGroupOffsetsResponse:
        return AlterShareGroupOffsetsResponse(error_code=exc.code, error_message=str(exc), responses=[])

    return on_empty_share_group(ctx, request.group_id, alter, error, create=True)


serve(API_KEY, off_network_thread(handle))
