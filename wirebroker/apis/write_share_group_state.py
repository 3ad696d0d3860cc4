"""WriteShareGroupState: API key 85, versions 0-1 (KIP-932's persister RPC; the share coordinator's).

Behaviour: merges each share-partition's runs into its stored state (a run replaces those offsets; start offset -1
keeps the stored one; runs below the start go) and writes the result as a ShareSnapshot; FENCED_STATE_EPOCH for an
epoch older than the stored one, FENCED_LEADER_EPOCH for a leader epoch older than the last one the state heard of.
Version notes:
- v1 adds DeliveryCompleteCount, stored with the state (ReadShareGroupStateSummary v1 answers it).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import on_share_coordinator_thread, share_services
from wirebroker.apis.share_state import answer_each, forget
from wirebroker.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
    WriteShareGroupStateResponse,
)

API_KEY = 85
FIRST_DELIVERY_COMPLETE_COUNT_VERSION = 1


def handle(ctx: RequestContext, request: WriteShareGroupStateRequest) -> WriteShareGroupStateResponse:
    from wirebroker.coordinator.share_partition import StateBatch

    coordinator = share_services(ctx.broker).coordinator

    def write(topic, partition) -> dict:
        complete = (partition.delivery_complete_count if ctx.api_version >= FIRST_DELIVERY_COMPLETE_COUNT_VERSION
                    else -1)
        coordinator.update((request.group_id, topic.topic_id, partition.partition), partition.state_epoch,
                           partition.start_offset,
                           [StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                            for b in partition.state_batches], complete, partition.leader_epoch)
        forget(ctx, request.group_id, topic.topic_id, partition.partition)
        return {}

    return WriteShareGroupStateResponse(results=answer_each(
        ctx, request.topics, WriteShareGroupStateResponse.WriteStateResult,
        WriteShareGroupStateResponse.PartitionResult, write))


serve(API_KEY, on_share_coordinator_thread(handle))
