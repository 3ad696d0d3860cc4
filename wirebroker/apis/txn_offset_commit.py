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
  (KIP-447); up to v4 (KIP-890 part 1, transaction.partition.verification.enable, default true) the offsets
  partition the producer's AddOffsetsToTxn should have put in the transaction is verified to be in it at the
  transaction coordinator first, as for a v5 add below (nothing to verify when open there): a partition not in the
  ongoing transaction is every partition's TRANSACTION_ABORTABLE at v4, INVALID_TXN_STATE before; v5 comes from a producer of transaction protocol 2 (KIP-890 part 2), which
  sends no AddOffsetsToTxn: the group's `__consumer_offsets` partition is added to the transaction at the
  transaction coordinator first (as Kafka's group coordinator does with the operation ADD_PARTITION; nothing to add
  when the partition already has the producer's transaction open at its epoch), and the offsets are written only
  once it is in. The add's refusal is every partition's (INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING,
  CONCURRENT_TRANSACTIONS after 100 ms of retries, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, ...; Kafka's
  handleOperationException: NOT_ENOUGH_REPLICAS and REQUEST_TIMED_OUT as COORDINATOR_NOT_AVAILABLE,
  NOT_LEADER_OR_FOLLOWER as NOT_COORDINATOR).
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
from wirebroker.coordinator.offsets_topic import OFFSETS_TOPIC
from wirebroker.coordinator.transaction_partition_adds import (
    VERIFICATION_KEY,
    operation_for_version,
)
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from wirebroker.replica.txn_verification import in_transaction_here

API_KEY = 28
FIRST_LOAD_IN_PROGRESS_VERSION = 2
FIRST_TRANSACTION_ABORTABLE_VERSION = 4  # KIP-890
FIRST_IMPLICIT_ADD_VERSION = 5  # KIP-890 part 2: the offsets partition joins the transaction with the commit
# An add's refusal as the group coordinator answers it (Kafka's GroupCoordinatorService.handleOperationException).
_ADD_ERRORS = {ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
               ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
               ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
               ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
               ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR}


def handle(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse | None:
    refusal = _refusal(ctx, request)
    if refusal is not None:
        return _answer(request, dict.fromkeys(((t.name, p.partition_index) for t in request.topics
                                               for p in t.partitions), refusal))
    readable = ctx.authorized(AclOperation.READ, ResourceType.TOPIC, (topic.name for topic in request.topics))
    if ((ctx.api_version >= FIRST_IMPLICIT_ADD_VERSION or ctx.broker.config[VERIFICATION_KEY])
            and any(topic.name in readable for topic in request.topics)):
        offsets_partition = (OFFSETS_TOPIC, ctx.broker.offsets_topic.partition_for(request.group_id))
        try:
            added = in_transaction_here(ctx.broker.replica_manager, *offsets_partition, request.producer_id,
                                        request.producer_epoch)
        except KafkaError as exc:
            return _commit(ctx, request, readable, exc.code)
        if not added:
            ctx.broker.transaction_partition_adds.add(
                request.transactional_id, request.producer_id, request.producer_epoch, [offsets_partition],
                lambda errors: _commit_once_added(ctx, request, readable, errors.get(offsets_partition)),
                operation_for_version(ctx.api_version, FIRST_TRANSACTION_ABORTABLE_VERSION, FIRST_IMPLICIT_ADD_VERSION))
            return None
    return _commit(ctx, request, readable)


def _commit_once_added(ctx: RequestContext, request: TxnOffsetCommitRequest, readable: set[str],
                       add_error: int | None) -> None:
    """The offsets partition's add is answered (on the add's worker): commit, on the group request thread in a
    cluster, as every group request."""
    response = _commit_off_network_thread(ctx, (request, readable, add_error))
    if response is not None:
        ctx.respond(response)


def _commit(ctx: RequestContext, request: TxnOffsetCommitRequest, readable: set[str],
            add_error: int | None = None) -> TxnOffsetCommitResponse:
    """The offsets written (held until the transaction ends), or every readable partition given `add_error`."""
    commits = [PartitionCommit(topic.name, p.partition_index, p.committed_offset, p.committed_leader_epoch,
                               p.committed_metadata)
               for topic in request.topics if topic.name in readable for p in topic.partitions]
    codes = {}
    if add_error is not None:
        codes = dict.fromkeys(((c.topic, c.partition) for c in commits), _ADD_ERRORS.get(add_error, add_error))
    elif commits:  # Kafka asks the coordinator only about partitions that passed
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


_commit_off_network_thread = off_network_thread(lambda ctx, args: _commit(ctx, *args))

serve(API_KEY, off_network_thread(handle))
