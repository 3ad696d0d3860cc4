"""Where a partition's leader is, for the answers that send a client elsewhere (KIP-951).

Produce v10+ and Fetch v16+ answering NOT_LEADER_OR_FOLLOWER (and Fetch FENCED_LEADER_EPOCH) name the partition's
current leader and leader epoch, and list that leader's endpoint on the request's listener, as Kafka's
KafkaApis.getCurrentLeader does from its metadata cache, so a client can move on without a Metadata round trip.
An unknown partition or a leader that is not alive gives leader -1, epoch -1 and no endpoint.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from wirebroker.apis.context import RequestContext
from wirebroker.cluster.cluster_view import NO_LEADER, BrokerNode

NO_EPOCH = -1


class CurrentLeader(NamedTuple):
    leader_id: int
    leader_epoch: int
    node: BrokerNode | None


def current_leader(ctx: RequestContext, topic: str, index: int) -> CurrentLeader:
    view = ctx.broker.cluster_view
    found = view.topic(topic)
    partition = next((p for p in found.partitions if p.index == index), None) if found is not None else None
    if partition is None or partition.leader == NO_LEADER:
        return CurrentLeader(NO_LEADER, NO_EPOCH, None)
    node = next((b for b in view.alive_brokers(ctx.listener) if b.node_id == partition.leader), None)
    return CurrentLeader(partition.leader, partition.leader_epoch, node)


def point_to_leaders(ctx: RequestContext, sent_elsewhere: Iterable[tuple[str, int, Any]], leader_and_epoch: type,
                     node_endpoint: type) -> list[Any]:
    """Set `current_leader` on each (topic, partition index, partition response); the leaders' endpoints, once
    each, for the response's node_endpoints. The two types are the response's own LeaderIdAndEpoch and
    NodeEndpoint."""
    endpoints: dict[int, Any] = {}
    for topic, index, partition in sent_elsewhere:
        leader = current_leader(ctx, topic, index)
        partition.current_leader = leader_and_epoch(leader_id=leader.leader_id, leader_epoch=leader.leader_epoch)
        if leader.node is not None:
            node = leader.node
            endpoints[node.node_id] = node_endpoint(node_id=node.node_id, host=node.host, port=node.port,
                                                    rack=node.rack)
    return list(endpoints.values())
