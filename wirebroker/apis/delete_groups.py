"""DeleteGroups: API key 42, versions 0-2.

Behaviour:
- Deletes each named group that has no members, with its committed offsets (tombstones in __consumer_offsets); a
  share group's share-partition states go first (those its coordinator initialised, apis/share_group_admin.py),
  and a group whose states could not be deleted stays, answered with the persister's error.
- Per group: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, COORDINATOR_LOAD_IN_PROGRESS.
Version notes:
- v1+ same as v0 (throttle behaviour, KIP-219); v2+ flexible.
Authorization (with an authorizer, as KafkaApis): DELETE on each group, else GROUP_AUTHORIZATION_FAILED for it.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.group_requests import off_network_thread
from wirebroker.apis.registry import serve
from wirebroker.apis.share_group_admin import delete_share_states, share_group_ids
from wirebroker.cluster.acls import AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.delete_groups import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)

API_KEY = 42


def handle(ctx: RequestContext, request: DeleteGroupsRequest) -> DeleteGroupsResponse:
    deletable = ctx.authorized(AclOperation.DELETE, ResourceType.GROUP, request.groups_names)
    kept = delete_share_states(ctx, share_group_ids(ctx, deletable))
    results = ctx.broker.group_coordinator.delete_groups([g for g in request.groups_names
                                                          if g in deletable and g not in kept])
    results += list(kept.items())
    refused = dict.fromkeys(g for g in request.groups_names if g not in deletable)  # once each, in request order
    results += [(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED) for group_id in refused]
    return DeleteGroupsResponse(results=[DeleteGroupsResponse.DeletableGroupResult(group_id=group_id, error_code=code)
                                         for group_id, code in results])


serve(API_KEY, off_network_thread(handle))
