"""ReadShareGroupState: API key 84, version 0 (KIP-932's persister RPC; the share coordinator's).

Behaviour: each share-partition's state epoch, start offset and in-flight runs (delivery state and count); a
share-partition never initialised (or deleted) is INVALID_REQUEST "Read operation on uninitialized share partition
not allowed.", as Kafka 4.3.1 answers it (its share coordinator refuses to read what its group coordinator has not
initialised; ReadShareGroupStateSummary answers start offset -1 instead). A read at a newer
leader epoch than the state last heard of records it, fencing the older leader's writes (FENCED_LEADER_EPOCH).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import on_share_coordinator_thread, share_services
from wirebroker.apis.share_state import answer_each
from wirebroker.protocol.errors import InvalidRequestError
from wirebroker.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
    ReadShareGroupStateResponse,
)

API_KEY = 84
UNINITIALIZED = "Read operation on uninitialized share partition not allowed."  # Kafka's ShareCoordinatorShard


def handle(ctx: RequestContext, request: ReadShareGroupStateRequest) -> ReadShareGroupStateResponse:
    coordinator = share_services(ctx.broker).coordinator

    def read(topic, partition) -> dict:
        state = coordinator.read((request.group_id, topic.topic_id, partition.partition), partition.leader_epoch)
        if state is None:
            raise InvalidRequestError(UNINITIALIZED)
        return {"state_epoch": state.state_epoch, "start_offset": state.start_offset, "state_batches": [
            ReadShareGroupStateResponse.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                                   delivery_state=b.delivery_state, delivery_count=b.delivery_count)
            for b in state.batches]}

    return ReadShareGroupStateResponse(results=answer_each(
        ctx, request.topics, ReadShareGroupStateResponse.ReadStateResult, ReadShareGroupStateResponse.PartitionResult,
        read))


serve(API_KEY, on_share_coordinator_thread(handle))
