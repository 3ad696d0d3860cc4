"""The transaction coordinator set up in a broker (Kafka's BrokerServer builds its TransactionCoordinator alike).

Its state lives in `__transaction_state` (an internal topic, as `__consumer_offsets` for groups); its markers go
to each partition's leader on the inter-broker listener (`inter.broker.listener.name`, else the first listener):
in a cluster the leader's endpoint from the metadata cache, on a single broker this broker's own listener, over
loopback. A single broker owns every partition of the topic; a cluster member follows its leadership, changes
handled on the group request thread, as the group coordinator's (LeaderAndIsr never waits for the coordinator).
Beside it, the partition leaders' adds of transaction protocol 2 (coordinator/transaction_partition_adds.py) reach
the coordinator of a transactional id, the leader of its `__transaction_state` partition, the same way: this broker's
in-process coordinator when it leads it, else that leader's inter-broker listener.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wirebroker.coordinator.internal_topic import InternalTopic
from wirebroker.coordinator.timer import SystemTimer
from wirebroker.coordinator.transaction_coordinator import (
    TRANSACTION_STATE_TOPIC,
    TransactionConfig,
    TransactionCoordinator,
)
from wirebroker.coordinator.transaction_markers import TransactionMarkerChannel
from wirebroker.coordinator.transaction_partition_adds import AddPartitionsToTxnManager

if TYPE_CHECKING:
    from wirebroker.replica.partition import Partition

MARKER_RETRY_BACKOFF_MS = 100  # Kafka's retry.backoff.ms default, the marker channel's wait before a retry
ANY_ADDRESS = ("", "0.0.0.0", "::")  # a listener bound to every interface is reached over loopback


def build_transaction_coordinator(broker: Any) -> tuple[TransactionCoordinator, InternalTopic,
                                                       AddPartitionsToTxnManager]:
    """The coordinator, its `__transaction_state` topic (for FindCoordinator) and the partition leaders' way to add
    partitions to transactions. The broker starts the coordinator once its listeners are bound
    (`start(own_every_partition=...)`): transactions loaded in PrepareCommit/PrepareAbort send their markers to this
    broker's own listener at once."""
    config = TransactionConfig.from_broker(broker.config)
    state_topic = InternalTopic(broker, config.topic_spec())
    listener = broker.config["inter.broker.listener.name"] or broker.config.listeners[0].name

    def leader_of(topic: str, index: int) -> tuple[int, str, int] | None:
        view = broker.cluster_view.topic(topic)
        if view is None or index >= len(view.partitions) or view.partitions[index].leader < 0:
            return None
        leader = view.partitions[index].leader
        if broker.metadata_cache is not None:
            endpoint = broker.metadata_cache.endpoint(leader, listener)
            return (leader, *endpoint) if endpoint is not None else None
        own = next(bound for bound in broker.bound_listeners() if bound.name == listener)
        return leader, "127.0.0.1" if own.host in ANY_ADDRESS else own.host, own.port

    channel = TransactionMarkerChannel(leader_of, lambda topic: broker.cluster_view.topic(topic) is not None,
                                       f"transaction-coordinator-{broker.node_id}", config.request_timeout_ms,
                                       MARKER_RETRY_BACKOFF_MS, security=broker.inter_broker_security)
    timer = SystemTimer("transaction-coordinator-timer", broker.clock)  # transaction timeouts
    coordinator = TransactionCoordinator(config, state_topic, timer, channel, broker.metadata.allocate_producer_id)
    if broker.metadata_cache is not None:
        def follow_leadership(leaders: list[Partition], not_leaders: list[Partition]) -> None:
            for partition in leaders:
                if partition.topic == TRANSACTION_STATE_TOPIC:
                    broker.group_requests.submit(coordinator.on_election, partition.index, partition.leader_epoch)
            for partition in not_leaders:
                if partition.topic == TRANSACTION_STATE_TOPIC:
                    broker.group_requests.submit(coordinator.on_resignation, partition.index, partition.leader_epoch)

        broker.replica_manager.leadership_listeners.append(follow_leadership)
    partition_adds = AddPartitionsToTxnManager(
        coordinator, lambda partition: leader_of(TRANSACTION_STATE_TOPIC, partition), broker.node_id,
        config.request_timeout_ms, security=broker.inter_broker_security)
    return coordinator, state_topic, partition_adds
