"""AlterClientQuotas: API key 49, versions 0-1 (KIP-546); what `kafka-configs.sh --alter --add-config
'producer_byte_rate=1048576' --entity-type clients --entity-name app` and the admin clients' alterClientQuotas send.

Behaviour (Kafka's ClientQuotaControlManager.alterClientQuotas):
- One result per entity (Kafka reads the entries into a map; a type named twice in one entity keeps its last name).
  An entity is checked whole (cluster/client_quotas.py: its types and their combination, each key valid for it,
  values > 0, LONG and INT keys whole and in range, a key named twice) and refused with INVALID_REQUEST and Kafka
  4.3.1's message; a refused entity changes nothing, the others are applied together. An entity in two entries:
  one result, INVALID_REQUEST ("Ignoring duplicate entity ..."), nothing applied for it.
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
    entity_from_request,
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
    by_entity: dict[Entity, list] = {}  # Kafka reads the entries into a map: one result per entity
    for entry in request.entries:
        entity = entity_from_request([(e.entity_type, e.entity_name) for e in entry.entity])
        by_entity.setdefault(entity, []).append(entry)
    alterations: dict[Entity, dict[str, float | None]] = {}
    entries = []
    for entity, named in by_entity.items():
        code, message = ErrorCode.NONE, None
        if not allowed:
            code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        elif len(named) > 1:
            code, message = ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {describe_entity(entity)}"
        else:
            ops = [(op.key, None if op.remove else op.value) for op in named[0].ops]
            try:
                check_alteration(entity, ops)
                alterations[entity] = dict(ops)
            except ClientQuotaError as exc:
                code, message = ErrorCode[exc.code_name], str(exc)
        entries.append(_Entry(error_code=code, error_message=message,
                              entity=[_Entity(entity_type=t, entity_name=n) for t, n in entity]))
    if alterations and not request.validate_only:
        ctx.broker.client_quotas.alter(alterations)
    return AlterClientQuotasResponse(entries=entries)


serve(AlterClientQuotasRequest.API_KEY, handle)
