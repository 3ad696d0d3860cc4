"""EndTxn: API key 26, versions 0-5.

Behaviour (Kafka's TransactionCoordinator.handleEndTransaction; the request version alone decides the transaction
protocol, as Kafka's TransactionVersion.transactionVersionForEndTxn: v0-4 protocol 1, v5 protocol 2):
- Commit or abort the producer's Ongoing transaction: PrepareCommit/PrepareAbort is written to
  `__transaction_state` and answered NONE; the COMMIT/ABORT markers then go to every partition's leader
  (WriteTxnMarkers) and CompleteCommit/CompleteAbort is written when all are in. Until then the producer's next
  request is CONCURRENT_TRANSACTIONS, and it retries.
- A retry of an EndTxn whose transaction is complete with that outcome: NONE; the other outcome, or no transaction
  open: INVALID_TXN_STATE. INVALID_PRODUCER_ID_MAPPING for another producer id, PRODUCER_FENCED for an older epoch
  (a zombie, or a producer whose transaction timed out and was aborted). Run off the network threads in a cluster.
- Protocol 2 (v5, KIP-890 part 2): every end bumps the producer epoch (a new producer id at epoch 0 once the epoch
  is exhausted, taken at CompleteCommit/CompleteAbort) and the response carries the producer id and epoch to go on
  with; the markers carry the bumped epoch and transaction version 2. A retry of an end that went through comes
  with the epoch before the bump: NONE (with the current id and epoch) once complete, CONCURRENT_TRANSACTIONS while
  completing. An abort with no transaction open is allowed (it bumps the epoch too).
Version notes:
- v1 same as v0; v2+ PRODUCER_FENCED (KIP-588), INVALID_PRODUCER_EPOCH before; v3+ flexible; v4 same as v3;
  v5 transaction protocol 2 and ProducerId/ProducerEpoch in the response (-1 with an error).
Authorization (with an authorizer, as KafkaApis): WRITE on the transactional id, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.transaction_errors import client_error
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.transaction_state import TRANSACTION_VERSION_2
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse

API_KEY = 26
FIRST_PRODUCER_FENCED_VERSION = 2  # KIP-588
FIRST_TV2_VERSION = 5  # KIP-890 part 2 (Kafka's TransactionVersion.transactionVersionForEndTxn)


def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    require(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    transaction_version = TRANSACTION_VERSION_2 if ctx.api_version >= FIRST_TV2_VERSION else 0
    try:
        producer_id, producer_epoch = ctx.broker.transaction_coordinator.end_transaction(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed,
            transaction_version)
    except KafkaError as exc:
        return EndTxnResponse(error_code=client_error(exc.code, ctx.api_version, FIRST_PRODUCER_FENCED_VERSION))
    return EndTxnResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=producer_epoch)


serve(API_KEY, off_network_thread(handle))
