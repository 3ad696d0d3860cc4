"""OffsetCommit: API key 8, versions 0-10.

Behaviour:
- Validated by the group (coordinator/offset_metadata_manager.py): generation or member epoch, member id, instance id; a
  commit with generation -1 to a group that does not exist creates a "simple" group. Per partition:
  UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE; everything else accepted is written to
  __consumer_offsets as OffsetCommit records before the answer.
- A group-level error (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, STALE_MEMBER_EPOCH,
  COORDINATOR_LOAD_IN_PROGRESS, ...) is given for every partition, as Kafka does.
Version notes:
- v1 per-partition commit timestamp (stored with an expire timestamp, OffsetCommitValue v1); v2-4 retention_time_ms
  (-1: offsets.retention.minutes); v5+ without it (KIP-211); v6+ committed_leader_epoch (KIP-320); v7+
  group_instance_id (KIP-345); v8+ flexible; v9+ member epochs of consumer groups, GROUP_ID_NOT_FOUND (KIP-848);
  v10+ topics named by id (KIP-848): an id this broker does not know is UNKNOWN_TOPIC_ID for each of its partitions,
  and nothing of it is committed (Kafka's KafkaApis.handleOffsetCommitRequest).
Authorization (with an authorizer): READ on the group, else GROUP_AUTHORIZATION_FAILED for every partition; READ
on each topic, else TOPIC_AUTHORIZATION_FAILED for its partitions (before its existence is looked at).
"""

from __future__ import annotations

from collections.abc import Callable

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.offset_metadata_manager import (
    DEFAULT_RETENTION,
    PartitionCommit,
)
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponse,
)

API_KEY = 8
COMMIT_TIMESTAMP_VERSION = 1
FIRST_RETENTION_VERSION, LAST_RETENTION_VERSION = 2, 4
FIRST_TOPIC_ID_VERSION = 10  # KIP-848


def handle(ctx: RequestContext, request: OffsetCommitRequest) -> OffsetCommitResponse:
    version = ctx.api_version
    if version >= FIRST_TOPIC_ID_VERSION:
        view = ctx.broker.cluster_view
        for topic in request.topics:
            known = view.topic_by_id(topic.topic_id)
            topic.name = known.name if known is not None else None
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _answer(request, lambda topic, partition: ErrorCode.GROUP_AUTHORIZATION_FAILED)
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC,
                              (topic.name for topic in request.topics if topic.name is not None))
    commits = [
        PartitionCommit(topic.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                        p.committed_metadata,
                        p.commit_timestamp if version == COMMIT_TIMESTAMP_VERSION else -1)
        for topic in request.topics if topic.name in readable
        for p in topic.partitions
    ]
    retention = (request.retention_time_ms if FIRST_RETENTION_VERSION <= version <= LAST_RETENTION_VERSION
                 else DEFAULT_RETENTION)
    codes = {}
    if commits:  # Kafka asks the coordinator only about partitions that passed
        codes = ctx.broker.group_coordinator.commit_offsets(request.group_id, request.member_id,
                                                            request.group_instance_id,
                                                            request.generation_id_or_member_epoch, retention,
                                                            commits, version)
    return _answer(request, lambda topic, partition: (
        codes[(topic, partition)] if topic in readable
        else ErrorCode.UNKNOWN_TOPIC_ID if topic is None else ErrorCode.TOPIC_AUTHORIZATION_FAILED))


def _answer(request: OffsetCommitRequest, code_of: Callable[[str | None, int], int]) -> OffsetCommitResponse:
    return OffsetCommitResponse(topics=[
        OffsetCommitResponse.OffsetCommitResponseTopic(name=topic.name or "", topic_id=topic.topic_id, partitions=[
            OffsetCommitResponse.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                                               error_code=code_of(topic.name, p.partition_index))
            for p in topic.partitions
        ])
        for topic in request.topics
    ])


serve(API_KEY, off_network_thread(handle))
