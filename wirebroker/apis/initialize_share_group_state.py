"""InitializeShareGroupState: API key 83, version 0 (KIP-932's persister RPC; the share coordinator's).

Behaviour: starts each share-partition's state afresh at the start offset given, with the state epoch given
(a ShareSnapshot in `__share_group_state`); FENCED_STATE_EPOCH for an epoch older than the stored one.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import on_share_coordinator_thread, share_services
from wirebroker.apis.share_state import answer_each, forget
from wirebroker.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
    InitializeShareGroupStateResponse,
)

API_KEY = 83


def handle(ctx: RequestContext, request: InitializeShareGroupStateRequest) -> InitializeShareGroupStateResponse:
    coordinator = share_services(ctx.broker).coordinator

    def initialize(topic, partition) -> dict:
        coordinator.initialize((request.group_id, topic.topic_id, partition.partition), partition.state_epoch,
                               partition.start_offset)
        forget(ctx, request.group_id, topic.topic_id, partition.partition)
        return {}

    return InitializeShareGroupStateResponse(results=answer_each(
        ctx, request.topics, InitializeShareGroupStateResponse.InitializeStateResult,
        InitializeShareGroupStateResponse.PartitionResult, initialize))


serve(API_KEY, on_share_coordinator_thread(handle))
