"""The replica manager tells its leadership listeners what a LeaderAndIsr or StopReplica changed (Kafka's
onLeadershipChange): the seam the group coordinator follows `__consumer_offsets` leadership by."""

from __future__ import annotations

import uuid

from tests.unit.log.helpers import small_config
from wirebroker.log.manager import LogManager
from wirebroker.replica.manager import PartitionDecision, ReplicaManager, StopReplica
from wirebroker.replica.partition import LeaderAndIsr

TOPIC_ID = uuid.uuid4().bytes


def decision(index: int, leader: int, epoch: int) -> PartitionDecision:
    return PartitionDecision("__consumer_offsets", index, TOPIC_ID, LeaderAndIsr(leader, epoch, (1, 2), 0, (1, 2)),
                             is_new=True)


def test_listeners_hear_leaders_followers_and_stopped_replicas(tmp_path):
    log_manager = LogManager([tmp_path], small_config(), node_id=1)
    log_manager.startup()
    manager = ReplicaManager(log_manager, small_config(), node_id=1)
    heard: list[tuple[list, list]] = []
    manager.leadership_listeners.append(
        lambda leaders, others: heard.append(([(p.index, p.leader_epoch) for p in leaders],
                                              [(p.index, p.leader_epoch) for p in others])))
    try:
        manager.become_leader_or_follower(9, 1, [decision(0, 1, 0), decision(1, 2, 0)])
        manager.become_leader_or_follower(9, 1, [decision(0, 2, 1), decision(1, 2, 0)])  # 1: stale epoch, ignored
        manager.stop_replicas(9, 1, [StopReplica("__consumer_offsets", 1, 0)])
    finally:
        manager.shutdown()
        log_manager.shutdown()
    assert heard == [([(0, 0)], [(1, 0)]), ([], [(0, 1)]), ([], [(1, 0)])]
