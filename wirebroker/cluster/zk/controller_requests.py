"""The requests a ZooKeeper-era controller sends to brokers (Kafka's ControllerBrokerRequestBatch), built from the
controller's view, at the versions the replication plan fixes:

- LeaderAndIsr v6: per topic (with its id) the partitions a broker replicates: leader, leader epoch, ISR, partition
  epoch (the state znode's version), replicas, `is_new` for partitions just created, leader_recovery_state; the
  `live_leaders` are the leaders' endpoints on the inter-broker listener. `type` FULL when the request names every
  partition the broker hosts (controller failover, broker start-up), INCREMENTAL otherwise (KIP-866).
- UpdateMetadata v7: the live brokers with every endpoint and rack, and partition states with the replicas that
  are offline; a partition of a topic being deleted carries leader -2 (Kafka's LeaderDuringDelete) so that brokers
  drop it.
- StopReplica v3: per partition its leader epoch and whether to delete it (topic deletion) or only stop it
  (controlled shutdown of a follower).

Each carries the controller id, the controller epoch and the receiving broker's epoch (its registration's czxid).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

from wirebroker.cluster.zk.data import (
    BrokerInfo,
    EndPoint,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
)
from wirebroker.log.files import TopicPartition
from wirebroker.log.metadata_files import uuid_from_kafka_string
from wirebroker.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from wirebroker.protocol.messages.stop_replica import StopReplicaRequest
from wirebroker.protocol.messages.update_metadata import UpdateMetadataRequest

LEADER_AND_ISR_VERSION = 6
UPDATE_METADATA_VERSION = 7
STOP_REPLICA_VERSION = 3
LEADER_AND_ISR_INCREMENTAL = 1  # Kafka's LeaderAndIsrRequest.Type
LEADER_AND_ISR_FULL = 2
LEADER_DURING_DELETE = -2  # Kafka's LeaderAndIsr.LeaderDuringDelete
# Kafka's SecurityProtocol ids, as UpdateMetadata carries them.
SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def topic_id_bytes(topic_id: str | None) -> bytes:
    """The 16 bytes of a topic id as /brokers/topics/<topic> writes it (Kafka's base64 Uuid); zeros when absent."""
    return uuid_from_kafka_string(topic_id).bytes if topic_id else bytes(16)


def endpoint_for(info: BrokerInfo, listener_name: str | None) -> EndPoint:
    """The broker's endpoint on `listener_name` (the inter-broker listener), else its first."""
    return next((e for e in info.endpoints if e.listener_name == listener_name), info.endpoints[0])


class RequestBuilder:
    """Builds the three requests from one controller's view: its id and epoch, the topics' ids and assignments, and
    the live brokers with their epochs."""

    def __init__(self, controller_id: int, controller_epoch: int, listener_name: str | None,
                 topic_ids: Mapping[str, bytes], assignments: Mapping[TopicPartition, ReplicaAssignment],
                 live_brokers: Mapping[int, BrokerInfo], broker_epochs: Mapping[int, int]) -> None:
        self.controller_id = controller_id
        self.controller_epoch = controller_epoch
        self.listener_name = listener_name
        self.topic_ids = topic_ids
        self.assignments = assignments
        self.live_brokers = live_brokers
        self.broker_epochs = broker_epochs

    def leader_and_isr_by_broker(self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                                 is_new: Collection[TopicPartition] = (),
                                 full_for: Collection[int] = ()) -> dict[int, LeaderAndIsrRequest]:
        """One request per live replica of the partitions in `states`; brokers in `full_for` get type FULL."""
        by_broker: dict[int, dict[TopicPartition, LeaderIsrAndControllerEpoch]] = defaultdict(dict)
        for tp, state in states.items():
            for replica in self.assignments[tp].replicas:
                if replica in self.live_brokers:
                    by_broker[replica][tp] = state
        return {broker_id: self.leader_and_isr(broker_id, partitions, is_new, broker_id in full_for)
                for broker_id, partitions in sorted(by_broker.items())}

    def leader_and_isr(self, broker_id: int, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                       is_new: Collection[TopicPartition] = (), full: bool = False) -> LeaderAndIsrRequest:
        topics: dict[str, list[LeaderAndIsrRequest.LeaderAndIsrPartitionState]] = defaultdict(list)
        leaders = set()
        for tp, state in sorted(states.items()):
            current = state.leader_and_isr
            assignment = self.assignments[tp]
            topics[tp.topic].append(LeaderAndIsrRequest.LeaderAndIsrPartitionState(
                topic_name=tp.topic, partition_index=tp.partition, controller_epoch=state.controller_epoch,
                leader=current.leader, leader_epoch=current.leader_epoch, isr=list(current.isr),
                partition_epoch=current.partition_epoch, replicas=list(assignment.replicas),
                adding_replicas=list(assignment.adding_replicas), removing_replicas=list(assignment.removing_replicas),
                is_new=tp in is_new, leader_recovery_state=current.leader_recovery_state))
            if current.leader in self.live_brokers:
                leaders.add(current.leader)
        live_leaders = []
        for leader in sorted(leaders):
            endpoint = endpoint_for(self.live_brokers[leader], self.listener_name)
            live_leaders.append(LeaderAndIsrRequest.LeaderAndIsrLiveLeader(
                broker_id=leader, host_name=endpoint.host, port=endpoint.port))
        return LeaderAndIsrRequest(
            controller_id=self.controller_id, controller_epoch=self.controller_epoch,
            broker_epoch=self.broker_epochs.get(broker_id, -1),
            type=LEADER_AND_ISR_FULL if full else LEADER_AND_ISR_INCREMENTAL,
            topic_states=[LeaderAndIsrRequest.LeaderAndIsrTopicState(
                topic_name=topic, topic_id=self.topic_ids.get(topic, bytes(16)), partition_states=partitions)
                for topic, partitions in topics.items()],
            live_leaders=live_leaders)

    def update_metadata(self, broker_id: int, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
                        deleting: Collection[TopicPartition] = ()) -> UpdateMetadataRequest:
        """The live brokers and the given partitions' states; partitions in `deleting` with leader -2."""
        topics: dict[str, list[UpdateMetadataRequest.UpdateMetadataPartitionState]] = defaultdict(list)
        for tp, state in sorted(states.items()):
            current = state.leader_and_isr
            replicas = list(self.assignments[tp].replicas) if tp in self.assignments else list(current.isr)
            topics[tp.topic].append(UpdateMetadataRequest.UpdateMetadataPartitionState(
                topic_name=tp.topic, partition_index=tp.partition, controller_epoch=state.controller_epoch,
                leader=LEADER_DURING_DELETE if tp in deleting else current.leader, leader_epoch=current.leader_epoch,
                isr=list(current.isr), zk_version=current.partition_epoch, replicas=replicas,
                offline_replicas=[r for r in replicas if r not in self.live_brokers]))
        return UpdateMetadataRequest(
            controller_id=self.controller_id, controller_epoch=self.controller_epoch,
            broker_epoch=self.broker_epochs.get(broker_id, -1),
            topic_states=[UpdateMetadataRequest.UpdateMetadataTopicState(
                topic_name=topic, topic_id=self.topic_ids.get(topic, bytes(16)), partition_states=partitions)
                for topic, partitions in topics.items()],
            live_brokers=[_live_broker(info) for _, info in sorted(self.live_brokers.items())])

    def stop_replica(self, broker_id: int, partitions: Mapping[TopicPartition, int],
                     delete_partitions: bool) -> StopReplicaRequest:
        """`partitions`: each partition with its current leader epoch."""
        topics: dict[str, list[StopReplicaRequest.StopReplicaPartitionState]] = defaultdict(list)
        for tp, leader_epoch in sorted(partitions.items()):
            topics[tp.topic].append(StopReplicaRequest.StopReplicaPartitionState(
                partition_index=tp.partition, leader_epoch=leader_epoch, delete_partition=delete_partitions))
        return StopReplicaRequest(
            controller_id=self.controller_id, controller_epoch=self.controller_epoch,
            broker_epoch=self.broker_epochs.get(broker_id, -1),
            topic_states=[StopReplicaRequest.StopReplicaTopicState(topic_name=topic, partition_states=states)
                          for topic, states in topics.items()])


def _live_broker(info: BrokerInfo) -> UpdateMetadataRequest.UpdateMetadataBroker:
    return UpdateMetadataRequest.UpdateMetadataBroker(
        id=info.broker_id, rack=info.rack,
        endpoints=[UpdateMetadataRequest.UpdateMetadataEndpoint(
            port=e.port, host=e.host, listener=e.listener_name,
            security_protocol=SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0)) for e in info.endpoints])


def partitions_on_broker(assignments: Mapping[TopicPartition, ReplicaAssignment], broker_id: int,
                         among: Iterable[TopicPartition] | None = None) -> list[TopicPartition]:
    """The partitions (of `among`, else all) that have a replica on `broker_id`."""
    candidates = assignments if among is None else among
    return sorted(tp for tp in candidates if tp in assignments and broker_id in assignments[tp].replicas)
