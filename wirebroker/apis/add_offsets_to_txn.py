"""AddOffsetsToTxn: API key 25, versions 0-4.

Behaviour (Kafka's KafkaApis.handleAddOffsetsToTxnRequest):
- The group's `__consumer_offsets` partition (the one its id hashes to) joins the transaction, as
  AddPartitionsToTxn would add it: the transaction's COMMIT/ABORT marker then goes to that partition's leader too,
  where the group coordinator makes the TxnOffsetCommit offsets visible or drops them. The coordinator's errors as
  for AddPartitionsToTxn (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS). Run off the network threads in a cluster.
Version notes:
- v1 same as v0; v2+ PRODUCER_FENCED (KIP-588), INVALID_PRODUCER_EPOCH before; v3+ flexible; v4 same as v3
  (a client of transaction protocol 2 no longer sends it, KIP-890).
Authorization (with an authorizer, as KafkaApis): WRITE on the transactional id, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.transaction_errors import client_error
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.offsets_topic import OFFSETS_TOPIC
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)

API_KEY = 25
FIRST_PRODUCER_FENCED_VERSION = 2  # KIP-588


def handle(ctx: RequestContext, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    require(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    require(ctx, AclOperation.READ, ResourceType.GROUP, request.group_id)
    partition = ctx.broker.offsets_topic.partition_for(request.group_id)
    try:
        ctx.broker.transaction_coordinator.add_partitions(request.transactional_id, request.producer_id,
                                                          request.producer_epoch, {(OFFSETS_TOPIC, partition)})
    except KafkaError as exc:
        return AddOffsetsToTxnResponse(error_code=client_error(exc.code, ctx.api_version,
                                                               FIRST_PRODUCER_FENCED_VERSION))
    return AddOffsetsToTxnResponse(error_code=ErrorCode.NONE)


serve(API_KEY, off_network_thread(handle))
