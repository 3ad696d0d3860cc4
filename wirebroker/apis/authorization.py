"""The refusal of a whole request by the authorizer (Kafka's AuthHelper.authorizeClusterOperation and the checks
KafkaApis answers with a request's top-level error code).

Per-resource checks are RequestContext.authorize and .authorized; this module turns a refusal into the Kafka error
the dispatcher answers with, one per resource type.
"""

from __future__ import annotations

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.acls import CLUSTER_RESOURCE_NAME, AclOperation, ResourceType
from wirebroker.protocol.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)
from wirebroker.protocol.messages import API_SPECS

REFUSALS: dict[ResourceType, type[KafkaError]] = {
    ResourceType.TOPIC: TopicAuthorizationFailedError,
    ResourceType.GROUP: GroupAuthorizationFailedError,
    ResourceType.CLUSTER: ClusterAuthorizationFailedError,
    ResourceType.TRANSACTIONAL_ID: TransactionalIdAuthorizationFailedError,
}


def require(ctx: RequestContext, operation: AclOperation, resource_type: ResourceType = ResourceType.CLUSTER,
            name: str = CLUSTER_RESOURCE_NAME) -> None:
    """Raise the resource type's authorization error unless this request may do `operation` to the resource."""
    if not ctx.authorize(operation, resource_type, name):  # the authorizer logs who was refused what
        raise REFUSALS[resource_type]()  # Kafka's default message ("Topic authorization failed.")


def refused_request_message(ctx: RequestContext, needs: AclOperation | None = None) -> str:
    """The message of the ClusterAuthorizationException Kafka answers a whole request with when its controller or
    AclApis refuses it: "Request <request> is not authorized." (AuthHelper.authorizeClusterOperation), or "Request
    <request> needs <OPERATION> permission.". Kafka prints its request object there; we name the API and the
    principal."""
    request = f"Request {API_SPECS[ctx.header.api_key].name} from {ctx.principal}"
    return f"{request} needs {needs.name} permission." if needs is not None else f"{request} is not authorized."


def refusal_code(resource_type: ResourceType) -> int:
    """The error code a refused resource of this type gets in a per-resource answer."""
    return REFUSALS[resource_type].code
