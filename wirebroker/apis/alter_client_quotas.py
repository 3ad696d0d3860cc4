"""AlterClientQuotas: API key 49, versions 0-1 (KIP-546); what `kafka-configs.sh --alter --add-config
'producer_byte_rate=1048576' --entity-type clients --entity-name app` and the admin clients' alterClientQuotas send.

Behaviour (Kafka's ClientQuotaControlManager.alterClientQuotas):
- One result per entry. An entity is checked whole (cluster/client_quotas.py: its types and their combination, each
  key valid for it, LONG keys whole numbers, a key named twice) and refused with INVALID_REQUEST and Kafka's message;
  a refused entity changes nothing, the others are applied together. An entity named twice: the second entry gets
  INVALID_REQUEST ("Ignoring duplicate entity ...").
- An op with `remove` deletes the key (no error if it was not set); an entity left without keys is gone.
- validate_only: the same results, nothing applied.
- With an authorizer: ALTER_CONFIGS on the cluster, else every entry gets CLUSTER_AUTHORIZATION_FAILED.

Version notes: v1 is the flexible version (KIP-482); nothing else changed.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.cluster.client_quotas import (
    ClientQuotaError,
    Entity,
    check_alteration,
    describe_entity,
    entity_of,
)
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
)

_Entry = AlterClientQuotasResponse.EntryData
_Entity = AlterClientQuotasResponse.EntityData


def handle(ctx: RequestContext, request: AlterClientQuotasRequest) -> AlterClientQuotasResponse:
    allowed = ctx.authorize(AclOperation.ALTER_CONFIGS)
    alterations: dict[Entity, dict[str, float | None]] = {}
    seen: set[Entity] = set()
    entries = []
    for entry in request.entries:
        pairs = [(e.entity_type, e.entity_name) for e in entry.entity]
        code, message = ErrorCode.NONE, None
        if not allowed:
            code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        elif entity_of(pairs) in seen:
            code, message = ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {describe_entity(entity_of(pairs))}"
        else:
            seen.add(entity_of(pairs))
            ops = [(op.key, None if op.remove else op.value) for op in entry.ops]
            try:
                alterations[check_alteration(pairs, ops)] = dict(ops)
            except ClientQuotaError as exc:
                code, message = ErrorCode[exc.code_name], str(exc)
        entries.append(_Entry(error_code=code, error_message=message,
                              entity=[_Entity(entity_type=t, entity_name=n) for t, n in pairs]))
    if alterations and not request.validate_only:
        ctx.broker.client_quotas.alter(alterations)
    return AlterClientQuotasResponse(entries=entries)


serve(AlterClientQuotasRequest.API_KEY, handle)
