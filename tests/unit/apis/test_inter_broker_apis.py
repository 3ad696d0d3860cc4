"""Inter-broker APIs: registered by a cluster member only, served at their schema's versions, never advertised."""

from __future__ import annotations

import subprocess
import sys

from wirebroker.apis import inter_broker  # noqa: F401  (what a cluster member imports)
from wirebroker.apis.registry import SERVED, supported_versions
from wirebroker.protocol.messages import API_SPECS

LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN, ALTER_PARTITION = 4, 5, 6, 7, 56
INTER_BROKER = (LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN, ALTER_PARTITION)


def test_served_at_the_schema_versions_but_not_advertised():
    advertised = supported_versions()
    for key in (LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA):
        api = SERVED[key]
        assert not api.advertised and key not in advertised
        assert (api.min_version, api.max_version) == (API_SPECS[key].min_version, API_SPECS[key].max_version)
    assert 0 in advertised and 1 in advertised  # client APIs still are


def test_a_single_node_neither_imports_nor_serves_them():
    """A single broker loads no replication module (start-up time): a fresh interpreter shows what it imports."""
    probe = ("import sys, wirebroker.server.broker; from wirebroker.apis.registry import SERVED; "
             "print(sorted(SERVED)); print(sorted(m for m in sys.modules if m.startswith('wirebroker')))")
    served, modules = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                     check=True).stdout.splitlines()
    assert not set(INTER_BROKER) & set(eval(served))
    cluster_only = ("wirebroker.server.cluster_member", "wirebroker.apis.inter_broker", "wirebroker.cluster.zk",
                    "wirebroker.cluster.metadata_cache", "wirebroker.replica.fetcher",
                    "wirebroker.replica.alter_partition", "wirebroker.network.broker_client", "kazoo")
    assert [m for m in eval(modules) if m.startswith(cluster_only)] == []
