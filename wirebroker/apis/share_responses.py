"""What ShareFetch and ShareAcknowledge share at the API boundary: their acknowledgements read from the request,
and their per-partition answers grouped by topic (the two responses have the same shape). A partition this broker
does not lead (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH: its leader moved, say its broker died) names its current
leader and epoch, and the answer carries that leader's endpoint (NodeEndpoints), as KafkaApis answers them, so the
client goes there without waiting for a metadata refresh."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.share_acknowledge import ShareAcknowledgeResponse
from wirebroker.protocol.messages.share_fetch import ShareFetchResponse

if TYPE_CHECKING:  # the share-partition manager is imported at the first share request (apis/share_services.py)
    from wirebroker.coordinator.share_partition_manager import (
        Acknowledgements,
        PartitionResult,
    )

FIRST_ACK_LOCK_TIMEOUT_VERSION = 2  # ShareAcknowledge v2 answers AcquisitionLockTimeoutMs (KIP-1222)


def acknowledgements(topics: list[Any]) -> Acknowledgements:
    """(topic id, partition) -> [(first offset, last offset, acknowledge types)] of a request's topics."""
    return {(t.topic_id, p.partition_index): [(b.first_offset, b.last_offset, list(b.acknowledge_types))
                                              for b in p.acknowledgement_batches]
            for t in topics for p in t.partitions if p.acknowledgement_batches}


def authorize_topics(ctx: RequestContext, topics: list[Any]) -> tuple[list[Any], list[PartitionResult]]:
    """READ on the group (else GROUP_AUTHORIZATION_FAILED, raised) and on each topic: (the request's topics the
    principal may read, a TOPIC_AUTHORIZATION_FAILED answer for each partition of the others). A topic id this
    broker does not know passes, to be answered UNKNOWN_TOPIC_ID."""
    from wirebroker.coordinator.share_partition_manager import PartitionResult

    names = {t.topic_id: topic.name for t in topics if (topic := ctx.broker.metadata.topic_by_id(t.topic_id))}
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, names.values())
    allowed = [t for t in topics if names.get(t.topic_id) in readable or t.topic_id not in names]
    refused = [PartitionResult(t.topic_id, p.partition_index, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
               for t in topics if t not in allowed for p in t.partitions]
    return allowed, refused


def _topics(results: list[PartitionResult], topic_struct: type, partition: Any) -> list:
    by_topic: dict[bytes, Any] = {}
    for result in results:
        topic = by_topic.setdefault(result.topic_id, topic_struct(topic_id=result.topic_id, partitions=[]))
        topic.partitions.append(partition(result))
    return list(by_topic.values())


LEADER_MOVED = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH})


def _leader(ctx: RequestContext, result: PartitionResult) -> tuple[int, int]:
    """(leader id, leader epoch) the answer names for the partition: this broker, or the current leader if it moved."""
    if result.error_code not in LEADER_MOVED and result.acknowledge_error_code not in LEADER_MOVED:
        return ctx.broker.node_id, result.leader_epoch
    topic = ctx.broker.metadata.topic_by_id(result.topic_id)
    view = ctx.broker.cluster_view.topic(topic.name) if topic is not None else None
    if view is None or result.partition >= len(view.partitions):
        return -1, -1
    return view.partitions[result.partition].leader, view.partitions[result.partition].leader_epoch


def _node_endpoints(ctx: RequestContext, leaders: set[int], endpoint: type) -> list:
    """The endpoints, on the request's listener, of the other brokers the answer names as leaders."""
    return [endpoint(node_id=n.node_id, host=n.host, port=n.port, rack=n.rack)
            for n in ctx.broker.cluster_view.alive_brokers(ctx.listener)
            if n.node_id in leaders and n.node_id != ctx.broker.node_id]


def share_fetch_response(ctx: RequestContext, error_code: int, message: str | None, results: list[PartitionResult],
                         lock_duration_ms: int) -> ShareFetchResponse:
    leaders: set[int] = set()

    def partition(result: PartitionResult) -> ShareFetchResponse.PartitionData:
        leader_id, leader_epoch = _leader(ctx, result)
        leaders.add(leader_id)
        return ShareFetchResponse.PartitionData(
            partition_index=result.partition, error_code=result.error_code, error_message=result.error_message,
            acknowledge_error_code=result.acknowledge_error_code,
            acknowledge_error_message=result.acknowledge_error_message,
            current_leader=ShareFetchResponse.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch),
            records=result.records,
            acquired_records=[ShareFetchResponse.AcquiredRecords(first_offset=a.first_offset,
                                                                 last_offset=a.last_offset,
                                                                 delivery_count=a.delivery_count)
                              for a in result.acquired])

    responses = _topics(results, ShareFetchResponse.ShareFetchableTopicResponse, partition)
    return ShareFetchResponse(error_code=error_code, error_message=message, acquisition_lock_timeout_ms=lock_duration_ms,
                              responses=responses,
                              node_endpoints=_node_endpoints(ctx, leaders, ShareFetchResponse.NodeEndpoint))


def share_acknowledge_response(ctx: RequestContext, error_code: int, message: str | None,
                               results: list[PartitionResult], lock_duration_ms: int) -> ShareAcknowledgeResponse:
    leaders: set[int] = set()

    def partition(result: PartitionResult) -> ShareAcknowledgeResponse.PartitionData:
        leader_id, leader_epoch = _leader(ctx, result)
        leaders.add(leader_id)
        return ShareAcknowledgeResponse.PartitionData(
            partition_index=result.partition, error_code=result.acknowledge_error_code or result.error_code,
            error_message=result.acknowledge_error_message or result.error_message,
            current_leader=ShareAcknowledgeResponse.LeaderIdAndEpoch(leader_id=leader_id, leader_epoch=leader_epoch))

    responses = _topics(results, ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse, partition)
    response = ShareAcknowledgeResponse(error_code=error_code, error_message=message, responses=responses,
                                        node_endpoints=_node_endpoints(ctx, leaders,
                                                                       ShareAcknowledgeResponse.NodeEndpoint))
    if ctx.api_version >= FIRST_ACK_LOCK_TIMEOUT_VERSION:
        response.acquisition_lock_timeout_ms = lock_duration_ms
    return response
