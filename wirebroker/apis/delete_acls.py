"""DeleteAcls: API key 31, versions 1-3.

Behaviour (Kafka's AclApis.handleDeleteAcls and AclControlManager.deleteAcls):
- Without `authorizer.class.name`: every filter gets SECURITY_DISABLED, "No Authorizer is configured.".
- A filter with a type, pattern type, operation or permission code Kafka does not know gets INVALID_REQUEST
  ("Unknown patternFilter." / "Unknown entryFilter."). Every other filter answers the bindings it matches (matched
  as DescribeAcls matches them); all of them are deleted at once, persisted before the answer. A binding two
  filters match is listed under both.
- A filter naming UNKNOWN (code 0) closes the connection, as Kafka's request parsing does.
- The caller needs ALTER on the cluster, else every filter fails with CLUSTER_AUTHORIZATION_FAILED (AclApis).
Version notes:
- v0 is not offered (Kafka 4, KIP-896). v1+ resource pattern types (KIP-290); v2+ flexible; v3+ USER resources.
"""

from __future__ import annotations

import logging

from wirebroker.apis.acl_filters import (
    NO_AUTHORIZER,
    authorizer_configured,
    binding_filter,
    error_of,
    filter_codes,
    names_unknown,
)
from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import CloseConnection, RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclBinding, AclOperation, validate_filter
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.delete_acls import (
    DeleteAclsRequest,
    DeleteAclsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 31

_FilterResult = DeleteAclsResponse.DeleteAclsFilterResult
_Matching = DeleteAclsResponse.DeleteAclsMatchingAcl


def handle(ctx: RequestContext, request: DeleteAclsRequest) -> DeleteAclsResponse | CloseConnection:
    if any(names_unknown(*filter_codes(f)) for f in request.filters):
        return CloseConnection("Filters contain UNKNOWN elements")
    if not ctx.authorize(AclOperation.ALTER):
        return DeleteAclsResponse(filter_results=[
            _FilterResult(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=refused_request_message(ctx))
            for _ in request.filters])
    if not authorizer_configured(ctx):
        return DeleteAclsResponse(filter_results=[
            _FilterResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
            for _ in request.filters])
    filters = [binding_filter(f) for f in request.filters]
    errors = [error_of(validate_filter, f) for f in filters]
    valid = [f for f, error in zip(filters, errors, strict=True) if error is None]
    matched = iter(ctx.broker.acls.delete(valid))
    results = []
    for error in errors:
        if error is not None:
            results.append(_FilterResult(error_code=error.code, error_message=str(error)))
            continue
        deleted = next(matched)
        for binding in deleted:
            log.info("ACL binding %s deleted at the request of %s", binding, ctx.client)
        results.append(_FilterResult(error_code=ErrorCode.NONE, error_message=None,
                                     matching_acls=[_matching(b) for b in deleted]))
    return DeleteAclsResponse(filter_results=results)


def _matching(b: AclBinding) -> _Matching:
    return _Matching(error_code=ErrorCode.NONE, error_message=None, resource_type=b.resource_type,
                     resource_name=b.resource_name, pattern_type=b.pattern_type, principal=b.principal,
                     host=b.host, operation=b.operation, permission_type=b.permission_type)


serve(API_KEY, handle)
