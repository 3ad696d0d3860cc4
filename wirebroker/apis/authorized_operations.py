"""KIP-430 authorized-operation bit sets: what a client may do to a topic, group or the cluster.

No authorizer is enforced (ACLs are stored, not checked: see wirebroker/cluster/acls.py), so the sets are every
operation Kafka's authorizer knows for the resource type; bit n stands for the AclOperation with code n.
"""

from __future__ import annotations

from wirebroker.cluster.acls import AclOperation

# Kafka's Integer.MIN_VALUE: the request did not ask for authorized operations.
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)


def _bits(*operations: AclOperation) -> int:
    return sum(1 << operation.value for operation in operations)


TOPIC_OPERATIONS = _bits(AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE,
                         AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS)
GROUP_OPERATIONS = _bits(AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE)
CLUSTER_OPERATIONS = _bits(AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
                           AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE)


def group_authorized_operations(requested: bool) -> int:
    return GROUP_OPERATIONS if requested else AUTHORIZED_OPERATIONS_OMITTED
