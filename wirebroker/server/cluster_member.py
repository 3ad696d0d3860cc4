"""What a cluster member adds to a broker: the metadata cache the controller fills, follower fetchers, the
AlterPartition channel to the controller, the inter-broker APIs, and the topic purgatory where CreateTopics,
CreatePartitions and DeleteTopics wait for the controller's UpdateMetadata (apis/delayed_topic_change.py).

`Broker` imports this module only when it is a cluster member (zookeeper.connect, or
wirebroker.external.controller in tests), so a single node never loads replication's modules: its start-up time
stays what it was before replication.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from wirebroker.apis import inter_broker  # noqa: F401  (imported to register the inter-broker APIs)
from wirebroker.cluster.metadata_cache import MetadataCache
from wirebroker.config import BrokerConfig
from wirebroker.network.client_security import ClientSecurity
from wirebroker.replica.alter_partition import AlterPartitionManager
from wirebroker.replica.fetcher import FetcherConfig
from wirebroker.replica.fetcher_manager import ReplicaFetcherManager
from wirebroker.replica.manager import ReplicaManager, Replication
from wirebroker.replica.purgatory import DelayedOperationPurgatory

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClusterMember:
    metadata_cache: MetadataCache  # what the controller last sent; the cluster view of the metadata APIs
    topic_purgatory: DelayedOperationPurgatory  # topic changes awaiting UpdateMetadata, keyed by topic name


def start_replication(config: BrokerConfig, node_id: int, replica_manager: ReplicaManager,
                      broker_epoch: Callable[[], int], security: ClientSecurity | None = None) -> ClusterMember:
    """Give `replica_manager` its fetchers and AlterPartition channel; return the cache its peers resolve through
    and the topic purgatory.

    Partitions come later, from the controller's LeaderAndIsr; the cache from its UpdateMetadata. `broker_epoch` is
    this broker's registration epoch (ZooKeeper's czxid of /brokers/ids/N, -1 before it registers), which the
    controller checks on each AlterPartition so that a proposal from a broker's previous life is refused.
    """
    cache = MetadataCache(node_id)
    listener = config["inter.broker.listener.name"] or config.listeners[0].name

    def leader_endpoint(broker_id: int) -> tuple[str, int] | None:
        return cache.endpoint(broker_id, listener)

    def controller_endpoint() -> tuple[int, str, int] | None:
        endpoint = cache.endpoint(cache.controller_id, listener)
        return (cache.controller_id, *endpoint) if endpoint is not None else None

    fetcher_config = FetcherConfig(
        node_id, config["replica.fetch.max.bytes"], config["replica.fetch.response.max.bytes"],
        config["replica.fetch.wait.max.ms"], config["replica.fetch.min.bytes"], config["replica.fetch.backoff.ms"],
        config["replica.socket.timeout.ms"], security)
    replica_manager.start_replication(Replication(
        ReplicaFetcherManager(fetcher_config, config["num.replica.fetchers"], replica_manager.partition),
        AlterPartitionManager(node_id, controller_endpoint, broker_epoch,
                              request_timeout_ms=config["replica.socket.timeout.ms"], security=security),
        leader_endpoint, lambda topic, index: cache.partition_state(topic, index) is not None))
    log.info("broker %d is a cluster member: waiting for the controller's UpdateMetadata and LeaderAndIsr "
             "(inter-broker listener %s)", node_id, listener)
    return ClusterMember(cache, DelayedOperationPurgatory("topic"))
