"""OffsetDelete: API key 47, version 0.

Behaviour:
- Deletes a group's committed offsets for the named partitions (tombstones in __consumer_offsets, KIP-496).
- GROUP_ID_NOT_FOUND for an unknown group; NON_EMPTY_GROUP for a group with members whose subscriptions cannot
  be read; per partition GROUP_SUBSCRIBED_TO_TOPIC while the group consumes the topic.
Version notes:
- v0 only.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
)

API_KEY = 47


def handle(ctx: RequestContext, request: OffsetDeleteRequest) -> OffsetDeleteResponse:
    partitions = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    code, codes = ctx.broker.group_coordinator.delete_offsets(request.group_id, partitions)
    if code != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=code)
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=[
        OffsetDeleteResponse.OffsetDeleteResponseTopic(name=t.name, partitions=[
            OffsetDeleteResponse.OffsetDeleteResponsePartition(partition_index=p.partition_index,
                                                               error_code=codes[(t.name, p.partition_index)])
            for p in t.partitions])
        for t in request.topics])


serve(API_KEY, off_network_thread(handle))
