"""CreateAcls: API key 30, versions 1-3.

Behaviour (Kafka's AclApis.handleCreateAcls and AclControlManager.createAcls):
- Without `authorizer.class.name`: every creation gets SECURITY_DISABLED, "No Authorizer is configured.".
- A creation that cannot be a binding (resource type ANY, pattern type ANY or MATCH, operation or permission ANY:
  Kafka's ResourcePattern and AccessControlEntry constructors refuse them) fails the whole request: every creation
  gets UNKNOWN_SERVER_ERROR without a message, as Kafka answers.
- Each other creation: INVALID_REQUEST for a CLUSTER resource not named `kafka-cluster`, an empty name, or a type,
  pattern type, operation or permission code Kafka does not know; otherwise it is stored (persisted before the
  answer). Creating a binding that exists succeeds and changes nothing.
- A creation naming UNKNOWN (code 0) closes the connection, as Kafka's request parsing does.
- The caller needs ALTER on the cluster, else every creation fails with CLUSTER_AUTHORIZATION_FAILED (AclApis).
Version notes:
- v0 is not offered (Kafka 4, KIP-896). v1+ resource pattern types (KIP-290); v2+ flexible; v3+ USER resources.
"""

from __future__ import annotations

import logging

from wirebroker.apis.acl_filters import (
    NO_AUTHORIZER,
    authorizer_configured,
    error_of,
    names_unknown,
    typed,
)
from wirebroker.apis.authorization import refused_request_message
from wirebroker.apis.context import CloseConnection, RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.create_acls import (
    CreateAclsRequest,
    CreateAclsResponse,
)

log = logging.getLogger(__name__)

API_KEY = 30

_Result = CreateAclsResponse.AclCreationResult
_Creation = CreateAclsRequest.AclCreation


def handle(ctx: RequestContext, request: CreateAclsRequest) -> CreateAclsResponse | CloseConnection:
    creations = request.creations
    if any(names_unknown(c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
           for c in creations):
        return CloseConnection("CreatableAcls contain unknown elements")
    if not ctx.authorize(AclOperation.ALTER):
        return _all_failed(len(creations), ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                           refused_request_message(ctx))
    if not authorizer_configured(ctx):
        return _all_failed(len(creations), ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    bindings = [_binding(c) for c in creations]
    if not all(_is_binding(b) for b in bindings):
        log.info("CreateAcls from %s names an ANY or MATCH where a binding needs a value: failing every creation",
                 ctx.client)
        return _all_failed(len(creations), ErrorCode.UNKNOWN_SERVER_ERROR, None)
    errors = [error_of(ctx.broker.acls.validate, b) for b in bindings]
    ctx.broker.acls.create(b for b, error in zip(bindings, errors, strict=True) if error is None)
    for binding, error in zip(bindings, errors, strict=True):
        if error is None:
            log.info("ACL binding %s created at the request of %s", binding, ctx.client)
    return CreateAclsResponse(results=[_result(error) for error in errors])


def _binding(creation: _Creation) -> AclBinding:
    return AclBinding(*typed(creation.resource_type, creation.resource_name, creation.resource_pattern_type,
                             creation.principal, creation.host, creation.operation, creation.permission_type))


def _is_binding(binding: AclBinding) -> bool:
    return (binding.resource_type is not ResourceType.ANY
            and binding.pattern_type not in (PatternType.ANY, PatternType.MATCH)
            and binding.operation is not AclOperation.ANY
            and binding.permission_type is not AclPermissionType.ANY)


def _result(error: KafkaError | None) -> _Result:
    if error is None:
        return _Result(error_code=ErrorCode.NONE)  # Kafka leaves the message at its default, ""
    return _Result(error_code=error.code, error_message=str(error))


def _all_failed(count: int, code: int, message: str | None) -> CreateAclsResponse:
    return CreateAclsResponse(results=[_Result(error_code=code, error_message=message) for _ in range(count)])


serve(API_KEY, handle)
