"""KIP-430 authorized-operation bit sets: what this request's principal may do to a topic, a group or the cluster.

Kafka's AuthHelper.authorizedOperations: of the operations Kafka supports on the resource type (AclEntry's
supportedOperations), those the authorizer allows; bit n stands for the AclOperation with code n. Without an
authorizer every supported operation is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.acls import CLUSTER_RESOURCE_NAME, AclOperation, ResourceType
from wirebroker.protocol.errors import ErrorCode

# Kafka's Integer.MIN_VALUE: the request did not ask for authorized operations.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)

SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
                         AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE,
                           AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                           AclOperation.IDEMPOTENT_WRITE),
}


def authorized_operations(ctx: RequestContext, resource_type: ResourceType,
                          name: str = CLUSTER_RESOURCE_NAME) -> int:
    """The bit set of the supported operations on the resource this request may do (none of the asks logged)."""
    return sum(1 << operation.value for operation in SUPPORTED_OPERATIONS[resource_type]
               if ctx.authorize(operation, resource_type, name, log_denied=False))


def set_group_operations(ctx: RequestContext, groups: Iterable[Any], requested: bool) -> None:
    """DescribeGroups and ConsumerGroupDescribe: each group described without an error gets its operations when
    asked (Kafka leaves an erring group's at INT32_MIN)."""
    for group in groups:
        if requested and group.error_code == ErrorCode.NONE:
            group.authorized_operations = authorized_operations(ctx, ResourceType.GROUP, group.group_id)


def cluster_authorized_operations(ctx: RequestContext) -> int:
    """Metadata v8-10 and DescribeCluster: 0 without DESCRIBE on the cluster, the allowed operations with it."""
    return authorized_operations(ctx, ResourceType.CLUSTER) if ctx.authorize(AclOperation.DESCRIBE) else 0
