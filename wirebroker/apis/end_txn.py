"""EndTxn: API key 26, versions 0-4 (v5, transaction protocol 2, is not in the manifest: KIP-890 is not served).

Behaviour (Kafka's TransactionCoordinator.handleEndTransaction, protocol 1):
- Commit or abort the producer's Ongoing transaction: PrepareCommit/PrepareAbort is written to
  `__transaction_state` and answered NONE; the COMMIT/ABORT markers then go to every partition's leader
  (WriteTxnMarkers) and CompleteCommit/CompleteAbort is written when all are in. Until then the producer's next
  request is CONCURRENT_TRANSACTIONS, and it retries.
- A retry of an EndTxn whose transaction is complete with that outcome: NONE; the other outcome, or no transaction
  open: INVALID_TXN_STATE. INVALID_PRODUCER_ID_MAPPING for another producer id, PRODUCER_FENCED for an older epoch
  (a zombie, or a producer whose transaction timed out and was aborted). Run off the network threads in a cluster.
Version notes:
- v1 same as v0; v2+ PRODUCER_FENCED (KIP-588), INVALID_PRODUCER_EPOCH before; v3+ flexible; v4 same as v3;
  v5 would bump the epoch on every end (KIP-890) and return it.
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
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse

API_KEY = 26
FIRST_PRODUCER_FENCED_VERSION = 2  # KIP-588


def handle(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse:
    require(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    try:
        ctx.broker.transaction_coordinator.end_transaction(request.transactional_id, request.producer_id,
                                                           request.producer_epoch, request.committed)
    except KafkaError as exc:
        return EndTxnResponse(error_code=client_error(exc.code, ctx.api_version, FIRST_PRODUCER_FENCED_VERSION))
    return EndTxnResponse(error_code=ErrorCode.NONE)


serve(API_KEY, off_network_thread(handle))
