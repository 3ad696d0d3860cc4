"""DeleteRecords: API key 21, versions 0-2 (KIP-107).

Behaviour (Kafka's ReplicaManager.deleteRecords and Partition.deleteRecordsOnLeader):
- Moves each partition's log start offset up to the given offset (-1: the high watermark), hiding the records
  before it at once; the segments wholly below it are deleted later by the log's retention pass. The answer's
  low_watermark is the new leader's log start offset; followers take it from their next fetch (Kafka also waits
  for them, DelayedDeleteRecords; wirebroker answers at once).
- An offset below the current log start offset changes nothing and answers the current one.
- Errors per partition, low_watermark -1: unknown topic or partition UNKNOWN_TOPIC_OR_PARTITION; a broker that does
  not lead the partition NOT_LEADER_OR_FOLLOWER; an internal topic
  INVALID_TOPIC_EXCEPTION; a topic without cleanup.policy=delete POLICY_VIOLATION; a negative offset other than
  -1, or one past the high watermark, OFFSET_OUT_OF_RANGE; Kafka's messages are logged.
- A partition named twice: its last offset counts, and it is answered once.
- With an authorizer each topic needs DELETE, else TOPIC_AUTHORIZATION_FAILED (before its existence is looked at).
Version notes:
- v1 same as v0; v2 flexible.
"""

from __future__ import annotations

import logging

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.metadata import INTERNAL_TOPICS
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidTopicError,
    KafkaError,
    OffsetOutOfRangeError,
    PolicyViolationError,
)
from wirebroker.protocol.messages.delete_records import (
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 21

HIGH_WATERMARK = -1  # DeleteRecordsRequest.HIGH_WATERMARK: delete everything committed
UNKNOWN_LOW_WATERMARK = -1

_Topic = DeleteRecordsResponse.DeleteRecordsTopicResult
_Partition = DeleteRecordsResponse.DeleteRecordsPartitionResult


def handle(ctx: RequestContext, request: DeleteRecordsRequest) -> DeleteRecordsResponse:
    wanted: dict[str, dict[int, int]] = {}
    for topic in request.topics:
        offsets = wanted.setdefault(topic.name, {})
        for partition in topic.partitions:
            offsets[partition.partition_index] = partition.offset
    return DeleteRecordsResponse(topics=[
        _Topic(name=name, partitions=[_delete(ctx, name, index, offset) for index, offset in offsets.items()])
        for name, offsets in wanted.items()
    ])


def _delete(ctx: RequestContext, topic: str, index: int, offset: int) -> _Partition:
    if not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, topic):  # before its existence is looked at
        return _Partition(partition_index=index, low_watermark=UNKNOWN_LOW_WATERMARK,
                          error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    try:
        low_watermark = _delete_before(ctx, topic, index, offset)
    except KafkaError as exc:
        log.info("DeleteRecords on %s-%d to offset %d from %s failed: %s", topic, index, offset, ctx.client,
                 exc)
        return _Partition(partition_index=index, low_watermark=UNKNOWN_LOW_WATERMARK, error_code=exc.code)
    return _Partition(partition_index=index, low_watermark=low_watermark, error_code=ErrorCode.NONE)


def _delete_before(ctx: RequestContext, topic: str, index: int, offset: int) -> int:
    """Move the log start offset to `offset` and return the new low watermark (Partition.deleteRecordsOnLeader)."""
    if topic in INTERNAL_TOPICS:
        raise InvalidTopicError(f"Cannot delete records of internal topic {topic}")
    partition = ctx.broker.replica_manager.leader_partition(topic, index)
    log_ = partition.log
    if not log_.config.delete:
        raise PolicyViolationError(
            f"Records of partition {topic}-{index} can not be deleted due to the configured policy")
    target = partition.high_watermark if offset == HIGH_WATERMARK else offset
    if target < 0:
        raise OffsetOutOfRangeError(f"The offset {target} for partition {topic}-{index} is not valid")
    if log_.increment_log_start_offset(target):
        log.info("Deleted records of %s-%d before offset %d at the request of %s", topic, index, target,
                 ctx.client)
    return log_.log_start_offset


serve(API_KEY, handle)
