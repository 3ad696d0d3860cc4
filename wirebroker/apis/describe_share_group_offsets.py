"""DescribeShareGroupOffsets: API key 90, versions 0-1 (KIP-932; kafka-share-groups.sh --describe).

Behaviour:
- For each share group, the share-partition start offset of each partition asked for (no topics: every
  share-partition the group's coordinator has initialised, from the group's ShareGroupStatePartitionMetadata
  record, as Kafka's initializedShareGroupPartitions), read from the share coordinator (ReadShareGroupStateSummary
  of those partitions only, outside the group coordinator's lock); -1 for a partition not initialised, and -1 too
  for one initialised whose leader has not fetched it yet (share.auto.offset.reset is resolved there). Kafka's
  kafka-share-groups.sh lists a group's partitions once its first heartbeat has initialised them, before any fetch.
  The leader epoch is the partition's.
- Group errors: GROUP_ID_NOT_FOUND (unknown, or a group of another kind) when no topics are named (named topics
  of a group that is none are answered -1), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. An unknown topic
  answers UNKNOWN_TOPIC_OR_PARTITION in each of its partitions.
Authorization (with an authorizer): DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED for it; DESCRIBE on
each topic, else TOPIC_AUTHORIZATION_FAILED in its partitions.
Version notes:
- v1 adds Lag: the records of the partition below its high watermark not yet done (acknowledged or archived), -1
  where the start offset is unknown.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.share_services import share_services
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ErrorCode,
    GroupIdNotFoundError,
    KafkaError,
)
from wirebroker.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)

API_KEY = 90
UNINITIALIZED_START_OFFSET = -1  # Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET

_Group = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
_Topic = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseTopic
_Partition = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponsePartition


def handle(ctx: RequestContext, request: DescribeShareGroupOffsetsRequest) -> DescribeShareGroupOffsetsResponse:
    coordinator = ctx.broker.group_coordinator

    def error(group_id: str, exc: KafkaError) -> _Group:
        return _Group(group_id=group_id, topics=[], error_code=exc.code, error_message=str(exc))

    allowed = ctx.authorized(AclOperation.DESCRIBE, ResourceType.GROUP, (g.group_id for g in request.groups))
    described = []
    for group in request.groups:
        if group.group_id not in allowed:
            described.append(_refused(group.group_id))
            continue
        initialized = coordinator.serve_share(group.group_id, lambda group=group: _initialized(ctx, group),
                                              lambda exc: exc)
        try:
            if isinstance(initialized, KafkaError):
                raise initialized
            described.append(_describe(ctx, group, initialized))
        except KafkaError as exc:  # the group's, or the share coordinator's through the persister
            described.append(error(group.group_id, exc))
    return DescribeShareGroupOffsetsResponse(groups=described)


def _refused(group_id: str) -> _Group:
    """No message, as Kafka's KafkaApis answers a group it may not describe."""
    return _Group(group_id=group_id, topics=[], error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None)


def _initialized(ctx: RequestContext,
                 asked: DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup) -> list[tuple[bytes, int]]:
    """The share-partitions the group has initialised (under the group coordinator's lock): GROUP_ID_NOT_FOUND
    unless it is a share group, when no topics are named."""
    try:
        return ctx.broker.group_coordinator.share_group(asked.group_id).initialized_partitions()
    except GroupIdNotFoundError:
        if asked.topics is None:
            raise
        return []


def _describe(ctx: RequestContext, asked: DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup,
              initialized: list[tuple[bytes, int]]) -> _Group:
    metadata = ctx.broker.metadata
    if asked.topics is None:
        wanted: dict[str, list[int]] = {}
        for topic_id, index in initialized:
            topic = metadata.topic_by_id(topic_id)
            if topic is not None:
                wanted.setdefault(topic.name, []).append(index)
    else:
        wanted = {t.topic_name: list(t.partitions) for t in asked.topics}
    asked_initialized = set(initialized) & {(topic.topic_id, index) for name, indexes in wanted.items()
                                            if (topic := metadata.topic(name)) is not None for index in indexes}
    offsets = share_services(ctx.broker).partitions.start_offsets(asked.group_id, sorted(asked_initialized))
    topics = []
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)
    for name, indexes in wanted.items():
        topic = metadata.topic(name)
        if name not in described:
            topics.append(_Topic(topic_name=name, topic_id=bytes(16), partitions=[
                _Partition(partition_index=i, start_offset=UNINITIALIZED_START_OFFSET, leader_epoch=-1,
                           error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in indexes]))
            continue
        if topic is None:
            topics.append(_Topic(topic_name=name, topic_id=bytes(16), partitions=[
                _Partition(partition_index=i, start_offset=UNINITIALIZED_START_OFFSET, leader_epoch=-1,
                           error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                           error_message="This server does not host this topic-partition.") for i in indexes]))
            continue
        topics.append(_Topic(topic_name=name, topic_id=topic.topic_id, partitions=[
            _partition(ctx, name, index, offsets.get((topic.topic_id, index))) for index in indexes]))
    return _Group(group_id=asked.group_id, topics=topics, error_code=ErrorCode.NONE)


def _partition(ctx: RequestContext, topic: str, index: int, offset: tuple[int, int] | None) -> _Partition:
    partition = ctx.broker.replica_manager.partition(topic, index)
    leader_epoch = partition.leader_epoch if partition is not None else -1
    if offset is None or offset[0] == UNINITIALIZED_START_OFFSET:  # not initialised, or its leader has not started
        return _Partition(partition_index=index, start_offset=UNINITIALIZED_START_OFFSET, leader_epoch=leader_epoch,
                          lag=-1, error_code=ErrorCode.NONE)
    start, done = offset
    lag = max(partition.high_watermark - start - done, 0) if partition is not None else -1
    return _Partition(partition_index=index, start_offset=start, leader_epoch=leader_epoch, lag=lag,
                      error_code=ErrorCode.NONE)


serve(API_KEY, off_network_thread(handle))
