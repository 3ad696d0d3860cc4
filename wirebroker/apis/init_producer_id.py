"""InitProducerId: API key 22, versions 0-5.

Behaviour:
- Idempotent producers (null transactional_id): a new producer id, epoch 0, from the metadata store's persisted
  counter, so ids are never reused across restarts. As in Kafka (TransactionCoordinator.handleInitProducerId), a
  request that names its current producer id and epoch (KIP-360) still gets a new id: epoch bumps are for
  transactional ids, and an idempotent producer bumps its own epoch locally.
- A producer id without an epoch, or an epoch without a producer id: INVALID_REQUEST, as Kafka.
- Transactional producers: the transaction coordinator (coordinator/transaction_coordinator.py) of the id's
  `__transaction_state` partition answers: a new producer id or the id's epoch bumped, which fences the previous
  producer; an open transaction of the id is aborted first (CONCURRENT_TRANSACTIONS until then, the client
  retries); INVALID_TRANSACTION_TIMEOUT past `transaction.max.timeout.ms`; an empty id is INVALID_REQUEST.
  NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS while this broker does not (yet) serve the id. Run off the network
  threads in a cluster (its write waits for the followers: apis/group_requests.py).
Version notes:
- v1+ throttle time; v2+ flexible; v3+ producer_id and producer_epoch (KIP-360): a retry of the last bump gets the
  same epoch, another producer's epoch is PRODUCER_FENCED; v4+ PRODUCER_FENCED (KIP-588), INVALID_PRODUCER_EPOCH
  before; v5 marks a client that may use transaction protocol 2 (KIP-890), which this broker does not advertise
  (no `transaction.version` feature), so v5 clients use protocol 1.
Authorization (with an authorizer, as KafkaApis): WRITE on the transactional id (and TWO_PHASE_COMMIT with
  enable_2pc), else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; an idempotent producer (no transactional id) needs
  IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import logging

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.transaction_errors import client_error
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)

log = logging.getLogger(__name__)

API_KEY = 22

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
FIRST_EPOCH = 0
FIRST_PRODUCER_FENCED_VERSION = 4  # KIP-588


def handle(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    refusal = _refusal(ctx, request)
    if refusal is not None:
        return _error(refusal)
    if (request.producer_id == NO_PRODUCER_ID) != (request.producer_epoch == NO_PRODUCER_EPOCH):
        return _error(ErrorCode.INVALID_REQUEST)
    if request.transactional_id is not None:
        return _transactional_off_network_thread(ctx, request)
    producer_id = ctx.broker.metadata.allocate_producer_id()
    log.debug("Producer id %d (epoch %d) for %s (client id %r)", producer_id, FIRST_EPOCH, ctx.client_address,
              ctx.client_id)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=FIRST_EPOCH)


def _refusal(ctx: RequestContext, request: InitProducerIdRequest) -> ErrorCode | None:
    """KafkaApis.handleInitProducerIdRequest's checks: WRITE on the transactional id (and TWO_PHASE_COMMIT for a
    KIP-939 producer); without one, IDEMPOTENT_WRITE on the cluster or WRITE on some topic."""
    if request.transactional_id is not None:
        if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        if request.enable2_pc and not ctx.authorize(AclOperation.TWO_PHASE_COMMIT, ResourceType.TRANSACTIONAL_ID,
                                                    request.transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return None
    authorizer = ctx.broker.authorizer
    if authorizer is None or ctx.authorize(AclOperation.IDEMPOTENT_WRITE, log_denied=False):
        return None
    if authorizer.authorize_by_resource_type(ctx.principal, ctx.client_ip, AclOperation.WRITE, ResourceType.TOPIC):
        return None
    log.info("InitProducerId from %s (%s) refused: no IDEMPOTENT_WRITE on the cluster and no WRITE on any topic",
             ctx.principal, ctx.client)
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def _transactional(ctx: RequestContext, request: InitProducerIdRequest) -> InitProducerIdResponse:
    try:
        producer_id, epoch = ctx.broker.transaction_coordinator.init_producer_id(
            request.transactional_id, request.transaction_timeout_ms, request.producer_id, request.producer_epoch)
    except KafkaError as exc:
        return _error(client_error(exc.code, ctx.api_version, FIRST_PRODUCER_FENCED_VERSION))
    log.debug("Transactional id %r: producer id %d, epoch %d (client %s, id %r)", request.transactional_id,
              producer_id, epoch, ctx.client_address, ctx.client_id)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=epoch)


def _error(code: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)


_transactional_off_network_thread = off_network_thread(_transactional)

serve(API_KEY, handle)
