"""OffsetDelete: API key 47, version 0.

Behaviour:
- Deletes a group's committed offsets for the named partitions (tombstones in __consumer_offsets, KIP-496).
- GROUP_ID_NOT_FOUND for an unknown group; NON_EMPTY_GROUP for a group with members whose subscriptions cannot
  be read; per partition GROUP_SUBSCRIBED_TO_TOPIC while the group consumes the topic.
Version notes:
- v0 only.
Authorization (with an authorizer, as KafkaApis): DELETE on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic, else
  TOPIC_AUTHORIZATION_FAILED for its partitions.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
)

API_KEY = 47


def handle(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    require(ctx, AclOperation.DELETE, ResourceType.GROUP, request.group_id)
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    partitions = [(t.name, p.partition_index) for t in request.topics if t.name in readable for p in t.partitions]
    code, codes = ctx.broker.group_coordinator.delete_offsets(request.group_id, partitions)
    codes.update({(t.name, p.partition_index): ErrorCode.TOPIC_AUTHORIZATION_FAILED
                  for t in request.topics if t.name not in readable for p in t.partitions})
    if code != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=code)
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=[
        OffsetDeleteResponse.OffsetDeleteResponseTopic(name=t.name, partitions=[
            OffsetDeleteResponse.OffsetDeleteResponsePartition(partition_index=p.partition_index,
                                                               error_code=codes[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in request.topics])


serve(API_KEY, off_network_thread(handle))
