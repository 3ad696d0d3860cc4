"""A partition leader's ISR changes (AlterPartition) as the ZooKeeper-era controller checks and writes them (Kafka's
KafkaController.processAlterPartition).

The leader proposes an ISR based on the leader epoch and partition epoch it knows. The controller refuses a stale
proposal (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION), one from a broker that does not lead the partition
(NOT_LEADER_OR_FOLLOWER) or naming replicas that cannot join (INELIGIBLE_REPLICA), answers a retry of what is already
written with the current state, and writes the rest with the leader epoch unchanged: a compare-and-set on the state
znode's version (the partition epoch), fenced by the controller epoch. A write that lost a race answers
INVALID_UPDATE_VERSION and the partition's state is read again.

Runs on the controller's event thread, on its ControllerState.
"""

from __future__ import annotations

import logging

from kazoo.client import KazooClient

from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import LeaderAndIsr, LeaderIsrAndControllerEpoch
from wirebroker.cluster.zk.partition_state import get_partition_states, update_leader_and_isr
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    FencedLeaderEpochError,
    IneligibleReplicaError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    KafkaError,
    NotControllerError,
    NotLeaderOrFollowerError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)

log = logging.getLogger(__name__)

IsrChange = tuple[TopicPartition, int, LeaderAndIsr]  # (partition, requesting leader, requested state)
IsrChangeResult = dict[TopicPartition, LeaderAndIsr | KafkaError]  # per partition the state written, or the error


def write_isr_changes(zk: KazooClient, state: ControllerState, changes: list[IsrChange]
                      ) -> tuple[IsrChangeResult, dict[TopicPartition, LeaderIsrAndControllerEpoch]]:
    """Check and write `changes`; returns the answer per partition and the states written."""
    results: IsrChangeResult = {}
    updates = {}
    for tp, leader, requested in changes:
        verdict = check_isr_change(state, tp, leader, requested)
        if verdict is not None:
            results[tp] = verdict
        else:
            current = state.partition_states[tp].leader_and_isr
            updates[tp] = LeaderAndIsr(current.leader, current.leader_epoch, requested.isr,
                                       requested.leader_recovery_state, current.partition_epoch)
    outcome = update_leader_and_isr(zk, updates, state.epoch, state.epoch_zk_version)
    written = {}
    for tp, new in outcome.finished.items():
        before = state.partition_states[tp].leader_and_isr
        written[tp] = state.partition_states[tp] = LeaderIsrAndControllerEpoch(new, state.epoch)
        results[tp] = new
        log.info("Controller %d epoch %d: ISR of %s changed by its leader %d from %s to %s (leader epoch %d, "
                 "partition epoch %d -> %d)", state.controller_id, state.epoch, tp, new.leader, list(before.isr),
                 list(new.isr), new.leader_epoch, before.partition_epoch, new.partition_epoch)
    for tp, error in outcome.failed.items():
        results[tp] = UnknownServerError(f"Writing the ISR of {tp} failed: {error!r}")
    for tp in outcome.retry:
        results[tp] = InvalidUpdateVersionError(f"The state of {tp} changed while it was written")
    state.partition_states.update(get_partition_states(zk, outcome.retry))
    return results, written


def check_isr_change(state: ControllerState, tp: TopicPartition, leader: int,
                     requested: LeaderAndIsr) -> LeaderAndIsr | KafkaError | None:
    """Kafka's validation of one AlterPartition entry (processAlterPartition), in its order: an error, the current
    state when it already is the requested one (a retry), or None to write it."""
    current_state = state.partition_states.get(tp)
    if current_state is None:
        return UnknownTopicOrPartitionError(f"Partition {tp} is unknown to the controller")
    current = current_state.leader_and_isr
    if requested.partition_epoch > current.partition_epoch or requested.leader_epoch > current.leader_epoch:
        # The leader saw a newer state than this controller: it is likely no longer the controller.
        return NotControllerError(f"{tp} is ahead of controller {state.controller_id}'s view")
    if requested.leader_epoch < current.leader_epoch:
        return FencedLeaderEpochError(f"Leader epoch {requested.leader_epoch} of {tp} is older than "
                                      f"{current.leader_epoch}")
    if leader != current.leader:
        return NotLeaderOrFollowerError(f"Broker {leader} is not the leader of {tp} (broker {current.leader} is)")
    if (tuple(requested.isr) == tuple(current.isr)
            and requested.leader_recovery_state == current.leader_recovery_state):
        return current
    if requested.partition_epoch < current.partition_epoch:
        return InvalidUpdateVersionError(f"Partition epoch {requested.partition_epoch} of {tp} is older than "
                                         f"{current.partition_epoch}")
    if requested.leader_recovery_state > current.leader_recovery_state:
        return InvalidRequestError(f"{tp} cannot go back to RECOVERING")
    ineligible = [r for r in requested.isr if r not in state.live_brokers or r in state.shutting_down_brokers
                  or r not in state.assignments[tp].replicas]
    if ineligible:
        return IneligibleReplicaError(f"Replicas {ineligible} of {tp} cannot join the ISR: not live or not "
                                      f"assigned")
    return None
