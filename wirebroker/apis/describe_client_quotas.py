"""DescribeClientQuotas: API key 48, versions 0-1 (KIP-546); what `kafka-configs.sh --describe --entity-type users`
and the admin clients' describeClientQuotas send.

Behaviour (Kafka's ClientQuotasImage.describe):
- Components filter the entities: MATCH_TYPE_EXACT names one (match must not be null), MATCH_TYPE_DEFAULT the type's
  default entity (match must be null), MATCH_TYPE_SPECIFIED any entity having that type (match null). With `strict`
  an entity must have no other types; without components every entity matches unless strict.
- A bad filter (empty or repeated type, a null/non-null match where the type forbids it, ip with user or client-id)
  is INVALID_REQUEST with Kafka's message (unknown match types too); an unknown entity type is UNSUPPORTED_VERSION. The error
  is the response's, with no entries.
- With an authorizer: DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED.

Version notes: v1 is the flexible version (KIP-482); nothing else changed.
"""

from __future__ import annotations

from wirebroker.apis.authorization import require
from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.client_quotas import ClientQuotaError, check_filter, matches
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)

_Entry = DescribeClientQuotasResponse.EntryData
_Entity = DescribeClientQuotasResponse.EntityData
_Value = DescribeClientQuotasResponse.ValueData


def handle(ctx: RequestContext, request: DescribeClientQuotasRequest) -> DescribeClientQuotasResponse:
    require(ctx, AclOperation.DESCRIBE_CONFIGS)
    try:
        exact, specified = check_filter([(c.entity_type, c.match_type, c.match) for c in request.components])
    except ClientQuotaError as exc:
        return DescribeClientQuotasResponse(error_code=ErrorCode[exc.code_name], error_message=str(exc),
                                            entries=None)
    entries = [
        _Entry(entity=[_Entity(entity_type=t, entity_name=name) for t, name in entity],
               values=[_Value(key=key, value=value) for key, value in sorted(values.items())])
        for entity, values in ctx.broker.client_quotas.quotas().items()
        if matches(entity, exact, specified, request.strict)
    ]
    return DescribeClientQuotasResponse(error_code=ErrorCode.NONE, error_message=None, entries=entries)


serve(DescribeClientQuotasRequest.API_KEY, handle)
