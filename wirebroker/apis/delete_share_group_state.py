"""DeleteShareGroupState: API key 86, version 0 (KIP-932's persister RPC; the share coordinator's).

Behaviour: deletes each share-partition's state (tombstones for its ShareSnapshot and ShareUpdate keys in
`__share_group_state`); deleting one that has none succeeds.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import on_share_coordinator_thread, share_services
from wirebroker.apis.share_state import answer_each, forget
from wirebroker.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
    DeleteShareGroupStateResponse,
)

API_KEY = 86


def handle(ctx: RequestContext, request: DeleteShareGroupStateRequest) -> DeleteShareGroupStateResponse:
    coordinator = share_services(ctx.broker).coordinator

    def delete(topic, partition) -> dict:
        coordinator.delete([(request.group_id, topic.topic_id, partition.partition)])
        forget(ctx, request.group_id, topic.topic_id, partition.partition)
        return {}

    return DeleteShareGroupStateResponse(results=answer_each(
        ctx, request.topics, DeleteShareGroupStateResponse.DeleteStateResult,
        DeleteShareGroupStateResponse.PartitionResult, delete))


serve(API_KEY, on_share_coordinator_thread(handle))
