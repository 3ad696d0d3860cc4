"""The APIs this broker serves, one module each, named as its generated codec (`protocol/messages/<module>.py`).

Importing the package registers every client-facing API in `registry`, at the versions schemas/manifest.json allows,
so `registry.SERVED` is complete whenever any part of the package is in use and ApiVersions advertises exactly these.
Each module is imported at its API's first request and then registers its handler itself (`registry.serve`): a
broker starts in a blink without importing the APIs, and their codecs, that its clients never use. A cluster member
adds the inter-broker APIs (`inter_broker.py`).
"""

from wirebroker.apis.registry import serve_on_first_request
from wirebroker.protocol.messages import API_SPECS

CLIENT_API_MODULES = (
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "alter_client_quotas",
    "alter_configs",
    "alter_partition_reassignments",
    "alter_replica_log_dirs",
    "alter_share_group_offsets",
    "alter_user_scram_credentials",
    "api_versions",
    "consumer_group_describe",
    "consumer_group_heartbeat",
    "create_acls",
    "create_partitions",
    "create_topics",
    "delete_acls",
    "delete_groups",
    "delete_records",
    "delete_share_group_offsets",
    "delete_share_group_state",
    "delete_topics",
    "describe_acls",
    "describe_client_quotas",
    "describe_cluster",
    "describe_configs",
    "describe_groups",
    "describe_log_dirs",
    "describe_producers",
    "describe_quorum",
    "describe_share_group_offsets",
    "describe_topic_partitions",
    "describe_transactions",
    "describe_user_scram_credentials",
    "elect_leaders",
    "end_txn",
    "fetch",
    "find_coordinator",
    "heartbeat",
    "incremental_alter_configs",
    "initialize_share_group_state",
    "init_producer_id",
    "join_group",
    "leave_group",
    "list_config_resources",
    "list_groups",
    "list_offsets",
    "list_partition_reassignments",
    "list_transactions",
    "metadata",
    "offset_commit",
    "offset_delete",
    "offset_fetch",
    "offset_for_leader_epoch",
    "produce",
    "read_share_group_state",
    "read_share_group_state_summary",
    "sasl_authenticate",
    "sasl_handshake",
    "share_acknowledge",
    "share_fetch",
    "share_group_describe",
    "share_group_heartbeat",
    "sync_group",
    "txn_offset_commit",
    "write_share_group_state",
    "write_txn_markers",
)


def _register() -> None:
    keys = {spec.module: key for key, spec in API_SPECS.items()}
    for module in CLIENT_API_MODULES:
        serve_on_first_request(keys[module], f"{__name__}.{module}")


_register()
