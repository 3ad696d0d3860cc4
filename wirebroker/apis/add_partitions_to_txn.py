"""AddPartitionsToTxn: API key 24, versions 0-5.

Behaviour (Kafka's KafkaApis.handleAddPartitionsToTxnRequest and TransactionCoordinator):
- v0-3, from producers: one transaction. Partitions of topics that do not exist are UNKNOWN_TOPIC_OR_PARTITION and
  then every other partition OPERATION_NOT_ATTEMPTED, the coordinator untouched. Otherwise the coordinator adds them
  (the transaction becomes Ongoing; nothing is written when all are in already) and its one error is every
  partition's: INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS while the previous transaction
  completes, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.
- v4+, from brokers: many transactions per request, answered per transaction. `verify_only` (KIP-890 part 1) only
  asks whether the partitions are in the transaction: NONE for those that are, the others TRANSACTION_ABORTABLE
  (v5) or INVALID_TXN_STATE (v4); without it the partitions are added as for v3, the add taken as transaction
  protocol 2's (Kafka's transactionVersionForAddPartitionsToTxn): a partition leader adding the partitions of a
  producer of transaction.version 2 (Produce v12+, TxnOffsetCommit v5; coordinator/transaction_partition_adds.py).
- Run off the network threads in a cluster (the coordinator's write waits for the followers).
Version notes:
- v1 same as v0; v2+ PRODUCER_FENCED (KIP-588), INVALID_PRODUCER_EPOCH before; v3+ flexible; v4+ batched,
  inter-broker (KIP-890); v5 TRANSACTION_ABORTABLE (KIP-1050).
Authorization (with an authorizer, as KafkaApis): v0-3 need WRITE on the transactional id, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED for each partition, and WRITE on each topic (never granted for an internal
  topic), else TOPIC_AUTHORIZATION_FAILED, the other partitions OPERATION_NOT_ATTEMPTED; v4+ needs CLUSTER_ACTION on
  the cluster, else CLUSTER_AUTHORIZATION_FAILED, and nothing more (a broker adds `__consumer_offsets` too).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.transaction_errors import client_error
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.cluster.metadata import INTERNAL_TOPICS
from wirebroker.coordinator.transaction_state import TRANSACTION_VERSION_2
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)

API_KEY = 24
FIRST_PRODUCER_FENCED_VERSION = 2  # KIP-588
FIRST_BATCHED_VERSION = 4  # KIP-890
FIRST_TRANSACTION_ABORTABLE_VERSION = 5  # KIP-1050

_Response = AddPartitionsToTxnResponse
TopicPartition = tuple[str, int]


def handle(ctx: RequestContext, request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    if ctx.api_version < FIRST_BATCHED_VERSION:
        errors = _add(ctx, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                      request.v3_and_below_producer_epoch, request.v3_and_below_topics, verify_only=False)
        return _Response(error_code=ErrorCode.NONE, results_by_topic_v3_and_below=_topic_results(errors))
    if not ctx.authorize(AclOperation.CLUSTER_ACTION):  # v4+ comes from brokers verifying transactions (KIP-890)
        return _Response(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return _Response(error_code=ErrorCode.NONE, results_by_transaction=[
        _Response.AddPartitionsToTxnResult(
            transactional_id=txn.transactional_id,
            topic_results=_topic_results(_add(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch,
                                              txn.topics, txn.verify_only)))
        for txn in request.transactions])


def _add(ctx: RequestContext, transactional_id: str, producer_id: int, producer_epoch: int,
         topics: list[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic], verify_only: bool) -> dict[TopicPartition, int]:
    """The error of every partition named."""
    partitions = {(topic.name, index) for topic in topics for index in topic.partitions}
    from_broker = ctx.api_version >= FIRST_BATCHED_VERSION  # CLUSTER_ACTION was checked: no client authorization
    if not from_broker and not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return dict.fromkeys(partitions, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    # A client's internal topic is never WRITE-authorized here, with or without an authorizer (Kafka filters them
    # out); a broker adds `__consumer_offsets` for TxnOffsetCommit v5.
    writable = {topic for topic, _ in partitions} if from_broker else ctx.authorized(
        AclOperation.WRITE, ResourceType.TOPIC, (topic for topic, _ in partitions if topic not in INTERNAL_TOPICS))
    refused = {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp[0] not in writable
               else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
               for tp in partitions if tp[0] not in writable or not _exists(ctx, tp)}
    if refused:
        return {tp: refused.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}
    coordinator = ctx.broker.transaction_coordinator
    try:
        if verify_only:
            missing = (ErrorCode.TRANSACTION_ABORTABLE if ctx.api_version >= FIRST_TRANSACTION_ABORTABLE_VERSION
                       else ErrorCode.INVALID_TXN_STATE)
            found = coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
            return {tp: ErrorCode.NONE if included else missing for tp, included in found.items()}
        # from a broker (v4+), the add of a partition leader for a producer of transaction protocol 2
        coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions,
                                   TRANSACTION_VERSION_2 if ctx.api_version >= FIRST_BATCHED_VERSION else 0)
        code = ErrorCode.NONE
    except KafkaError as exc:
        code = client_error(exc.code, ctx.api_version, FIRST_PRODUCER_FENCED_VERSION)
    return dict.fromkeys(partitions, code)


def _exists(ctx: RequestContext, tp: TopicPartition) -> bool:
    topic = ctx.broker.cluster_view.topic(tp[0])
    return topic is not None and 0 <= tp[1] < len(topic.partitions)


def _topic_results(errors: dict[TopicPartition, int]) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    by_topic: dict[str, list[AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult]] = {}
    for (topic, index), code in sorted(errors.items()):
        by_topic.setdefault(topic, []).append(
            _Response.AddPartitionsToTxnPartitionResult(partition_index=index, partition_error_code=code))
    return [_Response.AddPartitionsToTxnTopicResult(name=name, results_by_partition=results)
            for name, results in by_topic.items()]


serve(API_KEY, off_network_thread(handle))
