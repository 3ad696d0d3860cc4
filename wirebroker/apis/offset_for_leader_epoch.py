"""OffsetForLeaderEpoch: API key 23, versions 2-4.

Behaviour:
- For each partition, the end offset of the requested leader epoch from the partition's leader epoch cache: the
  start offset of the first later epoch, or the log end offset when the requested epoch is the latest (Kafka's
  Partition.lastOffsetForLeaderEpoch). An epoch older than every cached one answers the first cached epoch's start,
  an epoch newer than all of them (or a log with no epochs yet) answers NONE with epoch and offset -1, and the
  consumer then knows nothing about divergence, as with Kafka.
- Consumers (KIP-320) use it after a leader change to detect log truncation; followers (replica_id >= 0) to find
  where their log diverges from the new leader's (KIP-101/279, replica/truncation.py). Only the leader answers:
  elsewhere NOT_LEADER_OR_FOLLOWER.
- Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION; a current_leader_epoch other than the partition's:
  FENCED_LEADER_EPOCH (older) or UNKNOWN_LEADER_EPOCH (newer).
- With an authorizer: CLUSTER_ACTION on the cluster (a follower) answers every topic; otherwise each topic needs
  DESCRIBE (a consumer, KIP-320), else TOPIC_AUTHORIZATION_FAILED for its partitions.
Version notes:
- v0-1 are not served, as in Kafka 4 (KIP-896); v2+ current_leader_epoch (KIP-320); v3+ replica_id (consumers
  send -1, followers their broker id; both are answered alike); v4+ flexible.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)

API_KEY = 23

_Topic = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
_EpochEndOffset = OffsetForLeaderEpochResponse.EpochEndOffset


def handle(ctx: RequestContext, request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse:
    names = [topic.topic for topic in request.topics]
    # A follower has CLUSTER_ACTION; a consumer checking for truncation (KIP-320) needs DESCRIBE on the topic.
    allowed = (set(names) if ctx.authorize(AclOperation.CLUSTER_ACTION, log_denied=False)
               else ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, names))
    return OffsetForLeaderEpochResponse(topics=[
        _Topic(topic=topic.topic, partitions=[
            _end_offset(ctx, topic.topic, p) if topic.topic in allowed
            else _EpochEndOffset(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition=p.partition)
            for p in topic.partitions])
        for topic in request.topics
    ])


def _end_offset(ctx: RequestContext, topic: str,
                wanted: OffsetForLeaderEpochRequest.OffsetForLeaderPartition) -> _EpochEndOffset:
    try:
        partition = ctx.broker.replica_manager.leader_partition(topic, wanted.partition)
        partition.check_leader_epoch(wanted.current_leader_epoch)
    except KafkaError as exc:
        return _EpochEndOffset(error_code=exc.code, partition=wanted.partition)
    found = partition.log.end_offset_for_epoch(wanted.leader_epoch)
    if found is None:
        return _EpochEndOffset(error_code=ErrorCode.NONE, partition=wanted.partition)
    end_offset, epoch = found
    return _EpochEndOffset(error_code=ErrorCode.NONE, partition=wanted.partition, leader_epoch=epoch,
                           end_offset=end_offset)


serve(API_KEY, handle)
