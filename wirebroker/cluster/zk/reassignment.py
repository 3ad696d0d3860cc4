"""Partition reassignment (KIP-455) as the ZooKeeper-era controller runs it (KafkaController.onPartitionReassignment).

For a partition with original replicas ORS moving to target replicas TRS:

1. The assignment in /brokers/topics/<topic> becomes RS = TRS + (ORS - TRS), with `adding_replicas` TRS - ORS and
   `removing_replicas` ORS - TRS (fenced by the controller epoch). The leader epoch moves and LeaderAndIsr with RS
   goes to every replica: the new ones create the partition and fetch from the leader, which adds them to the ISR
   (AlterPartition) once they have caught up.
2. When every target replica is in the ISR, the reassignment completes: a target replica leads (the current leader
   if it is one, else the first live in-sync target), the leaving replicas drop out of the ISR, the leader epoch
   moves again, LeaderAndIsr goes to the targets, StopReplica with deletion to the leaving replicas, and the
   assignment becomes TRS alone.

A new target for a partition under reassignment starts over from its original replicas; cancelling (a null target)
is a reassignment back to them. Kafka checks completion whenever the ISR changes; so does the controller here
(after every AlterPartition it writes) and when it takes office.

Runs on the controller's event thread, on its ControllerState.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from kazoo.client import KazooClient

from wirebroker.cluster.zk.controller_state import ControllerState
from wirebroker.cluster.zk.data import LeaderIsrAndControllerEpoch, ReplicaAssignment, TopicAssignment
from wirebroker.cluster.zk.topics import get_topic_assignment, set_topic_assignment
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    InvalidReplicaAssignmentError,
    KafkaError,
    NoReassignmentInProgressError,
    UnknownTopicOrPartitionError,
)

log = logging.getLogger(__name__)

Target = Sequence[int] | None  # the target replicas, or None to cancel


class RequestSender(Protocol):
    """What the reassignments need of the controller: its requests to the brokers."""

    def send_leader_and_isr(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]) -> None: ...

    def send_update_metadata_to_all(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]) -> None: ...

    def send_stop_replica(self, broker_id: int, partitions: Mapping[TopicPartition, int], delete: bool) -> None: ...


def reassignment_of(current: ReplicaAssignment, target: Sequence[int]) -> ReplicaAssignment:
    """Kafka's ReplicaAssignment.fromOldAndNewReplicas, from the partition's original replicas."""
    original = [r for r in current.replicas if r not in current.adding_replicas]
    return ReplicaAssignment(tuple(dict.fromkeys([*target, *original])),
                             tuple(r for r in target if r not in original),
                             tuple(r for r in original if r not in target))


class PartitionReassignments:
    def __init__(self, zk: KazooClient, state: ControllerState, sender: RequestSender) -> None:
        self.zk = zk
        self.state = state
        self.sender = sender

    def alter(self, targets: Mapping[TopicPartition, Target]) -> dict[TopicPartition, KafkaError | None]:
        """Start, change or cancel reassignments; per partition None (accepted) or the error."""
        answers: dict[TopicPartition, KafkaError | None] = {}
        started = {}
        for tp, target in targets.items():
            try:
                started[tp] = self._reassignment(tp, target)
                answers[tp] = None
            except KafkaError as exc:
                answers[tp] = exc
        for tp, assignment in started.items():
            log.info("Controller %d: reassigning %s to %s (replicas %s, adding %s, removing %s)",
                     self.state.controller_id, tp, list(assignment.target_replicas), list(assignment.replicas),
                     list(assignment.adding_replicas), list(assignment.removing_replicas))
            self.state.assignments[tp] = assignment
        self._write_assignments({tp.topic for tp in started})
        moving = [tp for tp, a in started.items() if a.adding_replicas or a.removing_replicas]
        result = self.state.on_reassignment_started(self.zk, moving)
        self.sender.send_leader_and_isr(result.written)
        self.sender.send_update_metadata_to_all(result.written)
        self.complete_caught_up(moving)
        return answers

    def _reassignment(self, tp: TopicPartition, target: Target) -> ReplicaAssignment:
        current = self.state.assignments.get(tp)
        if current is None or tp not in self.state.partition_states:
            raise UnknownTopicOrPartitionError(f"Unable to find partition {tp.topic}:{tp.partition}.")
        in_progress = bool(current.adding_replicas or current.removing_replicas)
        if target is None:
            if not in_progress:
                raise NoReassignmentInProgressError()
            target = [r for r in current.replicas if r not in current.adding_replicas]  # back to the original
        dead = [r for r in target if r not in self.state.live_brokers]
        if dead:
            raise InvalidReplicaAssignmentError(f"Replica assignment has brokers that are not alive. Replica list: "
                                                f"{list(target)}, live broker list: {sorted(self.state.live_brokers)}")
        return reassignment_of(current, target)

    def ongoing(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, ReplicaAssignment]:
        candidates = self.state.assignments if partitions is None else partitions
        return {tp: self.state.assignments[tp] for tp in candidates if tp in self.state.assignments
                and (self.state.assignments[tp].adding_replicas or self.state.assignments[tp].removing_replicas)}

    def complete_caught_up(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Complete the reassignments (of `partitions`, else all) whose target replicas are all in the ISR."""
        ready = [tp for tp, a in sorted(self.ongoing(partitions).items()) if tp in self.state.partition_states
                 and set(a.target_replicas) <= set(self.state.partition_states[tp].leader_and_isr.isr)]
        if not ready:
            return
        result = self.state.on_reassignment_completed(self.zk, ready)
        for tp, error in result.failed.items():
            log.warning("Controller %d could not complete the reassignment of %s: %s", self.state.controller_id, tp,
                        error)
        leaving: dict[int, dict[TopicPartition, int]] = {}
        for tp, written in result.written.items():
            assignment = self.state.assignments[tp]
            for replica in assignment.removing_replicas:
                leaving.setdefault(replica, {})[tp] = written.leader_and_isr.leader_epoch
            self.state.assignments[tp] = ReplicaAssignment(assignment.target_replicas)
            log.info("Controller %d: reassignment of %s to %s completed", self.state.controller_id, tp,
                     list(assignment.target_replicas))
        self._write_assignments({tp.topic for tp in result.written})
        self.sender.send_leader_and_isr(result.written)
        for broker_id, stopped in sorted(leaving.items()):
            if broker_id in self.state.live_brokers:
                self.sender.send_stop_replica(broker_id, stopped, delete=True)
        self.sender.send_update_metadata_to_all(result.written)

    def _write_assignments(self, topics: Collection[str]) -> None:
        """The controller's assignments of `topics` into /brokers/topics (the topic id kept as stored)."""
        for topic in sorted(topics):
            stored = get_topic_assignment(self.zk, topic)
            if stored is None:
                continue
            partitions = {tp.partition: a for tp, a in self.state.assignments.items() if tp.topic == topic}
            set_topic_assignment(self.zk, topic, TopicAssignment(stored.topic_id, partitions),
                                 self.state.epoch_zk_version)
