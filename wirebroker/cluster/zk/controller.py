"""The ZooKeeper-era controller (Kafka's KafkaController with its ControllerEventManager and TopicDeletionManager).

Every broker runs one; the one that wins /controller (ControllerElector) is active. All work happens on one event
thread that takes events from a queue in order, so the controller's view (ControllerState) needs no lock:

- ControllerChange (elected): read brokers, topics and partition states; open a channel per live broker
  (controller_channel.py); give a state to partitions that lack one, elect leaders for partitions whose leader is
  gone and drop dead brokers from ISRs; send UpdateMetadata (every partition) to every live broker, then a FULL
  LeaderAndIsr to every replica; resume topic deletions.
- BrokerChange (/brokers/ids children): failed brokers (and restarted ones, told apart by their epoch) lose their
  leaderships and ISR places; new brokers get everything (UpdateMetadata, FULL LeaderAndIsr), offline partitions
  elect again. Every live broker hears of the changed partitions and the new broker list.
- TopicChange (/brokers/topics children) and PartitionModifications (/brokers/topics/<topic>): new partitions get
  their first leader and ISR (LeaderAndIsr with is_new to their replicas, UpdateMetadata to all).
- TopicDeletion (/admin/delete_topics children): UpdateMetadata with leader -2, StopReplica with delete_partition to
  every replica (one on a broker that is down gets it when it returns); when all have answered, the znodes go.
- AlterPartition (a leader's ISR change, isr_change.py; a reassignment whose targets are all in sync completes),
  ControlledShutdown (a broker leaving), ElectLeaders (preferred or unclean) and AlterPartitionReassignments /
  ListPartitionReassignments (reassignment.py): requests answered through a callback once the change is written.
- AutoPreferredReplicaLeaderElection (auto.leader.rebalance.enable): 5 s after taking office, then every
  leader.imbalance.check.interval.seconds, brokers leading too few of their preferred partitions take them back.
- Resign: the channels close and the view is dropped; a newer controller's epoch fences anything still in flight.

Leader and ISR changes are logged by ControllerState, one line per partition naming the topic, partition, old and
new leader and epochs; ISR changes a leader asks for are logged here.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import WatchedEvent

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.controller_channel import ControllerChannelManager
from wirebroker.cluster.zk.controller_election import ControllerElector
from wirebroker.cluster.zk.controller_requests import (
    LEADER_AND_ISR_VERSION,
    STOP_REPLICA_VERSION,
    UPDATE_METADATA_VERSION,
    RequestBuilder,
    partitions_on_broker,
    topic_id_bytes,
)
from wirebroker.cluster.zk.controller_state import ControllerState, ElectionResult
from wirebroker.cluster.zk.data import (
    NO_LEADER,
    BrokerInfo,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
)
from wirebroker.cluster.zk.errors import ControllerMovedError
from wirebroker.cluster.zk.isr_change import IsrChange, IsrChangeResult, write_isr_changes
from wirebroker.cluster.zk.partition_state import get_partition_states
from wirebroker.cluster.zk.reassignment import PartitionReassignments, Target
from wirebroker.cluster.zk.topics import delete_topic_znodes, get_topic_config
from wirebroker.log.files import TopicPartition
from wirebroker.log.metadata_files import uuid_to_kafka_string
from wirebroker.protocol.errors import (
    BrokerNotAvailableError,
    ElectionNotNeededError,
    ErrorCode,
    KafkaError,
    NotControllerError,
    StaleBrokerEpochError,
    UnknownTopicOrPartitionError,
)

log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.5  # before an event that met a ZooKeeper connection loss runs again
FIRST_REBALANCE_DELAY_S = 5.0  # Kafka checks the leader balance 5 s after becoming controller, then every interval
UNCLEAN_KEY = "unclean.leader.election.enable"

ShutdownCallback = Callable[[int, list[TopicPartition]], None]  # (error code, partitions still led)
ElectionAnswers = dict[TopicPartition, KafkaError | None]  # ElectLeaders: per partition its error, None if elected


@dataclass(frozen=True)
class ControllerSettings:
    """The broker settings the controller acts on (Kafka's names)."""
    listener_name: str | None = None  # inter.broker.listener.name: where the controller reaches brokers
    unclean_leader_election_enable: bool = False  # the default of the topic setting
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval_s: float = 300.0  # leader.imbalance.check.interval.seconds
    leader_imbalance_per_broker_percentage: int = 10
    security: Any = None  # a ClientSecurity for a secured inter-broker listener (network/client_security.py)


@dataclass(frozen=True)
class _Event:
    name: str
    run: Callable[[], None]
    generation: int | None = None  # a watch's: ignored once the controller resigned or was elected again
    attempts: int = 0


class KafkaController:
    def __init__(self, zk: KazooClient, broker_id: int, settings: ControllerSettings) -> None:
        self.zk = zk
        self.broker_id = broker_id
        self.settings = settings
        self.listener_name = settings.listener_name
        self._rebalance_timer: threading.Timer | None = None
        self.state: ControllerState | None = None
        self.channel: ControllerChannelManager | None = None
        self.broker_epochs: dict[int, int] = {}
        self.topic_ids: dict[str, bytes] = {}
        self._deleting: dict[str, set[int]] = {}  # topic -> brokers whose StopReplica is awaited
        self._generation = 0
        self._health: tuple[int, int] | None = None  # (offline, under-replicated) last logged
        self._events: queue.Queue[_Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=f"controller-event-thread-{broker_id}", daemon=True)
        self.elector = ControllerElector(
            zk, broker_id,
            on_elected=lambda epoch, version: self._put("ControllerChange", lambda: self._on_elected(epoch, version)),
            on_resigned=lambda: self._put("Resign", self._on_resigned))

    # ---- lifecycle and the handlers' entry points (any thread) ---------------------------------------------

    @property
    def is_active(self) -> bool:
        return self.state is not None

    @property
    def epoch(self) -> int:
        return self.elector.epoch

    def start(self) -> None:
        self._thread.start()
        self.elector.start()

    def shutdown(self) -> None:
        self.elector.stop()  # an active controller resigns (queued before the stop below)
        self._events.put(None)
        self._thread.join()

    def alter_partition(self, broker_id: int, broker_epoch: int, changes: list[IsrChange],
                        callback: Callable[[IsrChangeResult | KafkaError], None]) -> None:
        """A leader's ISR changes; `callback` gets per partition the state written or its error, or one error for
        the whole request (NOT_CONTROLLER, STALE_BROKER_EPOCH)."""
        self._put("AlterPartition", lambda: callback(self._answer(
            lambda: self._on_alter_partition(broker_id, broker_epoch, changes))))

    def controlled_shutdown(self, broker_id: int, broker_epoch: int, callback: ShutdownCallback) -> None:
        def run() -> None:
            answer = self._answer(lambda: self._on_controlled_shutdown(broker_id, broker_epoch))
            if isinstance(answer, KafkaError):
                callback(answer.code, [])
            else:
                callback(ErrorCode.NONE, answer)
        self._put("ControlledShutdown", run)

    def elect_leaders(self, partitions: list[TopicPartition] | None, unclean: bool,
                      callback: Callable[[ElectionAnswers | KafkaError], None]) -> None:
        """ElectLeaders: per partition None (elected) or its error; `partitions` None means every partition that
        needs an election."""
        self._put("ReplicaLeaderElection", lambda: callback(self._answer(
            lambda: self._on_elect_leaders(partitions, unclean))))

    def alter_partition_reassignments(self, targets: dict[TopicPartition, Target],
                                      callback: Callable[[ElectionAnswers | KafkaError], None]) -> None:
        self._put("ApiPartitionReassignment", lambda: callback(self._answer(
            lambda: self._reassignments().alter(targets))))

    def list_partition_reassignments(self, partitions: list[TopicPartition] | None,
                                     callback: Callable[[dict[TopicPartition, ReplicaAssignment] | KafkaError], None]
                                     ) -> None:
        self._put("ListPartitionReassignments", lambda: callback(self._answer(
            lambda: self._reassignments().ongoing(partitions))))

    def topic_name(self, topic_id: bytes) -> str | None:
        # A copy: the event thread may add a topic meanwhile (dict() of a dict is one step under the GIL).
        return next((name for name, known in dict(self.topic_ids).items() if known == topic_id), None)

    # ---- the event thread ----------------------------------------------------------------------------------

    def _put(self, name: str, run: Callable[[], None], generation: int | None = None) -> None:
        self._events.put(_Event(name, run, generation))

    def _run(self) -> None:
        while (event := self._events.get()) is not None:
            if event.generation is not None and event.generation != self._generation:
                continue
            try:
                event.run()
                self._log_partition_health()
            except ControllerMovedError as exc:
                log.warning("Controller %d: %s while processing %s; it resigns when /controller names the new "
                            "controller", self.broker_id, exc, event.name)
            except KazooException as exc:
                log.warning("Controller %d: ZooKeeper error processing %s (%r); trying again in %.1fs",
                            self.broker_id, event.name, exc, RETRY_BACKOFF_S)
                time.sleep(RETRY_BACKOFF_S)
                if event.attempts < 10:
                    self._events.put(_Event(event.name, event.run, event.generation, event.attempts + 1))
            except Exception:
                log.exception("Controller %d failed to process %s", self.broker_id, event.name)

    def _log_partition_health(self) -> None:
        """Operators' line when the counts of offline and under-replicated partitions change (Kafka's
        OfflinePartitionsCount and UnderReplicatedPartitions)."""
        if self.state is None:
            self._health = None
            return
        offline = self.state.offline_partitions()
        under_replicated = sorted(tp for tp, s in self.state.partition_states.items()
                                  if tp in self.state.assignments
                                  and len(s.leader_and_isr.isr) < len(self.state.assignments[tp].replicas))
        health = (len(offline), len(under_replicated))
        if health != self._health:
            self._health = health
            log.info("Controller %d: %d offline partitions %s, %d under-replicated partitions %s", self.broker_id,
                     len(offline), _sample(offline), len(under_replicated), _sample(under_replicated))

    def _answer(self, work: Callable[[], object]) -> object:
        """The result of a request's work, or the KafkaError that answers it (NOT_CONTROLLER when not active)."""
        if self.state is None:
            return NotControllerError(f"Broker {self.broker_id} is not the controller")
        try:
            return work()
        except ControllerMovedError:
            return NotControllerError(f"Broker {self.broker_id} is no longer the controller")
        except KafkaError as exc:
            return exc

    def _watch_children(self, path: str, name: str, handler: Callable[[], None]) -> list[str]:
        """The children of `path`, with a one-shot watch that queues `handler` (which re-reads and re-arms)."""
        generation = self._generation

        def watch(_: WatchedEvent) -> None:
            self._put(name, handler, generation)
        return self.zk.get_children(path, watch=watch)

    # ---- election and resignation --------------------------------------------------------------------------

    def _on_elected(self, epoch: int, epoch_zk_version: int) -> None:
        self._generation += 1
        log.info("Controller %d starting its duties (controller epoch %d)", self.broker_id, epoch)
        if self.channel is not None:  # a retry after a ZooKeeper error part way
            self.channel.shutdown()
        self.channel = ControllerChannelManager(self.broker_id, self.listener_name, self.settings.security)
        live = self._read_brokers(self._watch_children(paths.BROKER_IDS, "BrokerChange", self._on_broker_change))
        topics = self._watch_children(paths.TOPICS, "TopicChange", self._on_topic_change)
        assignments = self._read_assignments(topics)
        self.state = ControllerState(self.broker_id, epoch, epoch_zk_version, live, assignments,
                                     get_partition_states(self.zk, assignments), self._unclean_enabled)
        for info in live.values():
            self.channel.add_broker(info)
        state = self.state
        missing = {tp: a for tp, a in assignments.items() if tp not in state.partition_states}
        created = state.on_new_partitions(self.zk, missing) if missing else ElectionResult()
        dead = {b for s in state.partition_states.values() for b in (s.leader_and_isr.leader, *s.leader_and_isr.isr)
                if b != NO_LEADER and b not in live}
        if dead:
            state.on_broker_failure(self.zk, dead)
        state.on_broker_startup(self.zk, [])
        self._send_update_metadata(live, state.partition_states)
        self.send_leader_and_isr(state.partition_states, is_new=created.written, full_for=live)
        log.info("Controller %d is ready with epoch %d: %d live brokers %s, %d partitions, %d offline",
                 self.broker_id, epoch, len(live), sorted(live), len(state.partition_states),
                 len(state.offline_partitions()))
        self._on_topic_deletion()
        self._reassignments().complete_caught_up()
        if self.settings.auto_leader_rebalance_enable:
            self._schedule_rebalance(FIRST_REBALANCE_DELAY_S)

    def _on_resigned(self) -> None:
        self._generation += 1
        if self._rebalance_timer is not None:
            self._rebalance_timer.cancel()
        if self.channel is not None:
            self.channel.shutdown()
        self.channel = None
        self.state = None
        self._deleting.clear()
        log.info("Controller %d resigned", self.broker_id)

    # ---- brokers -------------------------------------------------------------------------------------------

    def _on_broker_change(self) -> None:
        state = self._active()
        previous_epochs = dict(self.broker_epochs)
        current = self._read_brokers(self._watch_children(paths.BROKER_IDS, "BrokerChange", self._on_broker_change))
        new = {b for b in current if b not in state.live_brokers}
        dead = {b for b in state.live_brokers if b not in current}
        bounced = {b for b in current if b in state.live_brokers and previous_epochs.get(b) != self.broker_epochs[b]}
        if not (new or dead or bounced):
            return
        log.info("Controller %d: newly added brokers %s, deleted brokers %s, bounced brokers %s, all live brokers %s",
                 self.broker_id, sorted(new), sorted(dead), sorted(bounced), sorted(current))
        changed: dict[TopicPartition, LeaderIsrAndControllerEpoch] = {}
        for broker_id in dead | bounced:
            self.channel.remove_broker(broker_id)
        if dead | bounced:
            changed.update(state.on_broker_failure(self.zk, dead | bounced).written)
        for broker_id in new | bounced:
            self.channel.add_broker(current[broker_id])
        if new | bounced:
            changed.update(state.on_broker_startup(self.zk, [current[b] for b in sorted(new | bounced)]).written)
        joined = new | bounced
        existing = {b: info for b, info in state.live_brokers.items() if b not in joined}
        deleting = self._deleting_partitions()
        self._send_update_metadata(existing, changed, deleting)
        self._send_update_metadata({b: state.live_brokers[b] for b in joined}, state.partition_states, deleting)
        self.send_leader_and_isr({tp: s for tp, s in changed.items() if tp.topic not in self._deleting})
        builder = self._builder()
        for broker_id in sorted(joined):
            hosted = {tp: state.partition_states[tp] for tp in partitions_on_broker(state.assignments, broker_id)
                      if tp in state.partition_states and tp.topic not in self._deleting}
            if hosted:
                self.channel.send(broker_id, builder.leader_and_isr(broker_id, hosted, full=True),
                                  LEADER_AND_ISR_VERSION)
            for topic in sorted(t for t, waiting in self._deleting.items() if broker_id in waiting):
                self._send_deletion(topic, broker_id)

    def _read_brokers(self, ids: Iterable[str]) -> dict[int, BrokerInfo]:
        """The registrations of `ids`, keeping each broker's epoch (the czxid of its znode)."""
        brokers = {}
        for child in sorted(ids, key=int):
            try:
                data, stat = self.zk.get(paths.broker(int(child)))
            except NoNodeError:
                continue
            brokers[int(child)] = BrokerInfo.decode(int(child), data)
            self.broker_epochs[int(child)] = stat.czxid
        for gone in set(self.broker_epochs) - set(brokers):
            del self.broker_epochs[gone]
        return brokers

    # ---- topics and partitions -----------------------------------------------------------------------------

    def _on_topic_change(self) -> None:
        state = self._active()
        topics = set(self._watch_children(paths.TOPICS, "TopicChange", self._on_topic_change))
        known = {tp.topic for tp in state.assignments}
        for gone in known - topics:
            self._forget_topic(gone)
        added = self._read_assignments(sorted(topics - known))
        if added:
            log.info("Controller %d: new topics %s", self.broker_id, sorted({tp.topic for tp in added}))
            self._on_new_partitions(added)

    def _on_partition_modification(self, topic: str) -> None:
        state = self._active()
        assignments = self._read_assignments([topic])
        added = {tp: a for tp, a in assignments.items() if tp not in state.assignments}
        if added:
            log.info("Controller %d: new partitions %s of topic %s", self.broker_id,
                     sorted(tp.partition for tp in added), topic)
            self._on_new_partitions(added)

    def _on_new_partitions(self, assignments: Mapping[TopicPartition, ReplicaAssignment]) -> None:
        state = self._active()
        result = state.on_new_partitions(self.zk, assignments)
        for tp, error in result.failed.items():
            log.warning("Controller %d could not start new partition %s: %s", self.broker_id, tp, error)
        self._send_update_metadata(state.live_brokers, result.written)
        self.send_leader_and_isr(result.written, is_new=result.written)

    def _read_assignments(self, topics: Iterable[str]) -> dict[TopicPartition, ReplicaAssignment]:
        """The topics' assignments (each with a watch for added partitions), their ids recorded; a topic created
        without an id (by an older tool) gets one, as Kafka's controller gives it."""
        assignments = {}
        for topic in topics:
            generation = self._generation
            try:
                data, _ = self.zk.get(paths.topic(topic), watch=lambda _, t=topic, g=generation: self._put(
                    "PartitionModifications", lambda: self._on_partition_modification(t), g))
            except NoNodeError:
                continue
            assignment = TopicAssignment.decode(data)
            if assignment.topic_id is None:
                assignment = TopicAssignment(uuid_to_kafka_string(uuid.uuid4()), assignment.partitions)
                self.zk.set(paths.topic(topic), assignment.encode())
            self.topic_ids[topic] = topic_id_bytes(assignment.topic_id)
            for partition, replicas in assignment.partitions.items():
                assignments[TopicPartition(topic, partition)] = replicas
        return assignments

    def _forget_topic(self, topic: str) -> None:
        state = self._active()
        for tp in [tp for tp in state.assignments if tp.topic == topic]:
            state.assignments.pop(tp, None)
            state.partition_states.pop(tp, None)
        self.topic_ids.pop(topic, None)

    def _unclean_enabled(self, topic: str) -> bool:
        value = get_topic_config(self.zk, topic).get(UNCLEAN_KEY)
        return self.settings.unclean_leader_election_enable if value is None else value.strip().lower() == "true"

    # ---- topic deletion ------------------------------------------------------------------------------------

    def _on_topic_deletion(self) -> None:
        state = self._active()
        requested = self._watch_children(paths.DELETE_TOPICS, "TopicDeletion", self._on_topic_deletion)
        known = {tp.topic for tp in state.assignments}
        # A topic created just before its deletion (its TopicChange still queued) is started first.
        created_meanwhile = self._read_assignments(t for t in requested if t not in known)
        if created_meanwhile:
            self._on_new_partitions(created_meanwhile)
            known = {tp.topic for tp in state.assignments}
        for topic in sorted(set(requested) - set(self._deleting)):
            if topic not in known:
                log.info("Controller %d: deletion of unknown topic %s requested; removing the request",
                         self.broker_id, topic)
                self._delete_quietly(paths.delete_topic(topic))
                continue
            self._start_deletion(topic)

    def _start_deletion(self, topic: str) -> None:
        state = self._active()
        partitions = sorted(tp for tp in state.assignments if tp.topic == topic)
        states = {tp: state.partition_states[tp] for tp in partitions if tp in state.partition_states}
        log.info("Controller %d: deleting topic %s (%d partitions)", self.broker_id, topic, len(partitions))
        self._send_update_metadata(state.live_brokers, states, deleting=partitions)
        # Every replica must delete its copy; one on a broker that is down waits for its return (Kafka marks the
        # topic ineligible for deletion until then), so that no stray log of the topic survives.
        self._deleting[topic] = {b for tp in partitions for b in state.assignments[tp].replicas}
        offline = sorted(self._deleting[topic] - set(state.live_brokers))
        if offline:
            log.warning("Controller %d: the deletion of topic %s completes when brokers %s, which hold replicas of "
                        "it, are back", self.broker_id, topic, offline)
        for broker_id in sorted(self._deleting[topic] & set(state.live_brokers)):
            self._send_deletion(topic, broker_id)
        self._stop_replica_answered(topic, ())  # a topic without replicas is done at once

    def _send_deletion(self, topic: str, broker_id: int) -> None:
        """StopReplica with deletion of the topic's replicas on `broker_id`; its answer counts it done."""
        state = self._active()
        epochs = {tp: state.partition_states[tp].leader_and_isr.leader_epoch if tp in state.partition_states else -1
                  for tp in partitions_on_broker(state.assignments, broker_id) if tp.topic == topic}
        generation = self._generation
        self.channel.send(broker_id, self._builder().stop_replica(broker_id, epochs, delete_partitions=True),
                          STOP_REPLICA_VERSION, callback=lambda _: self._put(
                              "TopicDeletionStopReplicaResponseReceived",
                              lambda: self._stop_replica_answered(topic, {broker_id}), generation))

    def _deleting_partitions(self) -> list[TopicPartition]:
        return [tp for tp in self._active().assignments if tp.topic in self._deleting]

    def _stop_replica_answered(self, topic: str, brokers: Collection[int]) -> None:
        waiting = self._deleting.get(topic)
        if waiting is None:
            return
        waiting.difference_update(brokers)
        if waiting:
            return
        delete_topic_znodes(self.zk, topic, self._active().epoch_zk_version)
        del self._deleting[topic]
        self._forget_topic(topic)
        log.info("Controller %d: deletion of topic %s completed", self.broker_id, topic)

    def _delete_quietly(self, path: str) -> None:
        try:
            self.zk.delete(path)
        except NoNodeError:
            pass

    # ---- AlterPartition ------------------------------------------------------------------------------------

    def _on_alter_partition(self, broker_id: int, broker_epoch: int, changes: list[IsrChange]) -> IsrChangeResult:
        state = self._active()
        known_epoch = self.broker_epochs.get(broker_id)
        if known_epoch is None or broker_epoch != known_epoch:  # exactly the registration's, as Kafka's controller
            raise StaleBrokerEpochError(f"Broker {broker_id} epoch {broker_epoch} is not the registered one "
                                        f"({known_epoch})")
        results, written = write_isr_changes(self.zk, state, changes)
        if written:
            self._send_update_metadata(state.live_brokers, written)
            self._reassignments().complete_caught_up(written)
        return results

    # ---- auto leader rebalance (auto.leader.rebalance.enable) ---------------------------------------------

    def _schedule_rebalance(self, delay_s: float) -> None:
        generation = self._generation
        self._rebalance_timer = threading.Timer(delay_s, lambda: self._put(
            "AutoPreferredReplicaLeaderElection", self._on_auto_rebalance, generation))
        self._rebalance_timer.daemon = True
        self._rebalance_timer.start()

    def _on_auto_rebalance(self) -> None:
        """Kafka's checkAndTriggerAutoLeaderRebalance: a broker that leads too few of the partitions it is the
        preferred leader of (an imbalance above leader.imbalance.per.broker.percentage) takes back those whose ISR
        it is in."""
        try:
            state = self._active()
            imbalanced = state.preferred_leader_imbalance(self.settings.leader_imbalance_per_broker_percentage,
                                                          set(self._deleting))
            for broker_id, candidates in imbalanced.items():
                log.info("Controller %d: broker %d leads too few of the partitions it prefers (over %d%% not); "
                         "electing it for %s", self.broker_id, broker_id,
                         self.settings.leader_imbalance_per_broker_percentage, _sample(candidates))
                result = state.elect_preferred_leaders(self.zk, candidates)
                self.send_leader_and_isr(result.written)
                self._send_update_metadata(state.live_brokers, result.written)
        finally:
            if self.state is not None:
                self._schedule_rebalance(self.settings.leader_imbalance_check_interval_s)

    # ---- ElectLeaders --------------------------------------------------------------------------------------

    def _on_elect_leaders(self, partitions: list[TopicPartition] | None, unclean: bool) -> ElectionAnswers:
        state = self._active()
        decide = state.decide_unclean_election if unclean else state.decide_preferred_election
        if partitions is None:
            partitions = [tp for tp, s in sorted(state.partition_states.items())
                          if not isinstance(decide(tp, s.leader_and_isr), ElectionNotNeededError)]
        answers: ElectionAnswers = {}
        topics = {tp.topic for tp in state.assignments}
        for tp in partitions:
            if tp.topic not in topics:
                answers[tp] = UnknownTopicOrPartitionError(f"No such topic as {tp.topic}")
            elif tp not in state.partition_states:
                answers[tp] = UnknownTopicOrPartitionError(f"No such partition as {tp.topic}-{tp.partition}")
        wanted = [tp for tp in dict.fromkeys(partitions) if tp not in answers]
        result = (state.elect_unclean_leaders if unclean else state.elect_preferred_leaders)(self.zk, wanted)
        answers.update(result.failed)
        answers.update({tp: None for tp in result.written})
        self.send_leader_and_isr(result.written)
        self._send_update_metadata(state.live_brokers, result.written)
        return answers

    # ---- ControlledShutdown --------------------------------------------------------------------------------

    def _on_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> list[TopicPartition]:
        state = self._active()
        if broker_id not in state.live_brokers:
            raise BrokerNotAvailableError(f"Broker id {broker_id} does not exist")
        known_epoch = self.broker_epochs.get(broker_id, -1)
        if broker_epoch != -1 and broker_epoch < known_epoch:
            raise StaleBrokerEpochError(f"Broker {broker_id} epoch {broker_epoch} is older than {known_epoch}")
        log.info("Controller %d: broker %d asks to shut down", self.broker_id, broker_id)
        result = state.on_controlled_shutdown(self.zk, broker_id)
        self.send_leader_and_isr(result.written)
        self._send_update_metadata(state.live_brokers, result.written)
        followed = {tp: s.leader_and_isr.leader_epoch for tp, s in state.partition_states.items()
                    if s.leader_and_isr.leader != broker_id and len(state.assignments[tp].replicas) > 1
                    and broker_id in state.assignments[tp].replicas}
        if followed:
            self.send_stop_replica(broker_id, followed, delete=False)
        remaining = [tp for tp in state.partitions_led_by(broker_id) if len(state.assignments[tp].replicas) > 1]
        log.info("Controller %d: broker %d still leads %d partitions %s", self.broker_id, broker_id, len(remaining),
                 remaining[:10])
        return remaining

    # ---- sending -------------------------------------------------------------------------------------------

    def _active(self) -> ControllerState:
        if self.state is None:
            raise NotControllerError(f"Broker {self.broker_id} is not the controller")
        return self.state

    def _reassignments(self) -> PartitionReassignments:
        return PartitionReassignments(self.zk, self._active(), self)

    def _builder(self) -> RequestBuilder:
        state = self._active()
        return RequestBuilder(self.broker_id, state.epoch, self.listener_name, self.topic_ids, state.assignments,
                              state.live_brokers, self.broker_epochs)

    def send_update_metadata_to_all(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]) -> None:
        self._send_update_metadata(self._active().live_brokers, states)

    def send_stop_replica(self, broker_id: int, partitions: Mapping[TopicPartition, int], delete: bool) -> None:
        self.channel.send(broker_id, self._builder().stop_replica(broker_id, partitions, delete_partitions=delete),
                          STOP_REPLICA_VERSION)

    def _send_update_metadata(self, brokers: Mapping[int, BrokerInfo],
                              states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                              deleting: Collection[TopicPartition] = ()) -> None:
        builder = self._builder()
        for broker_id in sorted(brokers):
            self.channel.send(broker_id, builder.update_metadata(broker_id, states, deleting),
                              UPDATE_METADATA_VERSION)

    def send_leader_and_isr(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                             is_new: Collection[TopicPartition] = (), full_for: Collection[int] = ()) -> None:
        for broker_id, request in self._builder().leader_and_isr_by_broker(states, is_new, full_for).items():
            self.channel.send(broker_id, request, LEADER_AND_ISR_VERSION)


def _sample(partitions: list[TopicPartition], limit: int = 10) -> str:
    names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in partitions[:limit])
    return f"[{names}{', ...' if len(partitions) > limit else ''}]"
