"""The inter-broker APIs, served (not advertised to clients) by a cluster member only.

The controller sends LeaderAndIsr, UpdateMetadata and StopReplica to the brokers; the brokers send AlterPartition
and ControlledShutdown to the controller. A single broker has no controller to hear from, so it neither imports nor
serves them (the single node starts faster); `server/cluster_member.py` imports this module to register them.
"""

from wirebroker.apis import (  # noqa: F401  (imported to register)
    alter_partition,
    controlled_shutdown,
    leader_and_isr,
    stop_replica,
    update_metadata,
)
