"""ShareFetch: API key 78, versions 1-2 (KIP-932 share groups).

Behaviour (coordinator/share_partition_manager.py):
- A share session per (group, member): epoch 0 opens it with the partitions named (acknowledgements then are
  INVALID_REQUEST; past `group.share.max.share.sessions` sessions on this broker SHARE_SESSION_LIMIT_REACHED), later
  epochs add partitions and forget others (INVALID_SHARE_SESSION_EPOCH for a wrong epoch, SHARE_SESSION_NOT_FOUND
  with no session), -1 closes it after its acknowledgements and fetches nothing.
- Acknowledgements piggy-backed per partition (ACCEPT, RELEASE, REJECT, GAP; RENEW from v2) are applied and
  persisted first; a partition whose acknowledgement failed has its AcknowledgeErrorCode (INVALID_RECORD_STATE for a
  record the member does not hold).
- Then the session's partitions are read and what is available is acquired for the member (at most MaxRecords
  offsets, whole batches as Kafka's batch-optimised mode), waiting for MinBytes up to MaxWaitMs. Each partition
  answers the log's batches and the AcquiredRecords ranges with their delivery counts; the client keeps only those.
- The answer of a new session (epoch 0) lists every partition; a later one only those acknowledged in the request,
  with records, an error or an acknowledgement error (and once more one whose last answer was an error), as
  Kafka's share session context prunes it; a partition whose leader moved names the new leader, whose endpoint the
  answer carries.
- AcquisitionLockTimeoutMs: the group's share.record.lock.duration.ms (else group.share.record.lock.duration.ms).
- In a cluster it runs on the share-partition threads, never a network thread (apis/share_services.py).
Authorization (with an authorizer): READ on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic, else
TOPIC_AUTHORIZATION_FAILED in its partitions (neither fetched nor acknowledged).
Version notes:
- v1 adds MaxRecords, BatchSize and AcquisitionLockTimeoutMs (KIP-932 GA); v2 ShareAcquireMode (KIP-1206:
  record_limit acquires at most MaxRecords, splitting batches) and IsRenewAck (KIP-1222: the acknowledgements
  renew locks and nothing is fetched).
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_responses import (
    acknowledgements,
    authorize_topics,
    share_fetch_response,
)
from wirebroker.apis.share_services import on_share_partition_thread, share_services
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.share_fetch import (
    ShareFetchRequest,
    ShareFetchResponse,
)

API_KEY = 78
FIRST_ACQUIRE_MODE_VERSION = 2  # ShareAcquireMode (KIP-1206)
RECORD_LIMIT = 1  # ShareAcquireMode record_limit: at most MaxRecords, batches split; 0 batch_optimized


def handle(ctx: RequestContext, request: ShareFetchRequest) -> ShareFetchResponse | None:
    group_id = request.group_id or ""
    require(ctx, AclOperation.READ, ResourceType.GROUP, group_id)
    topics, refused = authorize_topics(ctx, request.topics)
    manager = share_services(ctx.broker).partitions
    requested = [(t.topic_id, p.partition_index) for t in topics for p in t.partitions]
    forgotten = [(t.topic_id, index) for t in request.forgotten_topics_data for index in t.partitions]
    lock_ms = manager.lock_duration_ms(group_id)

    def respond(error_code: int, message: str | None, partitions: list) -> None:
        ctx.respond(share_fetch_response(ctx, error_code, message, [*partitions, *refused], lock_ms))

    manager.fetch(group_id, request.member_id, request.share_session_epoch, requested, forgotten,
                  acknowledgements(topics), request.max_wait_ms, request.min_bytes, request.max_bytes,
                  request.max_records if ctx.api_version >= 1 else 2**31 - 1, respond, ctx.connection_id,
                  ctx.api_version >= FIRST_ACQUIRE_MODE_VERSION and request.share_acquire_mode == RECORD_LIMIT,
                  ctx.api_version >= FIRST_ACQUIRE_MODE_VERSION and request.is_renew_ack)
    return None


serve(API_KEY, on_share_partition_thread(handle))
