"""InitProducerId: API key 22, versions 0-5.

Behaviour:
- Idempotent producers (null transactional_id): a new producer id, epoch 0, from the metadata store's persisted
  counter, so ids are never reused across restarts. As in Kafka (TransactionCoordinator.handleInitProducerId), a
  request that names its current producer id and epoch (KIP-360) still gets a new id: epoch bumps are for
  transactional ids, and an idempotent producer bumps its own epoch locally.
- A producer id without an epoch, or an epoch without a producer id: INVALID_REQUEST, as Kafka.
- Transactional producers (non-null transactional_id): this broker has no transaction coordinator yet. Kafka's
  answers for a coordinator that is not ready (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
  COORDINATOR_LOAD_IN_PROGRESS) are retriable, so a client would retry until its timeout with no hint why;
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED would be fatal but would blame ACLs. The answer is INVALID_REQUEST, which
  the Java producer treats as fatal with "...the message was sent to an incompatible broker. See the broker logs
  for more details.", and the broker log says that transactions are not supported and what to use instead. An
  empty transactional_id is INVALID_REQUEST in Kafka too.
Version notes:
- v1+ throttle time; v2+ flexible; v3+ producer_id and producer_epoch (KIP-360); v4+ PRODUCER_FENCED
  (KIP-588) and v5 for transaction protocol 2 (KIP-890): both transactional only.
"""

from __future__ import annotations

import logging

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse

log = logging.getLogger(__name__)

API_KEY = 22

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
FIRST_EPOCH = 0


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    if (request.producer_id == NO_PRODUCER_ID) != (request.producer_epoch == NO_PRODUCER_EPOCH):
        return _error(ErrorCode.INVALID_REQUEST)
    if request.transactional_id is not None:
        log.warning("Refused InitProducerId for transactional.id %r from %s (client id %r): this broker does not "
                    "support transactions yet; use an idempotent producer without transactional.id",
                    request.transactional_id, ctx.client_address, ctx.client_id)
        return _error(ErrorCode.INVALID_REQUEST)
    producer_id = ctx.broker.metadata.allocate_producer_id()
    log.debug("Producer id %d (epoch %d) for %s (client id %r)", producer_id, FIRST_EPOCH, ctx.client_address,
              ctx.client_id)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=FIRST_EPOCH)


def _error(code: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)


serve(API_KEY, handle)
