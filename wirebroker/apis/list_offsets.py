"""ListOffsets: API key 2, versions 0-11.

Behaviour:
- Each partition's timestamp picks an offset: -1 latest (the high watermark; the last stable offset for
  read_committed; the log end offset for a follower's request), -2 earliest (the log start offset), or a real
  timestamp: the first record with a timestamp at or after it. A lookup that finds nothing, or only records past
  what the client may read, answers NONE with offset and timestamp -1, as Kafka does.
- A partition named twice in one request: one INVALID_REQUEST entry for it (Kafka's duplicatePartitions).
- A special timestamp newer than the request's version, or unknown: UNSUPPORTED_VERSION for that partition.
- Unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION; a stale or future current_leader_epoch:
  FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (KIP-320); a replica that does not lead the partition:
  NOT_LEADER_OR_FOLLOWER, unless the request comes from the debugging replica id (-2).
- Answers come at once: there is no tiered storage to wait for (Kafka's DelayedRemoteListOffsets).
- With an authorizer each topic needs DESCRIBE, else TOPIC_AUTHORIZATION_FAILED for its partitions.
Version notes:
- v0: the old-style `offsets` array of segment base offsets before the timestamp, at most max_num_offsets, newest
  first, capped at the high watermark for consumers (Kafka's legacyFetchOffsetsBefore); no duplicate check.
- v1+: one offset and its timestamp; v2+ isolation_level (KIP-98); v4+ current_leader_epoch and leader_epoch
  (KIP-320); v5+ OFFSET_NOT_AVAILABLE would replace LEADER_NOT_AVAILABLE (never raised here: a single broker's
  high watermark never lags its epoch start); v6+ flexible.
- v7+ -3 max timestamp (KIP-734); v8+ -4 earliest local (KIP-405; the earliest offset, nothing is tiered);
  v9+ -5 latest tiered (KIP-1005; -1 with no tiered storage); v10 timeout_ms, unused (nothing to wait for);
  v11+ -6 earliest pending upload (KIP-1023; offset, timestamp and leader epoch -1 with no tiered storage, as Kafka's
  UnifiedLog answers for a topic without remote storage).
"""

from __future__ import annotations

import logging
import time
from collections import Counter

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.log.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
)
from wirebroker.protocol.errors import (
    ErrorCode,
    InvalidRequestError,
    KafkaError,
    TopicAuthorizationFailedError,
    UnsupportedVersionError,
)
from wirebroker.protocol.messages.list_offsets import (
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from wirebroker.replica.partition import READ_COMMITTED, Partition

log = logging.getLogger(__name__)

API_KEY = 2

CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2  # Kafka's FetchRequest.DEBUGGING_REPLICA_ID: may read any replica
UNKNOWN_TIMESTAMP = -1
FIRST_LEADER_EPOCH_VERSION = 4  # KIP-320
# The first version that may ask for each special timestamp (Kafka's ReplicaManager.timestampMinSupportedVersion).
MIN_VERSION_FOR_TIMESTAMP = {
    LATEST_TIMESTAMP: 1,
    EARLIEST_TIMESTAMP: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}
NEVER_SUPPORTED = 2**15  # above every int16 version: a negative timestamp not listed above (e.g. -7)

_Topic = ListOffsetsResponse.ListOffsetsTopicResponse
_Partition = ListOffsetsResponse.ListOffsetsPartitionResponse


def handle(ctx: RequestContext, request: ListOffsetsRequest) -> ListOffsetsResponse:
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics))
    if ctx.api_version == 0:
        return ListOffsetsResponse(topics=[_legacy_topic(ctx, request.replica_id, t, t.name in described)
                                           for t in request.topics])
    seen = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    answered: dict[str, dict[int, _Partition]] = {}
    for topic in request.topics:
        partitions = answered.setdefault(topic.name, {})
        for wanted in topic.partitions:
            if wanted.partition_index in partitions:
                continue
            try:
                if topic.name not in described:  # before anything else about it is looked at
                    raise TopicAuthorizationFailedError()
                if seen[(topic.name, wanted.partition_index)] > 1:
                    raise InvalidRequestError("the partition appears more than once in the request")
                partitions[wanted.partition_index] = _list_offset(ctx, request, topic.name, wanted)
            except KafkaError as exc:
                log.debug("ListOffsets for %s-%d from %s failed: %s", topic.name, wanted.partition_index,
                          ctx.client, exc)
                partitions[wanted.partition_index] = _Partition(partition_index=wanted.partition_index,
                                                                error_code=exc.code)
    return ListOffsetsResponse(
        topics=[_Topic(name=name, partitions=list(partitions.values())) for name, partitions in answered.items()]
    )


