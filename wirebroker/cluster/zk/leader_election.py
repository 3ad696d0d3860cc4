"""Leader election rules of Kafka's ZooKeeper-era controller (PartitionLeaderElectionAlgorithms and the state
changes PartitionStateMachine and ReplicaStateMachine build from them), as pure functions.

Each rule picks a leader, or None, from a partition's assignment (the preferred order), its ISR and the replicas
on live brokers; the `leader_for_*` functions turn that into the partition's next LeaderAndIsr, with the leader
epoch bumped. The ISR is never left empty: when its last member goes, it stays as the only member (with no leader)
so that a clean election can pick it when it returns.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from wirebroker.cluster.zk.data import LEADER_RECOVERY_RECOVERING, NO_LEADER, LeaderAndIsr


def offline_partition_leader_election(assignment: Sequence[int], isr: Collection[int], live_replicas: Collection[int],
                                      unclean_leader_election_enable: bool) -> int | None:
    """The first live ISR member in assignment order; else, with `unclean.leader.election.enable`, the first live
    replica (which may lack acknowledged records)."""
    leader = next((r for r in assignment if r in live_replicas and r in isr), None)
    if leader is None and unclean_leader_election_enable:
        leader = next((r for r in assignment if r in live_replicas), None)
    return leader


def reassign_partition_leader_election(reassignment: Sequence[int], isr: Collection[int],
                                       live_replicas: Collection[int]) -> int | None:
    """The first live ISR member of the reassignment's target replicas."""
    return next((r for r in reassignment if r in live_replicas and r in isr), None)


def preferred_replica_partition_leader_election(assignment: Sequence[int], isr: Collection[int],
                                                live_replicas: Collection[int]) -> int | None:
    """The first assigned replica, if it is live and in the ISR."""
    if assignment and assignment[0] in live_replicas and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(assignment: Sequence[int], isr: Collection[int],
                                                  live_replicas: Collection[int],
                                                  shutting_down: Collection[int]) -> int | None:
    """The first live ISR member, in assignment order, whose broker is not shutting down."""
    return next((r for r in assignment if r in live_replicas and r in isr and r not in shutting_down), None)


def leader_for_offline(assignment: Sequence[int], current: LeaderAndIsr, live_brokers: Collection[int],
                       unclean_leader_election_enable: bool) -> LeaderAndIsr | None:
    """A partition whose leader is gone: the new leader keeps the live part of the ISR; a leader from outside the
    ISR (unclean) starts a new ISR of itself and is marked RECOVERING until it has recovered its log."""
    live_replicas = [r for r in assignment if r in live_brokers]
    leader = offline_partition_leader_election(assignment, current.isr, live_replicas, unclean_leader_election_enable)
    if leader is None:
        return None
    if leader in current.isr:
        return current.new_leader_and_isr(leader, [r for r in current.isr if r in live_brokers])
    return replace(current.new_leader_and_isr(leader, [leader]), leader_recovery_state=LEADER_RECOVERY_RECOVERING)


def leader_for_reassignment(target_replicas: Sequence[int], current: LeaderAndIsr,
                            live_brokers: Collection[int]) -> LeaderAndIsr | None:
    leader = reassign_partition_leader_election(target_replicas, current.isr, live_brokers)
    return None if leader is None else current.new_leader(leader)


def leader_for_preferred_replica(assignment: Sequence[int], current: LeaderAndIsr,
                                 live_brokers: Collection[int]) -> LeaderAndIsr | None:
    leader = preferred_replica_partition_leader_election(assignment, current.isr, live_brokers)
    return None if leader is None else current.new_leader(leader)


def leader_for_controlled_shutdown(assignment: Sequence[int], current: LeaderAndIsr, live_brokers: Collection[int],
                                   shutting_down: Collection[int]) -> LeaderAndIsr | None:
    """Leadership moves off the brokers shutting down, and they leave the ISR."""
    leader = controlled_shutdown_partition_leader_election(assignment, current.isr, live_brokers, shutting_down)
    if leader is None:
        return None
    return current.new_leader_and_isr(leader, [r for r in current.isr if r not in shutting_down])


def remove_replicas_from_isr(current: LeaderAndIsr, replicas: Collection[int]) -> LeaderAndIsr:
    """Replicas that went offline leave the ISR (Kafka's OfflineReplica transition); a leader among them leaves the
    partition without one. When no member would remain, the last leader (else the first member) stays."""
    leader = NO_LEADER if current.leader in replicas else current.leader
    isr = [r for r in current.isr if r not in replicas]
    if not isr:
        isr = [current.leader] if current.leader in current.isr else list(current.isr[:1])
    return current.new_leader_and_isr(leader, isr)


def initial_leader_and_isr(assignment: Sequence[int], live_brokers: Collection[int]) -> LeaderAndIsr | None:
    """A new partition: the first live replica leads, every live replica is in the ISR (Kafka's
    initializeLeaderAndIsrForPartitions); None while no replica is live."""
    live_replicas = [r for r in assignment if r in live_brokers]
    if not live_replicas:
        return None
    return LeaderAndIsr(live_replicas[0], 0, tuple(live_replicas))
