"""ShareAcknowledge: API key 79, versions 1-2 (KIP-932 share groups).

Behaviour (coordinator/share_partition_manager.py):
- Acknowledges records of the member's share session without fetching: ACCEPT (done), RELEASE (back to the
  others, or archived once delivered group.share.delivery.count.limit times), REJECT (archived, never delivered
  again), GAP; RENEW (v2) keeps the records under a fresh acquisition lock. Persisted before the answer.
- The session epoch must be the session's (epoch 0 cannot open one: INVALID_SHARE_SESSION_EPOCH; no session:
  SHARE_SESSION_NOT_FOUND); -1 closes the session after acknowledging, releasing what the member still holds.
- A partition whose acknowledgement failed answers its error (INVALID_RECORD_STATE for a record not held).
Authorization (with an authorizer): READ on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic, else
TOPIC_AUTHORIZATION_FAILED in its partitions.
Version notes:
- v2 adds IsRenewAck and AcquisitionLockTimeoutMs (KIP-1222).
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.apis.share_responses import (
    acknowledgements,
    authorize_topics,
    share_acknowledge_response,
)
from wirebroker.apis.share_services import on_share_partition_thread, share_services
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.messages.share_acknowledge import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
)

API_KEY = 79


def handle(ctx: RequestContext, request: ShareAcknowledgeRequest) -> ShareAcknowledgeResponse:
    group_id = request.group_id or ""
    require(ctx, AclOperation.READ, ResourceType.GROUP, group_id)
    topics, refused = authorize_topics(ctx, request.topics)
    manager = share_services(ctx.broker).partitions
    error_code, message, partitions = manager.acknowledge(group_id, request.member_id, request.share_session_epoch,
                                                          acknowledgements(topics))
    return share_acknowledge_response(ctx, error_code, message, [*partitions, *refused],
                                      manager.lock_duration_ms(group_id))


serve(API_KEY, on_share_partition_thread(handle))