def _list_offset(ctx: RequestContext, request: ListOffsetsRequest, topic: str,
                 wanted: ListOffsetsRequest.ListOffsetsPartition) -> _Partition:
    timestamp = wanted.timestamp
    if timestamp < 0 and ctx.api_version < MIN_VERSION_FOR_TIMESTAMP.get(timestamp, NEVER_SUPPORTED):
        raise UnsupportedVersionError(f"timestamp {timestamp} needs a newer ListOffsets version")
    replicas = ctx.broker.replica_manager
    # Only Kafka's debugging replica id may read a follower's offsets (ReplicaManager.fetchOffsetForTimestamp).
    partition = (replicas.online_partition(topic, wanted.partition_index) if request.replica_id == DEBUGGING_REPLICA_ID
                 else replicas.leader_partition(topic, wanted.partition_index))
    partition.check_leader_epoch(wanted.current_leader_epoch)
    last_fetchable = _last_fetchable_offset(partition, request)
    answer = _Partition(partition_index=wanted.partition_index, error_code=ErrorCode.NONE)
    if timestamp == LATEST_TIMESTAMP:
        found_timestamp, found_offset, found_epoch = UNKNOWN_TIMESTAMP, last_fetchable, partition.leader_epoch
    else:
        found = partition.log.fetch_offset_by_timestamp(timestamp)
        # Offsets past what this client may read are not disclosed (Kafka answers NONE with -1); the earliest
        # offset is always readable.
        if found is None or (timestamp not in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP)
                             and found.offset >= last_fetchable):
            return answer
        found_timestamp, found_offset, found_epoch = found
    answer.timestamp = found_timestamp
    answer.offset = found_offset
    if ctx.api_version >= FIRST_LEADER_EPOCH_VERSION and found_epoch is not None:
        answer.leader_epoch = found_epoch
    return answer


def _last_fetchable_offset(partition: Partition, request: ListOffsetsRequest) -> int:
    if request.replica_id != CONSUMER_REPLICA_ID:
        return partition.log_end_offset
    if request.isolation_level == READ_COMMITTED:
        return partition.last_stable_offset
    return partition.high_watermark


# ---- v0 ----------------------------------------------------------------------------------------------------------

def _legacy_topic(ctx: RequestContext, replica_id: int, topic: ListOffsetsRequest.ListOffsetsTopic,
                  described: bool) -> _Topic:
    partitions = []
    for wanted in topic.partitions:
        try:
            if not described:
                raise TopicAuthorizationFailedError()
            partition = ctx.broker.replica_manager.leader_partition(topic.name, wanted.partition_index)
            offsets = _legacy_offsets_before(partition, wanted.timestamp, wanted.max_num_offsets,
                                             from_consumer=replica_id == CONSUMER_REPLICA_ID)
        except KafkaError as exc:
            partitions.append(_Partition(partition_index=wanted.partition_index, error_code=exc.code))
            continue
        partitions.append(_Partition(partition_index=wanted.partition_index, error_code=ErrorCode.NONE,
                                     old_style_offsets=offsets))
    return _Topic(name=topic.name, partitions=partitions)


def _legacy_offsets_before(partition: Partition, timestamp: int, max_num_offsets: int,
                           from_consumer: bool) -> list[int]:
    """Segment base offsets (and the log end offset) last modified at or before `timestamp`, newest first."""
    log_ = partition.log
    segments = list(log_.segments)
    offset_times = [(max(s.base_offset, log_.log_start_offset), s.log.last_modified_ms()) for s in segments]
    if segments and segments[-1].size > 0:
        offset_times.append((log_.log_end_offset, int(time.time() * 1000)))
    if timestamp == LATEST_TIMESTAMP:
        start = len(offset_times) - 1
    elif timestamp == EARLIEST_TIMESTAMP:
        start = 0
    else:
        start = len(offset_times) - 1
        while start >= 0 and offset_times[start][1] > timestamp:
            start -= 1
    count = min(max_num_offsets, start + 1)
    offsets = sorted({offset_times[start - i][0] for i in range(count)}, reverse=True)
    high_watermark = partition.high_watermark
    if from_consumer and any(offset > high_watermark for offset in offsets):
        return [high_watermark] + [offset for offset in offsets if offset <= high_watermark]
    return offsets


serve(API_KEY, handle)
