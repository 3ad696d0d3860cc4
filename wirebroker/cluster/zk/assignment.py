"""Replica assignment for new topics and partitions (Kafka's AdminUtils.assignReplicasToBrokers), a pure function.

Goals, in Kafka's words: spread the replicas evenly among brokers; for the partitions led by one broker, spread
their other replicas over the other brokers; and when every broker has a rack, put each partition's replicas on
different racks where possible.

Without racks: the first replica of partition p goes to broker `(p + start_index) % n` (round robin from a random
start), and replica j+1 to the broker `1 + (shift + j) % (n - 1)` places further on, the shift growing by one after
every n partitions so that the followers of one broker's partitions differ from round to round.

With racks: the same round robin runs over a rack-alternated broker list (one broker of each rack in turn, racks
sorted by name, brokers by id); a follower is skipped while its rack already holds a replica and some rack holds
none, or while it holds a replica already and some broker holds none. Brokers are expected sorted by id, as Kafka
passes them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wirebroker.protocol.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
)


@dataclass(frozen=True)
class BrokerMetadata:
    broker_id: int
    rack: str | None = None


def assign_replicas_to_brokers(brokers: Sequence[BrokerMetadata], partitions: int, replication_factor: int,
                               fixed_start_index: int = -1, start_partition_id: int = -1,
                               rng: random.Random | None = None) -> dict[int, list[int]]:
    """Partition id -> replica broker ids (the first replica is the preferred leader).

    `fixed_start_index` >= 0 fixes the random start (tests, and CreatePartitions, which continues from the broker of
    partition 0's first replica); `start_partition_id` numbers the new partitions from an existing count.
    """
    if partitions <= 0:
        raise InvalidPartitionsError("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError("Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    racks = {b.broker_id: b.rack for b in brokers if b.rack is not None}
    if racks and len(racks) != len(brokers):
        # Kafka raises AdminOperationException, which reaches clients as UNKNOWN_SERVER_ERROR; the code named here
        # tells them what to fix.
        raise InvalidReplicaAssignmentError("Not all brokers have rack information for replica rack aware assignment.")
    broker_list = rack_alternated_broker_list(racks) if racks else [b.broker_id for b in brokers]
    rng = rng or random.Random()
    n = len(broker_list)
    start_index = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    next_replica_shift = fixed_start_index if fixed_start_index >= 0 else rng.randrange(n)
    assignment = {}
    partition_id = max(0, start_partition_id)
    for _ in range(partitions):
        if partition_id > 0 and partition_id % n == 0:
            next_replica_shift += 1
        first = (partition_id + start_index) % n
        followers = (_rack_aware_followers(broker_list, racks, first, next_replica_shift, replication_factor) if racks
                     else _unaware_followers(broker_list, first, next_replica_shift, replication_factor))
        assignment[partition_id] = [broker_list[first], *followers]
        partition_id += 1
    return assignment


def _unaware_followers(broker_list: list[int], first: int, shift: int, replication_factor: int) -> list[int]:
    return [broker_list[_replica_index(first, shift, j, len(broker_list))] for j in range(replication_factor - 1)]


def _rack_aware_followers(broker_list: list[int], racks: Mapping[int, str], first: int, shift: int,
                          replication_factor: int) -> list[int]:
    num_racks = len(set(racks.values()))
    leader = broker_list[first]
    racks_with_replicas = {racks[leader]}
    brokers_with_replicas = {leader}
    followers = []
    k = 0
    for _ in range(replication_factor - 1):
        while True:
            broker = broker_list[_replica_index(first, shift * num_racks, k, len(broker_list))]
            rack = racks[broker]
            k += 1
            if ((rack not in racks_with_replicas or len(racks_with_replicas) == num_racks)
                    and (broker not in brokers_with_replicas or len(brokers_with_replicas) == len(broker_list))):
                followers.append(broker)
                racks_with_replicas.add(rack)
                brokers_with_replicas.add(broker)
                break
    return followers


def rack_alternated_broker_list(racks: Mapping[int, str]) -> list[int]:
    """Brokers taken one rack at a time: racks {a: [0, 1], b: [2]} give [0, 2, 1]."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker_id)
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack)]
    result: list[int] = []
    depth = 0
    while len(result) < len(racks):
        result.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return result


def _replica_index(first_replica_index: int, second_replica_shift: int, replica_index: int, n: int) -> int:
    shift = 1 + (second_replica_shift + replica_index) % (n - 1)
    return (first_replica_index + shift) % n
