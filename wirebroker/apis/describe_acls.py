"""DescribeAcls: API key 29, versions 1-3.

Behaviour (Kafka's AclApis.handleDescribeAcls, StandardAuthorizer.acls, DescribeAclsResponse.aclsResources):
- Without `authorizer.class.name`: SECURITY_DISABLED, "No Authorizer is configured on the broker".
- Otherwise every stored binding the filter matches, grouped by resource pattern (in creation order). Resource
  type ANY and pattern type ANY match any; pattern type MATCH selects the patterns that apply to the name (the
  LITERAL one, the LITERAL wildcard `*`, PREFIXED prefixes of it); a null name, principal or host matches any.
- A filter naming an UNKNOWN type, operation or permission closes the connection, as Kafka's request parsing does.
- The caller needs DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED (Kafka's AclApis).
Version notes:
- v0 is not offered (Kafka 4, KIP-896). v1+ resource pattern types (KIP-290); v2+ flexible; v3+ USER resources.
"""

from __future__ import annotations

from wirebroker.apis.acl_filters import (
    authorizer_configured,
    binding_filter,
    filter_codes,
    names_unknown,
)
from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import CloseConnection, RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclBinding, AclOperation
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_acls import (
    DescribeAclsRequest,
    DescribeAclsResponse,
)

API_KEY = 29

_Resource = DescribeAclsResponse.DescribeAclsResource
_Acl = DescribeAclsResponse.AclDescription


def handle(ctx: RequestContext, request: DescribeAclsRequest) -> DescribeAclsResponse | CloseConnection:
    if names_unknown(*filter_codes(request)):
        return CloseConnection("DescribeAclsRequest contains UNKNOWN elements")
    if not ctx.authorize(AclOperation.DESCRIBE):
        return DescribeAclsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                    error_message=refused_request_message(ctx), resources=[])
    if not authorizer_configured(ctx):
        return DescribeAclsResponse(error_code=ErrorCode.SECURITY_DISABLED,
                                    error_message="No Authorizer is configured on the broker")
    bindings = ctx.broker.acls.describe(binding_filter(request))
    return DescribeAclsResponse(error_code=ErrorCode.NONE, resources=_by_resource(bindings))


def _by_resource(bindings: list[AclBinding]) -> list[_Resource]:
    resources: dict[tuple[int, str, int], _Resource] = {}
    for b in bindings:
        key = (b.resource_type, b.resource_name, b.pattern_type)
        if key not in resources:
            resources[key] = _Resource(resource_type=b.resource_type, resource_name=b.resource_name,
                                       pattern_type=b.pattern_type)
        resources[key].acls.append(_Acl(principal=b.principal, host=b.host, operation=b.operation,
                                        permission_type=b.permission_type))
    return list(resources.values())


serve(API_KEY, handle)
