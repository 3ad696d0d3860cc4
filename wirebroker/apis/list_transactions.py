"""ListTransactions: API key 66, versions 0-2 (KIP-664, `kafka-transactions.sh list`).

Behaviour (Kafka's TransactionStateManager.listTransactionStates):
- Every transactional id of the `__transaction_state` partitions this broker leads, with its producer id and state,
  filtered by state names and producer ids (an empty filter matches all). State names Kafka does not know are
  returned in `unknown_state_filters` (and match nothing). COORDINATOR_LOAD_IN_PROGRESS while a partition loads.
- With an authorizer only the transactional ids the principal may DESCRIBE are listed.
Version notes:
- v0 flexible; v1 `duration_filter` (KIP-994): only transactions open for longer than that many ms (-1: all).
- v2 `transactional_id_pattern` (KIP-1152): only the ids the regular expression matches whole (Java's
  `Pattern.matcher(id).matches()`; null or empty: all); a pattern that does not compile is INVALID_REGULAR_EXPRESSION
  with nothing listed. Kafka compiles a java.util.regex pattern, this broker a Python `re` one: the common syntax
  (classes, groups, alternation, quantifiers, anchors) means the same; Java-only constructs (possessive quantifiers,
  `\\p{javaLowerCase}`, `(?<name>` vs `(?P<name>`) do not.
"""

from __future__ import annotations

import re

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
        return _refused(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    try:
        id_pattern = re.compile(request.transactional_id_pattern) if request.transactional_id_pattern else None
    except re.error:
        return _refused(ErrorCode.INVALID_REGULAR_EXPRESSION)
    states = {name: TransactionState.from_name(name) for name in request.state_filters}
    unknown = [name for name, state in states.items() if state is None]
    if unknown and len(unknown) == len(states):
        listed = []  # only unknown states asked for: none matches
    else:
        listed = coordinator.list_transactions({s for s in states.values() if s is not None},
                                               set(request.producer_id_filters), request.duration_filter)
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                               (m.transactional_id for m in listed), log_denied=False)
    listed = [m for m in listed if m.transactional_id in described
              and (id_pattern is None or id_pattern.fullmatch(m.transactional_id))]
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE, unknown_state_filters=unknown,
        transaction_states=[ListTransactionsResponse.TransactionState(
            transactional_id=m.transactional_id, producer_id=m.producer_id, transaction_state=m.state.state_name)
            for m in sorted(listed, key=lambda m: m.transactional_id)])


def _refused(code: ErrorCode) -> ListTransactionsResponse:
    return ListTransactionsResponse(error_code=code, unknown_state_filters=[], transaction_states=[])


serve(API_KEY, handle)
