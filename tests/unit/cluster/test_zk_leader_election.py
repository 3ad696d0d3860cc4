"""Leader election rules (Kafka's PartitionLeaderElectionAlgorithms and its PartitionLeaderElectionAlgorithmsTest
cases) and the LeaderAndIsr changes built from them."""

from __future__ import annotations

from wirebroker.cluster.zk.data import LEADER_RECOVERY_RECOVERING, NO_LEADER, LeaderAndIsr
from wirebroker.cluster.zk.leader_election import (
    controlled_shutdown_partition_leader_election,
    initial_leader_and_isr,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    leader_for_reassignment,
    offline_partition_leader_election,
    preferred_replica_partition_leader_election,
    reassign_partition_leader_election,
    remove_replicas_from_isr,
)


def test_offline_election_picks_first_live_isr_member_in_assignment_order():
    assert offline_partition_leader_election([2, 4], [4], {2, 4}, False) == 4


def test_offline_election_without_live_isr_member_fails_when_unclean_is_off():
    assert offline_partition_leader_election([2, 4], [], {4}, False) is None


def test_offline_election_without_live_isr_member_takes_a_live_replica_when_unclean_is_on():
    assert offline_partition_leader_election([2, 4], [], {4}, True) == 4


def test_offline_election_fails_with_no_live_replica_even_when_unclean():
    assert offline_partition_leader_election([2, 4], [2], set(), True) is None


def test_reassign_election_follows_the_reassignment_order():
    assert reassign_partition_leader_election([2, 4], [2, 4], {2, 4}) == 2
    assert reassign_partition_leader_election([2, 4], [4], {2, 4}) == 4
    assert reassign_partition_leader_election([2, 4], [2, 4], set()) is None


def test_preferred_election_takes_only_the_first_replica():
    assert preferred_replica_partition_leader_election([2, 4], [2, 4], {2, 4}) == 2
    assert preferred_replica_partition_leader_election([2, 4], [4], {2, 4}) is None
    assert preferred_replica_partition_leader_election([2, 4], [2, 4], {4}) is None


def test_controlled_shutdown_election_skips_brokers_shutting_down():
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2}) == 4
    assert controlled_shutdown_partition_leader_election([2, 4], [2, 4], {2, 4}, {2, 4}) is None
    assert controlled_shutdown_partition_leader_election([2, 4], [2], {2, 4}, {2}) is None


def test_leader_for_offline_keeps_the_live_isr_and_bumps_the_leader_epoch():
    current = LeaderAndIsr(leader=1, leader_epoch=5, isr=(1, 2, 3), partition_epoch=9)
    new = leader_for_offline([1, 2, 3], current, {2, 3}, False)
    assert new == LeaderAndIsr(leader=2, leader_epoch=6, isr=(2, 3), partition_epoch=9)


def test_unclean_leader_starts_a_new_isr_and_recovers():
    current = LeaderAndIsr(leader=1, leader_epoch=5, isr=(1,))
    new = leader_for_offline([1, 2, 3], current, {3}, True)
    assert (new.leader, new.leader_epoch, new.isr) == (3, 6, (3,))
    assert new.leader_recovery_state == LEADER_RECOVERY_RECOVERING
    assert leader_for_offline([1, 2, 3], current, {3}, False) is None


def test_leader_for_reassignment_and_preferred_keep_the_isr():
    current = LeaderAndIsr(leader=3, leader_epoch=1, isr=(3, 1, 2))
    assert leader_for_reassignment([1, 4], current, {1, 2, 3, 4}) == LeaderAndIsr(1, 2, (3, 1, 2))
    assert leader_for_preferred_replica([1, 2, 3], current, {1, 2, 3}) == LeaderAndIsr(1, 2, (3, 1, 2))
    assert leader_for_preferred_replica([1, 2, 3], current, {2, 3}) is None


def test_leader_for_controlled_shutdown_removes_the_leaving_broker_from_the_isr():
    current = LeaderAndIsr(leader=1, leader_epoch=4, isr=(1, 2, 3))
    assert leader_for_controlled_shutdown([1, 2, 3], current, {1, 2, 3}, {1}) == LeaderAndIsr(2, 5, (2, 3))


def test_removing_a_follower_keeps_the_leader():
    current = LeaderAndIsr(leader=1, leader_epoch=4, isr=(1, 2, 3))
    assert remove_replicas_from_isr(current, {3}) == LeaderAndIsr(1, 5, (1, 2))


def test_removing_the_leader_leaves_no_leader():
    current = LeaderAndIsr(leader=1, leader_epoch=4, isr=(1, 2))
    assert remove_replicas_from_isr(current, {1}) == LeaderAndIsr(NO_LEADER, 5, (2,))


def test_the_isr_is_never_emptied():
    assert remove_replicas_from_isr(LeaderAndIsr(1, 4, (1,)), {1}) == LeaderAndIsr(NO_LEADER, 5, (1,))
    # every member gone at once: the last leader stays, it holds every acknowledged record
    assert remove_replicas_from_isr(LeaderAndIsr(2, 4, (1, 2, 3)), {1, 2, 3}) == LeaderAndIsr(NO_LEADER, 5, (2,))


def test_initial_leader_is_the_first_live_replica():
    assert initial_leader_and_isr([3, 1, 2], {1, 2}) == LeaderAndIsr(1, 0, (1, 2))
    assert initial_leader_and_isr([3], {1, 2}) is None
