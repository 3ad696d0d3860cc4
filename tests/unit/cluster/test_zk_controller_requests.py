"""The requests the controller sends, built from its view: LeaderAndIsr v6, UpdateMetadata v7, StopReplica v3, as
they go on the wire (encoded and decoded at those versions)."""

from __future__ import annotations

import uuid

from wirebroker.cluster.zk.controller_requests import (
    LEADER_AND_ISR_FULL,
    LEADER_AND_ISR_INCREMENTAL,
    LEADER_AND_ISR_VERSION,
    LEADER_DURING_DELETE,
    STOP_REPLICA_VERSION,
    UPDATE_METADATA_VERSION,
    RequestBuilder,
    topic_id_bytes,
)
from wirebroker.cluster.zk.data import (
    BrokerInfo,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
)
from wirebroker.log.files import TopicPartition
from wirebroker.log.metadata_files import uuid_to_kafka_string
from wirebroker.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from wirebroker.protocol.messages.stop_replica import StopReplicaRequest
from wirebroker.protocol.messages.update_metadata import UpdateMetadataRequest

TOPIC_ID = uuid.UUID("0123456789abcdef0123456789abcdef")
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def broker(broker_id: int, rack: str | None = None) -> BrokerInfo:
    return BrokerInfo(broker_id, (EndPoint("INTERNAL", f"b{broker_id}", 19090 + broker_id),
                                  EndPoint("EXTERNAL", "localhost", 9090 + broker_id, "SASL_SSL")), rack)


def builder(live=(1, 2, 3)) -> RequestBuilder:
    return RequestBuilder(
        controller_id=2, controller_epoch=7, listener_name="INTERNAL", topic_ids={"t": TOPIC_ID.bytes},
        assignments={T0: ReplicaAssignment((1, 2, 3)), T1: ReplicaAssignment((3, 4))},
        live_brokers={b: broker(b, rack=f"r{b}") for b in live}, broker_epochs={b: 100 + b for b in live})


STATES = {T0: LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 4, (1, 2, 3), partition_epoch=9), 6),
          T1: LeaderIsrAndControllerEpoch(LeaderAndIsr(3, 2, (3,), partition_epoch=3), 7)}


def round_trip(request, version):
    return type(request).decode(memoryview(request.encode(version)), version)


def test_topic_ids_are_kafkas_base64_uuids():
    assert topic_id_bytes(uuid_to_kafka_string(TOPIC_ID)) == TOPIC_ID.bytes
    assert topic_id_bytes(None) == bytes(16)


def test_leader_and_isr_goes_to_each_live_replica_with_its_partitions():
    requests = builder().leader_and_isr_by_broker(STATES, is_new={T1}, full_for={3})
    assert sorted(requests) == [1, 2, 3]  # broker 4 (a replica of t-1) is not live
    to_3 = round_trip(requests[3], LEADER_AND_ISR_VERSION)
    assert (to_3.controller_id, to_3.controller_epoch, to_3.broker_epoch, to_3.type) == (2, 7, 103, LEADER_AND_ISR_FULL)
    [topic] = to_3.topic_states
    assert (topic.topic_name, topic.topic_id) == ("t", TOPIC_ID.bytes)
    first, second = topic.partition_states
    assert (first.partition_index, first.leader, first.leader_epoch, first.isr, first.partition_epoch,
            first.replicas, first.is_new, first.controller_epoch) == (0, 1, 4, [1, 2, 3], 9, [1, 2, 3], False, 6)
    assert (second.partition_index, second.is_new, second.replicas) == (1, True, [3, 4])
    assert [(leader.broker_id, leader.host_name, leader.port) for leader in to_3.live_leaders] == [
        (1, "b1", 19091), (3, "b3", 19093)]  # the inter-broker listener's endpoints
    to_1 = round_trip(requests[1], LEADER_AND_ISR_VERSION)
    assert to_1.type == LEADER_AND_ISR_INCREMENTAL
    assert [p.partition_index for p in to_1.topic_states[0].partition_states] == [0]


def test_update_metadata_carries_every_endpoint_rack_and_offline_replica():
    request = round_trip(builder().update_metadata(1, STATES), UPDATE_METADATA_VERSION)
    assert (request.controller_id, request.controller_epoch, request.broker_epoch) == (2, 7, 101)
    three = next(b for b in request.live_brokers if b.id == 3)
    assert three.rack == "r3"
    assert [(e.listener, e.host, e.port, e.security_protocol) for e in three.endpoints] == [
        ("INTERNAL", "b3", 19093, 0), ("EXTERNAL", "localhost", 9093, 3)]
    [topic] = request.topic_states
    assert topic.topic_id == TOPIC_ID.bytes
    t1 = next(p for p in topic.partition_states if p.partition_index == 1)
    assert (t1.leader, t1.zk_version, t1.replicas, t1.offline_replicas) == (3, 3, [3, 4], [4])


def test_a_topic_being_deleted_is_announced_with_leader_minus_two():
    request = round_trip(builder().update_metadata(1, STATES, deleting={T0, T1}), UPDATE_METADATA_VERSION)
    assert {p.leader for p in request.topic_states[0].partition_states} == {LEADER_DURING_DELETE}


def test_stop_replica_names_each_partition_with_its_leader_epoch():
    request = round_trip(builder().stop_replica(3, {T0: 4, T1: 2}, delete_partitions=True), STOP_REPLICA_VERSION)
    assert (request.controller_id, request.controller_epoch, request.broker_epoch) == (2, 7, 103)
    [topic] = request.topic_states
    assert [(p.partition_index, p.leader_epoch, p.delete_partition) for p in topic.partition_states] == [
        (0, 4, True), (1, 2, True)]
    assert isinstance(request, StopReplicaRequest)
    assert isinstance(builder().leader_and_isr(1, {}), LeaderAndIsrRequest)
    assert isinstance(builder().update_metadata(1, {}), UpdateMetadataRequest)
