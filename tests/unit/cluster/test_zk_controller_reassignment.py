"""Reassignment's replica sets, its completion decision and the automatic leader rebalance's choice (Kafka's
ReplicaAssignment.fromOldAndNewReplicas, the reassign leader election, checkAndTriggerAutoLeaderRebalance), without
ZooKeeper."""

from __future__ import annotations

from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import BrokerInfo, LeaderAndIsr, LeaderIsrAndControllerEpoch, ReplicaAssignment
from wirebroker.cluster.zk.reassignment import reassignment_of
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import EligibleLeadersNotAvailableError

T0 = TopicPartition("t", 0)


def test_the_full_replica_set_is_the_target_then_the_original_replicas_leaving():
    moving = reassignment_of(ReplicaAssignment((1, 2, 3)), [3, 4, 5])
    assert moving == ReplicaAssignment((3, 4, 5, 1, 2), adding_replicas=(4, 5), removing_replicas=(1, 2))
    assert moving.target_replicas == (3, 4, 5)


def test_a_new_target_starts_over_from_the_original_replicas():
    moving = reassignment_of(ReplicaAssignment((3, 4, 1, 2), (3, 4), (1, 2)), [1, 5])
    assert moving == ReplicaAssignment((1, 5, 2), adding_replicas=(5,), removing_replicas=(2,))


def test_cancelling_is_a_reassignment_back_to_the_original_replicas():
    assert reassignment_of(ReplicaAssignment((3, 1, 2), (3,), (2,)), [1, 2]) == ReplicaAssignment((1, 2))


def completion(current: LeaderAndIsr, live=(1, 2, 3, 4)) -> object:
    state = ControllerState(1, 5, 5, {b: BrokerInfo(b, ()) for b in live},
                            {T0: ReplicaAssignment((3, 4, 1, 2), (3, 4), (1, 2))},
                            {T0: LeaderIsrAndControllerEpoch(current, 5)})
    return state.decide_reassignment_completion(T0, current)


def test_completion_keeps_a_leader_that_is_a_target_and_drops_the_leaving_replicas_from_the_isr():
    assert completion(LeaderAndIsr(3, 7, (1, 2, 3, 4))) == LeaderAndIsr(3, 8, (3, 4))


def test_completion_moves_the_lead_to_the_first_in_sync_target():
    assert completion(LeaderAndIsr(1, 7, (1, 2, 4, 3))) == LeaderAndIsr(3, 8, (4, 3))


def test_completion_without_a_live_in_sync_target_fails():
    assert isinstance(completion(LeaderAndIsr(1, 7, (1, 2)), live=(1, 2)), EligibleLeadersNotAvailableError)


def test_the_auto_rebalance_picks_brokers_leading_too_few_of_their_preferred_partitions():
    partitions = {TopicPartition("t", p): ReplicaAssignment((1, 2)) for p in range(10)}
    led_by_2 = {TopicPartition("t", p) for p in range(2)}
    states = {tp: LeaderIsrAndControllerEpoch(LeaderAndIsr(2 if tp in led_by_2 else 1, 3, (1, 2)), 5)
              for tp in partitions}
    state = ControllerState(1, 5, 5, {1: BrokerInfo(1, ()), 2: BrokerInfo(2, ())}, partitions, states)
    assert state.preferred_leader_imbalance(10) == {1: sorted(led_by_2)}  # 20 % not led by broker 1
    assert state.preferred_leader_imbalance(20) == {}
    assert state.preferred_leader_imbalance(10, excluded_topics={"t"}) == {}
