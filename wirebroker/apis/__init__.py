"""The APIs this broker serves, one module each (a module registers its handler in `registry` when imported).

Importing the package imports every client-facing API module, so `registry.SERVED` is complete whenever any part
of the package is in use; ApiVersions advertises exactly these. A cluster member adds the inter-broker APIs
(`inter_broker.py`).
"""

from wirebroker.apis import (  # noqa: F401  (imported to register)
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_quorum,
    describe_topic_partitions,
    elect_leaders,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
    txn_offset_commit,
    write_txn_markers,
)
