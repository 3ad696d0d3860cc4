"""DescribeTransactions: API key 65, version 0 (KIP-664, `kafka-transactions.sh describe`).

Behaviour (Kafka's TransactionCoordinator.handleDescribeTransactions):
- Per transactional id: its state by Kafka's name (Ongoing, PrepareCommit, CompleteAbort, ...), timeout, start time
  of the last transaction (-1 before the first), producer id and epoch, and the partitions of the transaction grouped by
  topic. TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not know, NOT_COORDINATOR for one whose
  `__transaction_state` partition this broker does not lead, COORDINATOR_LOAD_IN_PROGRESS while it loads.
- With an authorizer each transactional id needs DESCRIBE, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; its topics
  are listed only where the principal may DESCRIBE them.
Version notes:
- v0 only, flexible.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)

API_KEY = 65
_State = DescribeTransactionsResponse.TransactionState


def handle(ctx: RequestContext, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(transaction_states=[_describe(ctx, txn_id)
                                                            for txn_id in request.transactional_ids])


def _describe(ctx: RequestContext, transactional_id: str) -> DescribeTransactionsResponse.TransactionState:
    try:
        require(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id)
        metadata = ctx.broker.transaction_coordinator.describe(transactional_id)
    except KafkaError as exc:
        return _State(error_code=exc.code, transactional_id=transactional_id, transaction_state="",
                      transaction_timeout_ms=0, transaction_start_time_ms=-1, producer_id=-1, producer_epoch=-1,
                      topics=[])
    by_topic: dict[str, list[int]] = {}
    described = ctx.authorized(AclOperation.DESCRIBE, ResourceType.TOPIC, (t for t, _ in metadata.partitions),
                               log_denied=False)
    for topic, index in sorted(metadata.partitions):
        if topic in described:  # only the topics the principal may describe
            by_topic.setdefault(topic, []).append(index)
    return _State(error_code=ErrorCode.NONE, transactional_id=transactional_id,
                  transaction_state=metadata.state.state_name, transaction_timeout_ms=metadata.txn_timeout_ms,
                  transaction_start_time_ms=metadata.txn_start_timestamp,
                  producer_id=metadata.producer_id, producer_epoch=metadata.producer_epoch,
                  topics=[DescribeTransactionsResponse.TopicData(topic=topic, partitions=indexes)
                          for topic, indexes in by_topic.items()])


serve(API_KEY, handle)
