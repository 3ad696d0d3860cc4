"""ReadShareGroupStateSummary: API key 87, versions 0-1 (KIP-932's persister RPC; the share coordinator's).

Behaviour: each share-partition's state epoch, leader epoch (-1: this coordinator keeps none) and start offset,
without its runs; a share-partition never initialised answers start offset -1 and state epoch 0.
Version notes:
- v1 adds DeliveryCompleteCount (-1 when it was never written).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import on_share_coordinator_thread, share_services
from wirebroker.apis.share_state import answer_each
from wirebroker.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse,
)

API_KEY = 87
UNINITIALIZED_START_OFFSET = -1
NO_LEADER_EPOCH = -1


def handle(ctx: RequestContext, request: ReadShareGroupStateSummaryRequest) -> ReadShareGroupStateSummaryResponse:
    coordinator = share_services(ctx.broker).coordinator

    def summary(topic, partition) -> dict:
        state = coordinator.read((request.group_id, topic.topic_id, partition.partition))
        if state is None:
            return {"state_epoch": 0, "leader_epoch": NO_LEADER_EPOCH, "start_offset": UNINITIALIZED_START_OFFSET,
                    "delivery_complete_count": -1}
        return {"state_epoch": state.state_epoch, "leader_epoch": state.leader_epoch, "start_offset": state.start_offset,
                "delivery_complete_count": state.delivery_complete_count}

    return ReadShareGroupStateSummaryResponse(results=answer_each(
        ctx, request.topics, ReadShareGroupStateSummaryResponse.ReadStateSummaryResult,
        ReadShareGroupStateSummaryResponse.PartitionResult, summary))


serve(API_KEY, on_share_coordinator_thread(handle))
