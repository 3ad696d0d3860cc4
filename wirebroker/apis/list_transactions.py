"""ListTransactions: API key 66, versions 0-1 (KIP-664, `kafka-transactions.sh list`).

Behaviour (Kafka's TransactionStateManager.listTransactionStates):
- Every transactional id of the `__transaction_state` partitions this broker leads, with its producer id and state,
  filtered by state names and producer ids (an empty filter matches all). State names Kafka does not know are
  returned in `unknown_state_filters` (and match nothing). COORDINATOR_LOAD_IN_PROGRESS while a partition loads.
- With an authorizer only the transactional ids the principal may DESCRIBE are listed.
Version notes:
- v0 flexible; v1 `duration_filter` (KIP-994): only transactions open for longer than that many ms (-1: all).
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.coordinator.transaction_state import TransactionState
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)

API_KEY = 66


def handle(ctx: RequestContext, request: ListTransactionsRequest) -> ListTransactionsResponse:
    coordinator = ctx.broker.transaction_coordinator
    if coordinator.is_loading():
        return ListTransactionsResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, unknown_state_filters=[],
                                        transaction_states=[])
    states = {name: TransactionState.from_name(name) for name in request.state_filters}
    unknown = [name for name, state in states.items() if state is None]
    if unknown and len(unknown) == len(states):
        listed = []  # only unknown states asked for: none matches
    else:
        listed = coordinator.list_transactions({s for s in states.values() if s is not None},
                                               set(request.producer_id_filters), request.duration_filter)
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                               (m.transactional_id for m in listed), log_denied=False)
    listed = [m for m in listed if m.transactional_id in described]
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE, unknown_state_filters=unknown,
        transaction_states=[ListTransactionsResponse.TransactionState(
            transactional_id=m.transactional_id, producer_id=m.producer_id, transaction_state=m.state.state_name)
            for m in sorted(listed, key=lambda m: m.transactional_id)])


serve(API_KEY, handle)
