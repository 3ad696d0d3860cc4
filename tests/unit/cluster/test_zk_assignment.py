"""Replica assignment: Kafka's AdminTest/AdminRackAwareTest examples and the distribution checks of its
RackAwareTest.checkReplicaDistribution."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from wirebroker.cluster.zk.assignment import BrokerMetadata, assign_replicas_to_brokers, rack_alternated_broker_list
from wirebroker.protocol.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)


def brokers(racks: dict[int, str]) -> list[BrokerMetadata]:
    return [BrokerMetadata(broker_id, rack) for broker_id, rack in sorted(racks.items())]


def check_distribution(assignment: dict[int, list[int]], racks: dict[int, str], partitions: int,
                       replication_factor: int, even_leaders: bool = True, even_replicas: bool = True) -> None:
    """Kafka's checkReplicaDistribution: every partition spans min(RF, racks) racks without repeating a broker;
    leaders and replicas are spread evenly over the brokers."""
    assert sorted(assignment) == list(range(partitions))
    num_racks = len(set(racks.values()))
    for replicas in assignment.values():
        assert len(replicas) == replication_factor
        assert len(set(replicas)) == replication_factor
        assert len({racks[r] for r in replicas}) == min(replication_factor, num_racks)
    if even_leaders:
        leaders = Counter(replicas[0] for replicas in assignment.values())
        assert set(leaders.values()) == {partitions // len(racks)}
    if even_replicas:
        counts = Counter(r for replicas in assignment.values() for r in replicas)
        assert set(counts.values()) == {partitions * replication_factor // len(racks)}


def test_rack_unaware_matches_kafkas_example():
    assignment = assign_replicas_to_brokers([BrokerMetadata(i) for i in range(5)], 10, 3, fixed_start_index=0)
    assert assignment == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }


def test_rack_alternated_list_and_rack_aware_assignment_match_kafkas_example():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({k: v for k, v in racks.items() if k != 5}) == [0, 3, 1, 4, 2]
    assignment = assign_replicas_to_brokers(brokers(racks), 7, 3, fixed_start_index=0, start_partition_id=0)
    assert assignment == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                          6: [0, 4, 2]}


RACKS_2_2_2 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


@pytest.mark.parametrize(("partitions", "replication_factor", "start"), [
    (6, 3, 2),     # testAssignmentWithRackAware
    (6, 3, -1),    # ... with a random start
    (12, 2, -1),   # testAssignmentWith2ReplicasRackAware
    (6, 2, -1),    # ... with 6 partitions
])
def test_rack_aware_assignment_is_even(partitions, replication_factor, start):
    assignment = assign_replicas_to_brokers(brokers(RACKS_2_2_2), partitions, replication_factor,
                                            fixed_start_index=start, rng=random.Random(7))
    check_distribution(assignment, RACKS_2_2_2, partitions, replication_factor)


def test_rack_aware_uneven_replicas_still_spans_racks():
    assignment = assign_replicas_to_brokers(brokers(RACKS_2_2_2), 13, 3, fixed_start_index=0, start_partition_id=0)
    check_distribution(assignment, RACKS_2_2_2, 13, 3, even_leaders=False, even_replicas=False)


def test_rack_aware_uneven_racks_spreads_leaders():
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    assignment = assign_replicas_to_brokers(brokers(racks), 12, 3, rng=random.Random(3))
    check_distribution(assignment, racks, 12, 3, even_replicas=False)


def test_rack_aware_expansion_numbers_from_the_start_partition():
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    assignment = assign_replicas_to_brokers(brokers(racks), 12, 2, start_partition_id=12, rng=random.Random(5))
    assert sorted(assignment) == list(range(12, 24))
    check_distribution({p - 12: r for p, r in assignment.items()}, racks, 12, 2)


def test_large_number_of_partitions():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
             6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"}
    check_distribution(assign_replicas_to_brokers(brokers(racks), 96, 3, rng=random.Random(1)), racks, 96, 3)


def test_more_replicas_than_racks_covers_every_rack():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    for replicas in assign_replicas_to_brokers(brokers(racks), 6, 5, rng=random.Random(2)).values():
        assert len(replicas) == 5 and len(set(replicas)) == 5
        assert len({racks[r] for r in replicas}) == 3


def test_fewer_replicas_than_racks_puts_each_on_its_own_rack():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    for replicas in assign_replicas_to_brokers(brokers(racks), 6, 2, rng=random.Random(2)).values():
        assert len({racks[r] for r in replicas}) == 2


def test_single_rack_leads_evenly():
    racks = dict.fromkeys(range(6), "rack1")
    assignment = assign_replicas_to_brokers(brokers(racks), 6, 3, rng=random.Random(4))
    assert Counter(replicas[0] for replicas in assignment.values()) == Counter(range(6))


def test_skips_broker_with_replica_already_assigned():
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    for replicas in assign_replicas_to_brokers(brokers(racks), 6, 4, fixed_start_index=2).values():
        assert len(set(replicas)) == 4


def test_invalid_arguments_are_kafkas_errors():
    five = [BrokerMetadata(i) for i in range(5)]
    with pytest.raises(InvalidReplicationFactorError):
        assign_replicas_to_brokers(five, 10, 0)
    with pytest.raises(InvalidReplicationFactorError, match="larger than available brokers: 5"):
        assign_replicas_to_brokers(five, 10, 6)
    with pytest.raises(InvalidPartitionsError):
        assign_replicas_to_brokers(five, 0, 1)
    with pytest.raises(InvalidReplicaAssignmentError, match="Not all brokers have rack information"):
        assign_replicas_to_brokers([BrokerMetadata(0, "a"), BrokerMetadata(1)], 1, 1)


def test_one_broker_one_replica():
    assert assign_replicas_to_brokers([BrokerMetadata(3)], 2, 1) == {0: [3], 1: [3]}
