"""`/state`: what the broker holds, as JSON, for tests and for the status page.

    {"node_id": 1, "cluster_id": "...", "listeners": [...],
     "topics": [{"name": "orders", "topic_id": "...", "internal": false, "configs": {...},
                 "partitions": [{"partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1], "isr": [1],
                                 "hosted": true,
                                 "log_start_offset": 0, "high_watermark": 42, "log_end_offset": 42,
                                 "last_stable_offset": 42,
                                 "producers": [{"producer_id": 7, "producer_epoch": 0, "last_sequence": 41,
                                                "last_timestamp": ..., "coordinator_epoch": -1,
                                                "current_txn_start_offset": -1}]}]}],
     "groups": [{"group_id": "g", "type": "classic", "protocol_type": "consumer", "state": "Stable",
                 "protocol": "range",
                 "members": [{"member_id": "...", "client_id": "...", "client_host": "/127.0.0.1",
                              "group_instance_id": null, "assignment": {"orders": [0]}}]}]}

Topics and partitions are those the cluster view knows (the single node's store, or a cluster member's metadata
cache); offsets and producers are given where this broker hosts a replica ("hosted": true; null elsewhere). Groups
are those its coordinator owns, described through the coordinator's own admin calls (DescribeGroups for classic
groups, ConsumerGroupDescribe for KIP-848 ones), so they are read under the coordinator's lock and show what an
admin client would see: a classic group's assignment only once it is Stable.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from wirebroker.coordinator.consumer_protocol import parse_assignment

if TYPE_CHECKING:
    from wirebroker.apis.context import BrokerServices
    from wirebroker.cluster.cluster_view import PartitionView, TopicView
    from wirebroker.replica.partition import Partition

CONSUMER_PROTOCOL_TYPE = "consumer"  # a classic group whose assignments are the consumer protocol's bytes
NO_TXN_START_OFFSET = -1


def broker_state(broker: BrokerServices) -> dict[str, Any]:
    view = broker.cluster_view
    return {
        "node_id": broker.node_id,
        "cluster_id": broker.cluster_id,
        "listeners": [listener.url() for listener in broker.bound_listeners()],
        "topics": [_topic(broker, topic) for name in sorted(view.topic_names())
                   if (topic := view.topic(name)) is not None],
        "groups": _groups(broker),
    }


def _topic(broker: BrokerServices, topic: TopicView) -> dict[str, Any]:
    stored = broker.metadata.topic(topic.name)  # a cluster member's store may not hold it: no configs then
    return {
        "name": topic.name,
        "topic_id": str(uuid.UUID(bytes=topic.topic_id)),
        "internal": topic.is_internal,
        "configs": dict(stored.configs) if stored is not None else {},
        "partitions": [_partition(p, broker.replica_manager.partition(topic.name, p.index))
                       for p in sorted(topic.partitions, key=lambda p: p.index)],
    }


def _partition(view: PartitionView, hosted: Partition | None) -> dict[str, Any]:
    """What the cluster says of the partition; its offsets and producers where this broker hosts a replica (None
    elsewhere)."""
    state: dict[str, Any] = {"partition": view.index, "leader": view.leader, "leader_epoch": view.leader_epoch,
                             "replicas": list(view.replicas), "isr": list(view.isr), "hosted": hosted is not None}
    if hosted is None:
        return state | dict.fromkeys(("log_start_offset", "high_watermark", "log_end_offset", "last_stable_offset",
                                      "producers"))
    return state | {
        "log_start_offset": hosted.log_start_offset,
        "high_watermark": hosted.high_watermark,
        "log_end_offset": hosted.log_end_offset,
        "last_stable_offset": hosted.last_stable_offset,
        "producers": [
            {"producer_id": producer_id, "producer_epoch": entry.producer_epoch, "last_sequence": entry.last_seq,
             "last_timestamp": entry.last_timestamp, "coordinator_epoch": entry.coordinator_epoch,
             "current_txn_start_offset": NO_TXN_START_OFFSET if entry.current_txn_first_offset is None
             else entry.current_txn_first_offset}
            for producer_id, entry in sorted(hosted.log.active_producers().items())
        ],
    }


def _groups(broker: BrokerServices) -> list[dict[str, Any]]:
    coordinator = broker.group_coordinator
    error, listed = coordinator.list_groups([], [])
    if error:
        return []  # the coordinator is loading its partitions: no group to show yet
    by_type: dict[str, list[str]] = {}
    for group in listed:
        by_type.setdefault(group.group_type, []).append(group.group_id)
    groups = [_classic_group(g) for g in coordinator.describe_groups(by_type.get("classic", []))]
    groups += [_consumer_group(g) for g in coordinator.consumer_group_describe(by_type.get("consumer", []))]
    return sorted((g for g in groups if g is not None), key=lambda g: g["group_id"])


def _classic_group(group: Any) -> dict[str, Any] | None:
    if group.error_code:
        return None  # gone between the listing and the description
    return {
        "group_id": group.group_id, "type": "classic", "protocol_type": group.protocol_type,
        "state": group.group_state, "protocol": group.protocol_data,
        "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                     "client_host": m.client_host,
                     "assignment": _classic_assignment(group.protocol_type, m.member_assignment)}
                    for m in group.members],
    }


def _classic_assignment(protocol_type: str, data: bytes) -> dict[str, list[int]] | None:
    """The consumer protocol's assignment by topic; None when there is none yet or it is another protocol's."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not data:
        return None
    try:
        return {topic: sorted(partitions) for topic, partitions in sorted(parse_assignment(bytes(data)).items())}
    except ValueError:  # DecodeError
        return None  # a client's own bytes that do not parse: shown as no assignment, not a failed page


def _consumer_group(group: Any) -> dict[str, Any] | None:
    if group.error_code:
        return None
    return {
        "group_id": group.group_id, "type": "consumer", "protocol_type": CONSUMER_PROTOCOL_TYPE,
        "state": group.group_state, "protocol": group.assignor_name, "group_epoch": group.group_epoch,
        "members": [{"member_id": m.member_id, "group_instance_id": m.instance_id, "client_id": m.client_id,
                     "client_host": m.client_host, "member_epoch": m.member_epoch,
                     "assignment": {t.topic_name: sorted(t.partitions) for t in m.assignment.topic_partitions}}
                    for m in group.members],
    }
