"""TxnOffsetCommit: API key 28, the manifest's versions; a transactional producer commits a consumer group's offsets
inside its transaction (Producer.sendOffsetsToTransaction, after AddOffsetsToTxn).

Behaviour (Kafka's GroupCoordinatorService.commitTransactionalOffsets, OffsetMetadataManager):
- The offsets are written to the group's `__consumer_offsets` partition as OffsetCommit records in a transactional
  batch of the request's producer id and epoch (an older epoch than the partition has seen: INVALID_PRODUCER_EPOCH)
  and held pending: OffsetFetch does not see them (require_stable: UNSTABLE_OFFSET_COMMIT) until the transaction
  coordinator's COMMIT marker makes them the group's committed offsets; an ABORT drops them.
- The group checks the committer (generation and member id for classic groups, member epoch for consumer groups:
  a stale epoch is ILLEGAL_GENERATION), but only the fields the request names: before v3 there are none. A group
  that does not exist is made a "simple" group when the generation is -1, else ILLEGAL_GENERATION.
- Per partition: UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE; group-level errors (NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID, INVALID_GROUP_ID) for every
  partition.
Version notes:
- v0-1: COORDINATOR_LOAD_IN_PROGRESS is answered COORDINATOR_NOT_AVAILABLE (producers before 2.0 did not expect it,
  KAFKA-7296, as Kafka does); v2+ committed_leader_epoch; v3+ flexible, generation_id, member_id, group_instance_id
  (KIP-447); v4 and v5 change nothing here (they mark KIP-890's transaction verification).
Authorization (with an authorizer, as KafkaApis): WRITE on the transactional id, then READ on the group, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED / GROUP_AUTHORIZATION_FAILED for every partition; READ on each topic, else
  TOPIC_AUTHORIZATION_FAILED for its partitions.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.offset_metadata_manager import PartitionCommit
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

API_KEY = 28
FIRST_LOAD_IN_PROGRESS_VERSION = 2


def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    refusal = _refusal(ctx, request)
    if refusal is not None:
        return _answer(request, dict.fromkeys(((t.name, p.partition_index) for t in request.topics
                                               for p in t.partitions), refusal))
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, (topic.name for topic in request.topics))
    commits = [PartitionCommit(topic.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                               p.committed_metadata)
               for topic in request.topics if topic.name in readable for p in topic.partitions]
    codes = {}
    if commits:  # Kafka asks the coordinator only about partitions that passed
        codes = ctx.broker.group_coordinator.commit_transactional_offsets(
            request.group_id, request.producer_id, request.producer_epoch, request.member_id,
            request.group_instance_id, request.generation_id, commits, ctx.api_version)
    codes.update({(t.name, p.partition_index): ErrorCode.TOPIC_AUTHORIZATION_FAILED
                  for t in request.topics if t.name not in readable for p in t.partitions})
    if ctx.api_version < FIRST_LOAD_IN_PROGRESS_VERSION:
        codes = {tp: ErrorCode.COORDINATOR_NOT_AVAILABLE if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else code
                 for tp, code in codes.items()}
    return _answer(request, codes)


def _refusal(ctx: RequestContext, request: TxnOffsetCommitRequest) -> ErrorCode | None:
    """WRITE on the transactional id, then READ on the group (KafkaApis.handleTxnOffsetCommitRequest)."""
    if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


def _answer(request: TxnOffsetCommitRequest, codes: dict[tuple[str, int], int]) -> TxnOffsetCommitResponse:
    return TxnOffsetCommitResponse(topics=[
        TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic(name=topic.name, partitions=[
            TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition(
                partition_index=p.partition_index, error_code=codes[(topic.name, p.partition_index)])
            for p in topic.partitions])
        for topic in request.topics])


serve(API_KEY, off_network_thread(handle))
