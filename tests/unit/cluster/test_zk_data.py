"""Kafka's znode JSON: what Kafka writes decodes here, what we write has Kafka's fields and round-trips."""

from __future__ import annotations

import json

from wirebroker.cluster.zk import paths
from wirebroker.cluster.zk.data import (
    BrokerInfo,
    EndPoint,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    ReplicaAssignment,
    TopicAssignment,
    decode_cluster_id,
    decode_controller,
    decode_controller_epoch,
    decode_isr_change_notification,
    decode_topic_config,
    encode_cluster_id,
    encode_controller,
    encode_controller_epoch,
    encode_isr_change_notification,
    encode_topic_config,
)
from wirebroker.log.files import TopicPartition


def test_broker_info_version_5():
    info = BrokerInfo(1, (EndPoint("PLAINTEXT", "host1", 9092), EndPoint("SSL", "host1", 9093, "SSL")), rack="dc1")
    value = json.loads(info.encode(1700000000000))
    assert value == {
        "features": {},
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"},
        "endpoints": ["PLAINTEXT://host1:9092", "SSL://host1:9093"],
        "jmx_port": -1, "port": 9092, "host": "host1", "version": 5, "timestamp": "1700000000000", "rack": "dc1",
    }
    assert BrokerInfo.decode(1, info.encode(0)) == info


def test_broker_info_written_by_kafka_decodes():
    kafka = (b'{"listener_security_protocol_map":{"CLIENT":"SASL_SSL","REPLICATION":"PLAINTEXT"},'
             b'"endpoints":["CLIENT://[::1]:9092","REPLICATION://host1:9093"],"jmx_port":9999,"port":-1,'
             b'"host":null,"version":4,"timestamp":"2233345666"}')
    info = BrokerInfo.decode(7, kafka)
    assert info.endpoints == (EndPoint("CLIENT", "::1", 9092, "SASL_SSL"), EndPoint("REPLICATION", "host1", 9093))
    assert info.endpoints[0].connection_string == "CLIENT://[::1]:9092"
    assert (info.rack, info.jmx_port) == (None, 9999)
    assert BrokerInfo.decode(2, b'{"version":1,"host":"localhost","port":9092,"jmx_port":-1,"timestamp":"1"}') \
        == BrokerInfo(2, (EndPoint("PLAINTEXT", "localhost", 9092),), None, -1)


def test_broker_without_rack_or_plaintext_listener():
    value = json.loads(BrokerInfo(3, (EndPoint("SSL", "h", 1, "SSL"),)).encode(5))
    assert "rack" not in value
    assert (value["host"], value["port"]) == (None, -1)


def test_controller_and_epoch():
    assert json.loads(encode_controller(2, 99)) == {"version": 1, "brokerid": 2, "timestamp": "99"}
    assert decode_controller(b'{"version":2,"brokerid":3,"timestamp":"1","kraftControllerEpoch":-1}') == 3
    assert encode_controller_epoch(12) == b"12"
    assert decode_controller_epoch(b"12") == 12


def test_topic_assignment_version_3():
    assignment = TopicAssignment("ZXlNB8H4R7G7IjQMAzk0mg", {
        0: ReplicaAssignment((1, 2, 3)),
        1: ReplicaAssignment((2, 3, 4), adding_replicas=(4,), removing_replicas=(1,)),
    })
    assert json.loads(assignment.encode()) == {
        "version": 3, "topic_id": "ZXlNB8H4R7G7IjQMAzk0mg",
        "partitions": {"0": [1, 2, 3], "1": [2, 3, 4]},
        "adding_replicas": {"1": [4]}, "removing_replicas": {"1": [1]},
    }
    assert TopicAssignment.decode(assignment.encode()) == assignment
    assert assignment.partitions[1].target_replicas == (2, 3, 4)


def test_topic_assignment_version_1_without_topic_id():
    assert TopicAssignment.decode(b'{"version":1,"partitions":{"0":[1]}}') == \
        TopicAssignment(None, {0: ReplicaAssignment((1,))})


def test_partition_state_carries_the_znode_version_as_partition_epoch():
    kafka = b'{"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}'
    state = LeaderIsrAndControllerEpoch.decode(kafka, zk_version=17)
    assert state == LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1, 2, 3), partition_epoch=17), 5)
    assert json.loads(state.encode()) == json.loads(kafka)  # the partition epoch is not in the JSON
    recovering = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, 3, (1,), leader_recovery_state=1), 5)
    assert json.loads(recovering.encode())["leader_recovery_state"] == 1
    assert LeaderIsrAndControllerEpoch.decode(recovering.encode(), 0).leader_and_isr.leader_recovery_state == 1


def test_topic_config_isr_change_and_cluster_id():
    assert json.loads(encode_topic_config({"retention.ms": "1000"})) == \
        {"version": 1, "config": {"retention.ms": "1000"}}
    assert decode_topic_config(encode_topic_config({"a": "b"})) == {"a": "b"}
    assert decode_topic_config(None) == {}
    partitions = [TopicPartition("t", 0), TopicPartition("u", 2)]
    assert json.loads(encode_isr_change_notification(partitions)) == \
        {"version": 1, "partitions": [{"topic": "t", "partition": 0}, {"topic": "u", "partition": 2}]}
    assert decode_isr_change_notification(encode_isr_change_notification(partitions)) == set(partitions)
    assert json.loads(encode_cluster_id("abc")) == {"version": "1", "id": "abc"}
    assert decode_cluster_id(encode_cluster_id("abc")) == "abc"


def test_paths():
    assert paths.broker(3) == "/brokers/ids/3"
    assert paths.partition_state("t", 2) == "/brokers/topics/t/partitions/2/state"
    assert paths.topic_config("t") == "/config/topics/t"
    assert paths.delete_topic("t") == "/admin/delete_topics/t"
