"""The controller's view of the cluster and the partition changes it makes (Kafka's ControllerContext with the parts
of KafkaController, PartitionStateMachine and ReplicaStateMachine that decide leaders and ISRs).

Each `on_*` method decides the next LeaderAndIsr of every partition an event touches (leader_election.py), writes
them (partition_state.py: compare-and-set on the partition epoch, fenced by the controller epoch, so a stale
controller gets ControllerMovedError and writes nothing), re-reads and decides again the partitions whose state
another writer changed meanwhile, and keeps what was written. The returned ElectionResult holds the states written,
which are what LeaderAndIsr and UpdateMetadata requests carry to the brokers, and the partitions that failed, with
the error an ElectLeaders answer gives for them.

Owned by one thread, the controller's (Kafka's controller event thread): nothing here takes a lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from kazoo.client import KazooClient

from wirebroker.cluster.zk.assignment import BrokerMetadata
from wirebroker.cluster.zk.brokers import get_live_brokers
from wirebroker.cluster.zk.data import (
    NO_LEADER,
    BrokerInfo,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
)
from wirebroker.cluster.zk.errors import ControllerMovedError
from wirebroker.cluster.zk.leader_election import (
    initial_leader_and_isr,
    leader_for_controlled_shutdown,
    leader_for_offline,
    leader_for_preferred_replica,
    reassign_partition_leader_election,
    remove_replicas_from_isr,
)
from wirebroker.cluster.zk.partition_state import (
    create_partition_states,
    get_partition_states,
    update_leader_and_isr,
)
from wirebroker.cluster.zk.topics import get_all_topic_assignments
from wirebroker.log.files import TopicPartition
from wirebroker.protocol.errors import (
    ElectionNotNeededError,
    EligibleLeadersNotAvailableError,
    KafkaError,
    LeaderNotAvailableError,
    PreferredLeaderNotAvailableError,
)

log = logging.getLogger(__name__)

MAX_UPDATE_ROUNDS = 10  # rounds of re-reading partitions whose partition epoch moved under the controller's write
Decision = LeaderAndIsr | KafkaError | None  # the next state, a failure (nothing written), or no change


@dataclass
class ElectionResult:
    written: dict[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    failed: dict[TopicPartition, Exception] = field(default_factory=dict)

    @property
    def offline(self) -> list[TopicPartition]:
        """Partitions written without a leader: none of their in-sync replicas is alive."""
        return [tp for tp, state in self.written.items() if state.leader_and_isr.leader == NO_LEADER]


class ControllerState:
    def __init__(self, controller_id: int, epoch: int, epoch_zk_version: int,
                 live_brokers: Mapping[int, BrokerInfo],
                 assignments: Mapping[TopicPartition, ReplicaAssignment],
                 partition_states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                 unclean_leader_election_enable: Callable[[str], bool] = lambda topic: False) -> None:
        self.controller_id = controller_id
        self.epoch = epoch
        self.epoch_zk_version = epoch_zk_version
        self.live_brokers = dict(live_brokers)
        self.shutting_down_brokers: set[int] = set()
        self.assignments = dict(assignments)
        self.partition_states = dict(partition_states)
        self.unclean_leader_election_enable = unclean_leader_election_enable

    @classmethod
    def load(cls, zk: KazooClient, controller_id: int, epoch: int, epoch_zk_version: int,
             unclean_leader_election_enable: Callable[[str], bool] = lambda topic: False) -> ControllerState:
        """What a newly elected controller reads (Kafka's initializeControllerContext)."""
        assignments = {
            TopicPartition(topic, partition): replicas
            for topic, assignment in get_all_topic_assignments(zk).items()
            for partition, replicas in assignment.partitions.items()
        }
        return cls(controller_id, epoch, epoch_zk_version, get_live_brokers(zk), assignments,
                   get_partition_states(zk, assignments), unclean_leader_election_enable)

    def broker_metadatas(self) -> list[BrokerMetadata]:
        """The live brokers as replica assignment takes them: sorted by id, with their racks."""
        return [BrokerMetadata(b.broker_id, b.rack) for _, b in sorted(self.live_brokers.items())]

    def partitions_led_by(self, broker_id: int) -> list[TopicPartition]:
        return sorted(tp for tp, state in self.partition_states.items() if state.leader_and_isr.leader == broker_id)

    def offline_partitions(self) -> list[TopicPartition]:
        """Partitions without a live leader."""
        return sorted(tp for tp, state in self.partition_states.items()
                      if state.leader_and_isr.leader not in self.live_brokers)

    def on_new_partitions(self, zk: KazooClient, assignments: Mapping[TopicPartition, ReplicaAssignment]
                          ) -> ElectionResult:
        """New topics or partitions: the first live replica leads, the live replicas form the ISR."""
        self.assignments.update(assignments)
        result = ElectionResult()
        states = {}
        for tp, assignment in assignments.items():
            state = initial_leader_and_isr(assignment.replicas, self.live_brokers)
            if state is None:
                result.failed[tp] = LeaderNotAvailableError(
                    f"No live replica of {tp} among {list(assignment.replicas)}: it stays without leader")
            else:
                states[tp] = state
        outcome = create_partition_states(zk, states, self.epoch, self.epoch_zk_version)
        self._record(result, outcome.finished, "new partition")
        result.failed.update(outcome.failed)
        return result

    def on_broker_failure(self, zk: KazooClient, dead_brokers: Iterable[int]) -> ElectionResult:
        """Brokers gone: their partitions elect new leaders from the live ISR members, and they leave every ISR."""
        dead = set(dead_brokers)
        for broker_id in dead:
            self.live_brokers.pop(broker_id, None)
            self.shutting_down_brokers.discard(broker_id)
        touched = [tp for tp, state in self.partition_states.items()
                   if state.leader_and_isr.leader in dead or dead & set(state.leader_and_isr.isr)]
        return self._apply(zk, touched, lambda tp, current: self.decide_after_broker_failure(tp, current, dead))

    def decide_after_broker_failure(self, tp: TopicPartition, current: LeaderAndIsr, dead: set[int]) -> Decision:
        if current.leader in dead or current.leader == NO_LEADER:
            elected = leader_for_offline(self.assignments[tp].replicas, current, self.live_brokers,
                                         self.unclean_leader_election_enable(tp.topic))
            if elected is not None:
                return elected
        if current.leader in dead or dead & set(current.isr):
            return remove_replicas_from_isr(current, dead)
        return None

    def on_broker_startup(self, zk: KazooClient, brokers: Iterable[BrokerInfo]) -> ElectionResult:
        """Brokers (re)joined: partitions without a leader try an election again (Kafka's
        triggerOnlinePartitionStateChange); the leaders add returning followers to their ISR themselves."""
        for info in brokers:
            self.live_brokers[info.broker_id] = info
            self.shutting_down_brokers.discard(info.broker_id)
        return self._apply(zk, self.offline_partitions(), self.decide_offline_election)

    def decide_offline_election(self, tp: TopicPartition, current: LeaderAndIsr) -> Decision:
        if current.leader in self.live_brokers:
            return None
        elected = leader_for_offline(self.assignments[tp].replicas, current, self.live_brokers,
                                     self.unclean_leader_election_enable(tp.topic))
        return elected or EligibleLeadersNotAvailableError(
            f"No live in-sync replica of {tp} (ISR {list(current.isr)}, live brokers {sorted(self.live_brokers)})")

    def on_controlled_shutdown(self, zk: KazooClient, broker_id: int) -> ElectionResult:
        """A broker asks to leave (ControlledShutdown): its leaderships move to other ISR members and it leaves the
        ISR of the partitions it follows. Partitions still led by it afterwards are in `failed`; the broker retries."""
        self.shutting_down_brokers.add(broker_id)
        touched = [tp for tp, state in self.partition_states.items()
                   if len(self.assignments[tp].replicas) > 1
                   and (state.leader_and_isr.leader == broker_id or broker_id in state.leader_and_isr.isr)]
        return self._apply(zk, touched, lambda tp, current: self.decide_controlled_shutdown(tp, current, broker_id))

    def decide_controlled_shutdown(self, tp: TopicPartition, current: LeaderAndIsr, broker_id: int) -> Decision:
        if current.leader == broker_id:
            elected = leader_for_controlled_shutdown(self.assignments[tp].replicas, current, self.live_brokers,
                                                     self.shutting_down_brokers)
            return elected or EligibleLeadersNotAvailableError(
                f"No other live in-sync replica of {tp} can take over from broker {broker_id} "
                f"(ISR {list(current.isr)})")
        if broker_id in current.isr and len(current.isr) > 1:
            return remove_replicas_from_isr(current, {broker_id})
        return None

    def elect_preferred_leaders(self, zk: KazooClient, partitions: Iterable[TopicPartition]) -> ElectionResult:
        """ElectLeaders (PREFERRED) and the auto leader rebalance: the first assigned replica takes the lead back."""
        return self._apply(zk, partitions, self.decide_preferred_election)

    def decide_preferred_election(self, tp: TopicPartition, current: LeaderAndIsr) -> Decision:
        replicas = self.assignments[tp].replicas
        if current.leader == replicas[0]:
            return ElectionNotNeededError(f"Leader election not needed for {tp}: broker {current.leader} leads")
        elected = leader_for_preferred_replica(replicas, current, self.live_brokers)
        return elected or PreferredLeaderNotAvailableError(
            f"The preferred leader {replicas[0]} of {tp} is not a live in-sync replica (ISR {list(current.isr)})")

    def elect_unclean_leaders(self, zk: KazooClient, partitions: Iterable[TopicPartition]) -> ElectionResult:
        """ElectLeaders (UNCLEAN): a partition without a live leader takes one, from outside the ISR if it must."""
        return self._apply(zk, partitions, self.decide_unclean_election)

    def decide_unclean_election(self, tp: TopicPartition, current: LeaderAndIsr) -> Decision:
        if current.leader in self.live_brokers:
            return ElectionNotNeededError(f"Leader election not needed for {tp}: broker {current.leader} leads")
        elected = leader_for_offline(self.assignments[tp].replicas, current, self.live_brokers, True)
        return elected or EligibleLeadersNotAvailableError(
            f"No replica of {tp} is live (replicas {list(self.assignments[tp].replicas)})")

    def preferred_leader_imbalance(self, percentage: int, excluded_topics: Collection[str] = ()
                                   ) -> dict[int, list[TopicPartition]]:
        """Kafka's auto leader rebalance check: per live broker that does not lead more than `percentage` % of the
        partitions it is the preferred leader of, those of them whose ISR it is in (to elect it for)."""
        preferred_of: dict[int, list[TopicPartition]] = {}
        for tp, assignment in sorted(self.assignments.items()):
            if tp in self.partition_states and tp.topic not in excluded_topics:
                preferred_of.setdefault(assignment.replicas[0], []).append(tp)
        imbalanced = {}
        for broker_id, partitions in sorted(preferred_of.items()):
            if broker_id not in self.live_brokers or broker_id in self.shutting_down_brokers:
                continue
            not_led = [tp for tp in partitions if self.partition_states[tp].leader_and_isr.leader != broker_id]
            if 100 * len(not_led) / len(partitions) > percentage:
                imbalanced[broker_id] = [tp for tp in not_led
                                         if broker_id in self.partition_states[tp].leader_and_isr.isr]
        return imbalanced

    def on_reassignment_started(self, zk: KazooClient, partitions: Iterable[TopicPartition]) -> ElectionResult:
        """A reassignment starts (or changes): the leader epoch moves, so that every replica, the new ones too,
        takes the new replica set (Kafka's updateLeaderEpochAndSendRequest)."""
        return self._apply(zk, partitions, lambda tp, current: current.new_leader_and_isr(current.leader, current.isr))

    def on_reassignment_completed(self, zk: KazooClient, partitions: Iterable[TopicPartition]) -> ElectionResult:
        """The target replicas are all in sync: a target replica leads and the leaving ones drop out of the ISR."""
        return self._apply(zk, partitions, self.decide_reassignment_completion)

    def decide_reassignment_completion(self, tp: TopicPartition, current: LeaderAndIsr) -> Decision:
        target = self.assignments[tp].target_replicas
        leader = (current.leader if current.leader in target and current.leader in self.live_brokers
                  else reassign_partition_leader_election(target, current.isr, self.live_brokers))
        if leader is None:
            return EligibleLeadersNotAvailableError(f"No live in-sync target replica of {tp} can lead (target "
                                                    f"{list(target)}, ISR {list(current.isr)})")
        return current.new_leader_and_isr(leader, [r for r in current.isr if r in target])

    def _apply(self, zk: KazooClient, partitions: Iterable[TopicPartition],
               decide: Callable[[TopicPartition, LeaderAndIsr], Decision]) -> ElectionResult:
        result = ElectionResult()
        current = {tp: self.partition_states[tp] for tp in partitions if tp in self.partition_states}
        for _ in range(MAX_UPDATE_ROUNDS):
            if not current:
                return result
            updates = {}
            for tp, state in current.items():
                if state.controller_epoch > self.epoch:
                    raise ControllerMovedError(
                        f"{tp} was written by controller epoch {state.controller_epoch}, this controller "
                        f"{self.controller_id} has epoch {self.epoch}")
                decision = decide(tp, state.leader_and_isr)
                if isinstance(decision, KafkaError):
                    result.failed[tp] = decision
                elif decision is not None:
                    updates[tp] = decision
            outcome = update_leader_and_isr(zk, updates, self.epoch, self.epoch_zk_version)
            self._record(result, outcome.finished, "partition change")
            result.failed.update(outcome.failed)
            current = get_partition_states(zk, outcome.retry)
            self.partition_states.update(current)
        for tp in current:
            result.failed[tp] = LeaderNotAvailableError(
                f"The state of {tp} kept changing under controller {self.controller_id}; not updated")
        return result

    def _record(self, result: ElectionResult, finished: Mapping[TopicPartition, LeaderAndIsr], what: str) -> None:
        for tp, state in finished.items():
            previous = self.partition_states.get(tp)
            written = LeaderIsrAndControllerEpoch(state, self.epoch)
            self.partition_states[tp] = written
            result.written[tp] = written
            before = _describe(previous.leader_and_isr) if previous else "none"
            log.info("Controller %d epoch %d: %s %s from %s to %s", self.controller_id, self.epoch, what, tp, before,
                     _describe(state))
            if state.leader == NO_LEADER:
                log.warning("Partition %s is offline: no live in-sync replica (ISR %s); it gets a leader when one of "
                            "them returns, or with unclean.leader.election.enable=true at the risk of losing records",
                            tp, list(state.isr))


def _describe(state: LeaderAndIsr) -> str:
    return (f"(leader {state.leader}, leader epoch {state.leader_epoch}, isr {list(state.isr)}, "
            f"partition epoch {state.partition_epoch})")
