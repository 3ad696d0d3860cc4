"""Placing new partitions for CreateTopics and CreatePartitions: the per-request partition limit, and manual replica
assignments checked as Kafka's controller checks them (ReplicationControlManager.validateManualPartitionAssignment),
with Kafka's INVALID_REPLICA_ASSIGNMENT messages.

On this single-node broker the only registered broker is this node, so a valid assignment is `[node_id]`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from wirebroker.protocol.errors import InvalidReplicaAssignmentError

MAX_PARTITIONS_PER_REQUEST = 10_000  # Kafka's MAX_PARTITIONS_PER_BATCH: bounds the logs one request creates


def check_manual_assignment(broker_ids: Sequence[int], registered: Collection[int],
                            replication_factor: int | None) -> None:
    """Raise InvalidReplicaAssignmentError unless `broker_ids` names distinct registered brokers, as many as
    `replication_factor` (the replica count of the partitions before it, if any)."""
    if not broker_ids:
        raise InvalidReplicaAssignmentError("The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(broker_ids):
        if broker_id not in registered:
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes broker {broker_id}, but no such broker is registered.")
        if broker_id == previous:
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes the broker {broker_id} more than once.")
        previous = broker_id
    if replication_factor is not None and len(broker_ids) != replication_factor:
        raise InvalidReplicaAssignmentError(
            f"The manual partition assignment includes a partition with {len(broker_ids)} replica(s), but this is "
            f"not consistent with previous partitions, which have {replication_factor} replica(s).")
