"""Kafka's answers for the admin and offset APIs' edge cases, asked with exact requests (error codes and messages as
Kafka's controller and KafkaApis give them)."""

from __future__ import annotations

from unittest import mock

import pytest

from tests.integration import raw_client
from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_data_path_errors import a_batch, create_topic, produce
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_configs import AlterConfigsRequest as AC
from wirebroker.protocol.messages.create_partitions import CreatePartitionsRequest as CP
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest as CT
from wirebroker.protocol.messages.delete_records import DeleteRecordsRequest as DR
from wirebroker.protocol.messages.delete_topics import DeleteTopicsRequest as DT
from wirebroker.protocol.messages.describe_configs import DescribeConfigsRequest as DC
from wirebroker.protocol.messages.describe_topic_partitions import DescribeTopicPartitionsRequest as DTP
from wirebroker.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest as IAC
from wirebroker.protocol.messages.init_producer_id import InitProducerIdRequest as INIT
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest as LO
from wirebroker.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochRequest as OFLE
from wirebroker.protocol.primitives import UUID_ZERO

LIST_OFFSETS, CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS = 2, 19, 20, 21
INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH = 22, 23
DESCRIBE_CONFIGS, ALTER_CONFIGS, CREATE_PARTITIONS, INCREMENTAL_ALTER_CONFIGS = 32, 33, 37, 44
DESCRIBE_CLUSTER, DESCRIBE_TOPIC_PARTITIONS = 60, 75
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND = 0, 1, 2


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One broker for this module's tests; each test uses its own topic names."""
    process = BrokerProcess(tmp_path_factory.mktemp("admin-errors") / "data").start()
    yield process
    try:
        process.stop()
    finally:
        process.kill()


@pytest.fixture
def client(shared):
    with RawClient(shared.bootstrap) as raw:
        yield raw


def send(client: RawClient, api_key: int, version: int, body):
    """Send a prebuilt body: keyword fields cannot carry null where a field's default is not null (a nullable string
    such as transactional_id or a config value), so the body is built, then nulled, then sent."""
    with mock.patch.object(raw_client, "request_class", lambda _: lambda: body):
        return client.request(api_key, version)


def topic_names(client: RawClient) -> set[str]:
    return {t.name for t in client.request(3, 0, topics=[]).topics}  # v0: an empty list asks for every topic


def create(client: RawClient, *topics: CT.CreatableTopic, version: int = 7, validate_only: bool = False):
    return client.request(CREATE_TOPICS, version, topics=list(topics), timeout_ms=5000,
                          validate_only=validate_only).topics


def new_topic(name: str, partitions: int = 1, replication_factor: int = 1, **fields) -> CT.CreatableTopic:
    return CT.CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication_factor, **fields)


def list_offsets(client: RawClient, topic: str, *partitions: tuple[int, int], version: int = 7,
                 replica_id: int = -1, isolation_level: int = 0, current_leader_epoch: int = -1,
                 max_num_offsets: int = 1):
    per_version = {"max_num_offsets": max_num_offsets} if version == 0 else {
        "current_leader_epoch": current_leader_epoch}
    topics = [LO.ListOffsetsTopic(name=topic, partitions=[
        LO.ListOffsetsPartition(partition_index=index, timestamp=timestamp, **per_version)
        for index, timestamp in partitions])]
    fields = {"isolation_level": isolation_level} if version >= 2 else {}
    return client.request(LIST_OFFSETS, version, replica_id=replica_id, topics=topics, **fields).topics


def errors_by_name(results) -> dict:
    return {r.name: (r.error_code, r.error_message) for r in results}


# ---- CreateTopics ------------------------------------------------------------------------------------------------

def test_create_topics_refusals_carry_kafkas_messages(client):
    create(client, new_topic("ct-exists"))
    create(client, new_topic("ct.dot"))
    null_config = CT.CreatableTopicConfig(name="retention.ms")
    null_config.value = None
    results = create(
        client,
        new_topic("ct-twice"), new_topic("ct-twice"),
        new_topic("ct-exists"),
        new_topic("ct_dot"),
        new_topic("bad name"),
        new_topic("ct-rf-zero", replication_factor=0),
        new_topic("ct-np-zero", partitions=0),
        new_topic("ct-null-config", configs=[null_config]),
        new_topic("ct-bad-config", configs=[CT.CreatableTopicConfig(name="segment.bytes", value="12")]),
        new_topic("__cluster_metadata"),
    )
    by_name = errors_by_name(results)
    assert by_name["ct-twice"] == (ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    assert by_name["ct-exists"] == (ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'ct-exists' already exists.")
    assert by_name["ct_dot"] == (ErrorCode.INVALID_TOPIC_EXCEPTION,
                                 "Topic 'ct_dot' collides with existing topic: ct.dot")
    assert by_name["bad name"][0] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert by_name["ct-rf-zero"] == (ErrorCode.INVALID_REPLICATION_FACTOR,
                                     "Replication factor must be larger than 0, or -1 to use the default value.")
    assert by_name["ct-np-zero"] == (ErrorCode.INVALID_PARTITIONS,
                                     "Number of partitions was set to an invalid non-positive value.")
    assert by_name["ct-null-config"] == (ErrorCode.INVALID_CONFIG,
                                         "Null value not supported for topic configs: retention.ms")
    assert by_name["ct-bad-config"][0] == ErrorCode.INVALID_CONFIG
    assert by_name["__cluster_metadata"] == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
    assert [r.name for r in results].count("ct-twice") == 1


def test_create_topics_manual_assignments(client):
    assign = CT.CreatableReplicaAssignment
    results = errors_by_name(create(
        client,
        new_topic("ma-ok", -1, -1, assignments=[assign(partition_index=1, broker_ids=[0]),
                                                 assign(partition_index=0, broker_ids=[0])]),
        new_topic("ma-rf", -1, 1, assignments=[assign(partition_index=0, broker_ids=[0])]),
        new_topic("ma-gap", -1, -1, assignments=[assign(partition_index=1, broker_ids=[0])]),
        new_topic("ma-unknown", -1, -1, assignments=[assign(partition_index=0, broker_ids=[5])]),
    ))
    assert results["ma-ok"][0] == ErrorCode.NONE
    assert results["ma-rf"] == (ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                                           "replication factor was not set to -1.")
    assert results["ma-gap"] == (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions should be a consecutive 0-based integer sequence")
    assert results["ma-unknown"] == (ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes "
                                                                          "broker 5, but no such broker is registered.")
    metadata = client.request(3, 0, topics=[])
    assert {t.name: len(t.partitions) for t in metadata.topics}["ma-ok"] == 2


def test_create_topics_answer_by_version_and_validate_only(client):
    [old] = create(client, new_topic("ct-v4", 2), version=4)
    assert (old.error_code, old.num_partitions, old.configs) == (ErrorCode.NONE, -1, [])
    [dry] = create(client, new_topic("ct-dry", 3), validate_only=True)
    assert (dry.error_code, dry.num_partitions, dry.replication_factor) == (ErrorCode.NONE, 3, 1)
    [again] = create(client, new_topic("ct-dry", 3))
    assert again.error_code == ErrorCode.NONE and again.topic_id != UUID_ZERO  # the dry run created nothing
    configs = {c.name: (c.value, c.config_source) for c in again.configs}
    assert configs["cleanup.policy"] == ("delete", 5) and "internal.segment.bytes" not in configs


# ---- DeleteTopics ------------------------------------------------------------------------------------------------

def test_delete_topics_by_name_and_id(client):
    [created] = create(client, new_topic("dt-by-id"))
    create(client, new_topic("dt-by-name"))
    response = client.request(DELETE_TOPICS, 6, timeout_ms=5000, topics=[
        DT.DeleteTopicState(name=None, topic_id=created.topic_id),
        DT.DeleteTopicState(name="dt-by-name", topic_id=UUID_ZERO),
        DT.DeleteTopicState(name="dt-missing", topic_id=UUID_ZERO),
        DT.DeleteTopicState(name=None, topic_id=b"\x01" * 16),
        DT.DeleteTopicState(name="dt-both", topic_id=b"\x02" * 16),
    ])
    results = {(r.name, r.topic_id): (r.error_code, r.error_message) for r in response.responses}
    assert results[("dt-by-id", created.topic_id)] == (ErrorCode.NONE, None)
    assert results[("dt-missing", UUID_ZERO)][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert results[(None, b"\x01" * 16)][0] == ErrorCode.UNKNOWN_TOPIC_ID
    assert results[("dt-both", b"\x02" * 16)] == (ErrorCode.INVALID_REQUEST,
                                                   "You may not specify both topic name and topic id.")
    assert [r.error_code for r in response.responses if r.name == "dt-by-name"] == [ErrorCode.NONE]
    assert not topic_names(client) & {"dt-by-id", "dt-by-name"}


def test_delete_topics_disabled(broker_factory):
    broker = broker_factory(**{"delete.topic.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        create(client, new_topic("kept"))
        new = client.request(DELETE_TOPICS, 5, topic_names=["kept"], timeout_ms=5000).responses
        old = client.request(DELETE_TOPICS, 2, topic_names=["kept"], timeout_ms=5000).responses
        assert [(r.name, r.error_code) for r in new] == [("kept", ErrorCode.TOPIC_DELETION_DISABLED)]
        assert [(r.name, r.error_code) for r in old] == [("kept", ErrorCode.INVALID_REQUEST)]
        assert "kept" in topic_names(client)


# ---- ListOffsets -------------------------------------------------------------------------------------------------

def test_list_offsets_special_timestamps_and_versions(client):
    create_topic(client, "lo-times")
    for _ in range(2):
        produce(client, "lo-times", a_batch(3))  # timestamps 1_700_000_000_000 + 0..2
    [topic] = list_offsets(client, "lo-times", (0, -1))
    assert [(p.offset, p.timestamp, p.leader_epoch) for p in topic.partitions] == [(6, -1, 0)]
    [topic] = list_offsets(client, "lo-times", (0, -3))
    assert [(p.offset, p.timestamp) for p in topic.partitions] == [(2, 1_700_000_000_002)]
    [topic] = list_offsets(client, "lo-times", (0, 1_700_000_000_001))
    assert [(p.offset, p.timestamp) for p in topic.partitions] == [(1, 1_700_000_000_001)]
    [topic] = list_offsets(client, "lo-times", (0, -3), version=6)
    assert [p.error_code for p in topic.partitions] == [ErrorCode.UNSUPPORTED_VERSION]
    [topic] = list_offsets(client, "lo-times", (0, -5), version=9)
    assert [(p.error_code, p.offset, p.leader_epoch) for p in topic.partitions] == [(ErrorCode.NONE, -1, -1)]
    [topic] = list_offsets(client, "lo-times", (0, -7), version=9)
    assert [p.error_code for p in topic.partitions] == [ErrorCode.UNSUPPORTED_VERSION]
    [topic] = list_offsets(client, "lo-times", (0, -1), version=0, max_num_offsets=10)
    assert [(p.error_code, p.old_style_offsets) for p in topic.partitions] == [(ErrorCode.NONE, [6, 0])]
    [topic] = list_offsets(client, "lo-times", (0, -2), version=0, max_num_offsets=10)
    assert [p.old_style_offsets for p in topic.partitions] == [[0]]


def test_list_offsets_errors_per_partition(client):
    create_topic(client, "lo-errors")
    [topic] = list_offsets(client, "lo-errors", (0, -1), (0, -2), (7, -1))
    assert [(p.partition_index, p.error_code, p.offset) for p in topic.partitions] == [
        (0, ErrorCode.INVALID_REQUEST, -1), (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)]
    [topic] = list_offsets(client, "lo-errors", (0, -1), current_leader_epoch=3)
    assert [p.error_code for p in topic.partitions] == [ErrorCode.UNKNOWN_LEADER_EPOCH]
    [topic] = list_offsets(client, "lo-missing-topic", (0, -1))
    assert [p.error_code for p in topic.partitions] == [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]


# ---- OffsetForLeaderEpoch ----------------------------------------------------------------------------------------

def test_offset_for_leader_epoch(client):
    create_topic(client, "ofle")
    produce(client, "ofle", a_batch(4))

    def ask(leader_epoch: int, partition: int = 0, current_leader_epoch: int = -1):
        response = client.request(OFFSET_FOR_LEADER_EPOCH, 4, replica_id=-1, topics=[OFLE.OffsetForLeaderTopic(
            topic="ofle", partitions=[OFLE.OffsetForLeaderPartition(
                partition=partition, current_leader_epoch=current_leader_epoch, leader_epoch=leader_epoch)])])
        [answer] = response.topics[0].partitions
        return answer.error_code, answer.leader_epoch, answer.end_offset

    assert ask(0) == (ErrorCode.NONE, 0, 4)
    assert ask(5) == (ErrorCode.NONE, -1, -1)
    assert ask(0, partition=3) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
    assert ask(0, current_leader_epoch=1)[0] == ErrorCode.UNKNOWN_LEADER_EPOCH


# ---- InitProducerId, DescribeCluster -----------------------------------------------------------------------------

def test_init_producer_id(client):
    def init(transactional_id: str | None, producer_id: int = -1, producer_epoch: int = -1):
        body = INIT(transaction_timeout_ms=60000, producer_id=producer_id, producer_epoch=producer_epoch)
        body.transactional_id = transactional_id
        response = send(client, INIT_PRODUCER_ID, 4, body)
        return response.error_code, response.producer_id, response.producer_epoch

    code, first, epoch = init(None)
    assert (code, epoch) == (ErrorCode.NONE, 0)
    assert init(None, producer_id=first, producer_epoch=0)[1] > first  # a new id, as Kafka gives
    assert init(None, producer_id=first) == (ErrorCode.INVALID_REQUEST, -1, -1)
    code, txn_producer, txn_epoch = init("txn-app")  # the transaction coordinator's answer (issue 12)
    assert (code, txn_epoch) == (ErrorCode.NONE, 0)
    assert init("txn-app") == (ErrorCode.NONE, txn_producer, 1)  # a new producer bumps the epoch
    assert init("")[0] == ErrorCode.INVALID_REQUEST


def test_describe_cluster_endpoint_types(client, shared):
    response = client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False, endpoint_type=1)
    assert (response.error_code, response.controller_id) == (ErrorCode.NONE, 0)
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", shared.port)]
    assert response.cluster_authorized_operations == -(2**31)
    controller = client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False, endpoint_type=2)
    assert (controller.error_code, controller.error_message) == (
        ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
    unknown = client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=False, endpoint_type=7)
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                                                           "Unsupported endpoint type 7")


# ---- DescribeConfigs, IncrementalAlterConfigs, AlterConfigs -------------------------------------------------------

def describe(client: RawClient, *resources: tuple[int, str, list[str] | None], synonyms: bool = False):
    return client.request(DESCRIBE_CONFIGS, 4, include_synonyms=synonyms, include_documentation=False, resources=[
        DC.DescribeConfigsResource(resource_type=t, resource_name=n, configuration_keys=keys)
        for t, n, keys in resources]).results


def test_describe_configs_resources(client):
    create(client, new_topic("dc-topic", configs=[CT.CreatableTopicConfig(name="retention.ms", value="1000")]))
    topic, missing, other_broker, logger_without_id, own_broker = describe(
        client, (TOPIC, "dc-topic", ["retention.ms", "segment.bytes", "no.such.key"]), (TOPIC, "dc-missing", None),
        (BROKER, "7", None), (BROKER_LOGGER, "", None), (BROKER, "0", ["node.id"]), synonyms=True)
    assert {c.name: (c.value, c.config_source, c.config_type) for c in topic.configs} == {
        "retention.ms": ("1000", 1, 5), "segment.bytes": ("1073741824", 5, 3)}
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and missing.configs == []
    assert (other_broker.error_code, other_broker.error_message) == (
        ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 0 or empty string, but received 7")
    assert (logger_without_id.error_code, logger_without_id.error_message) == (
        ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    assert [(c.name, c.value, c.read_only, c.config_source) for c in own_broker.configs] == [("node.id", "0", True, 4)]
    unknown_type = describe(client, (TOPIC, "dc-topic", None), (99, "x", None))
    assert [r.error_code for r in unknown_type] == [ErrorCode.INVALID_REQUEST] * 2


def test_synonyms_follow_kafkas_rules(broker_factory):
    broker = broker_factory(**{"log.retention.hours": "48", "log.segment.bytes": "2097152"})
    with RawClient(broker.bootstrap) as client:
        create(client, new_topic("syn"))
        [result] = describe(client, (TOPIC, "syn", ["retention.ms", "segment.bytes"]), synonyms=True)
    configs = {c.name: c for c in result.configs}
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == (str(48 * 3_600_000), 5)
    assert configs["retention.ms"].synonyms == []
    assert configs["segment.bytes"].config_source == 4
    assert [(s.name, s.value, s.source) for s in configs["segment.bytes"].synonyms] == [
        ("log.segment.bytes", "2097152", 4), ("log.segment.bytes", "1073741824", 5)]


def incremental(client: RawClient, *resources: tuple[int, str, list[tuple[str, int, str | None]]],
                validate_only: bool = False):
    def config(name: str, operation: int, value: str | None) -> IAC.AlterableConfig:
        alterable = IAC.AlterableConfig(name=name, config_operation=operation)
        alterable.value = value
        return alterable

    body = IAC(validate_only=validate_only, resources=[
        IAC.AlterConfigsResource(resource_type=t, resource_name=n, configs=[config(*c) for c in configs])
        for t, n, configs in resources])
    return send(client, INCREMENTAL_ALTER_CONFIGS, 1, body).responses


def test_incremental_alter_configs(client):
    create(client, new_topic("iac"))
    ok, append_to_missing, missing, broker = incremental(
        client, (TOPIC, "iac", [("cleanup.policy", APPEND, "compact"), ("retention.ms", SET, "5000")]),
        (TOPIC, "iac-missing-1", [("segment.ms", APPEND, "1")]),
        (TOPIC, "iac-missing-2", [("segment.ms", SET, "1")]),
        (BROKER, "", [("log.retention.ms", SET, "1"), ("num.io.threads", SET, "2"), ("log.dirs", DELETE, None)]))
    assert (ok.error_code, ok.error_message) == (ErrorCode.NONE, None)
    assert (append_to_missing.error_code, append_to_missing.error_message) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key segment.ms because its type is not LIST.")
    assert (missing.error_code, missing.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                           "The topic 'iac-missing-2' does not exist.")
    assert (broker.error_code, broker.error_message) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: Set(log.retention.ms, num.io.threads)")
    [result] = describe(client, (TOPIC, "iac", ["cleanup.policy", "retention.ms"]))
    assert {c.name: c.value for c in result.configs} == {"cleanup.policy": "delete,compact", "retention.ms": "5000"}
    twice = incremental(client, (TOPIC, "iac", [("retention.ms", DELETE, None)]),
                        (TOPIC, "iac", [("retention.ms", DELETE, None)]))
    assert [(r.error_code, r.error_message) for r in twice] == [
        (ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    [null, bad] = incremental(client, (TOPIC, "iac", [("retention.ms", SET, None)]),
                              (TOPIC, "iac-bad", [("segment.bytes", SET, "12")]))
    assert (null.error_code, null.error_message) == (ErrorCode.INVALID_REQUEST,
                                                     "Null value not supported for : retention.ms")
    assert bad.error_code == ErrorCode.INVALID_CONFIG
    [dry] = incremental(client, (TOPIC, "iac", [("retention.ms", DELETE, None)]), validate_only=True)
    assert dry.error_code == ErrorCode.NONE
    [result] = describe(client, (TOPIC, "iac", ["retention.ms"]))
    assert [c.value for c in result.configs] == ["5000"]


def test_broker_logger_levels(client):
    [changed] = incremental(client, (BROKER_LOGGER, "0", [("wirebroker.apis.list_offsets", SET, "DEBUG")]))
    assert changed.error_code == ErrorCode.NONE
    [result] = describe(client, (BROKER_LOGGER, "0", ["wirebroker.apis.list_offsets"]))
    assert [(c.value, c.config_source) for c in result.configs] == [("DEBUG", 6)]
    root, other_node = incremental(client, (BROKER_LOGGER, "0", [("root", DELETE, None)]),
                                   (BROKER_LOGGER, "1", [("root", SET, "INFO")]))
    assert (root.error_code, root.error_message) == (ErrorCode.INVALID_REQUEST,
                                                     "Removing the log level of the root logger is not allowed")
    assert (other_node.error_code, other_node.error_message) == (ErrorCode.INVALID_REQUEST,
                                                                 "Unexpected broker id, expected 0, but received 1")


def test_alter_configs_replaces_every_override(client):
    create(client, new_topic("ac", configs=[CT.CreatableTopicConfig(name="retention.ms", value="1000")]))
    topic, logger = client.request(ALTER_CONFIGS, 2, validate_only=False, resources=[
        AC.AlterConfigsResource(resource_type=TOPIC, resource_name="ac",
                                configs=[AC.AlterableConfig(name="segment.ms", value="60000")]),
        AC.AlterConfigsResource(resource_type=BROKER_LOGGER, resource_name="0", configs=[]),
    ]).responses
    assert topic.error_code == ErrorCode.NONE
    assert (logger.error_code, logger.error_message) == (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")
    [result] = describe(client, (TOPIC, "ac", ["retention.ms", "segment.ms"]))
    assert {c.name: (c.value, c.config_source) for c in result.configs} == {
        "retention.ms": ("604800000", 5), "segment.ms": ("60000", 1)}


# ---- CreatePartitions, DeleteRecords, DescribeTopicPartitions -----------------------------------------------------

def test_create_partitions_refusals(client):
    create(client, new_topic("cp", 2))
    response = client.request(CREATE_PARTITIONS, 3, timeout_ms=5000, validate_only=False, topics=[
        CP.CreatePartitionsTopic(name="cp", count=2, assignments=None),
        CP.CreatePartitionsTopic(name="cp-missing", count=2, assignments=None),
    ])
    results = errors_by_name(response.results)
    assert results["cp"] == (ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s).")
    assert results["cp-missing"][0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    [wrong] = client.request(CREATE_PARTITIONS, 3, timeout_ms=5000, validate_only=False, topics=[
        CP.CreatePartitionsTopic(name="cp", count=4, assignments=[CP.CreatePartitionsAssignment(broker_ids=[0])]),
    ]).results
    assert (wrong.error_code, wrong.error_message) == (
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")
    [grown] = client.request(CREATE_PARTITIONS, 3, timeout_ms=5000, validate_only=False, topics=[
        CP.CreatePartitionsTopic(name="cp", count=3, assignments=[CP.CreatePartitionsAssignment(broker_ids=[0])]),
    ]).results
    assert grown.error_code == ErrorCode.NONE
    [topic] = list_offsets(client, "cp", (2, -1))
    assert [p.error_code for p in topic.partitions] == [ErrorCode.NONE]


def test_delete_records(client):
    create_topic(client, "dr")
    produce(client, "dr", a_batch(5))

    def delete(topic: str, offset: int):
        [result] = client.request(DELETE_RECORDS, 2, timeout_ms=5000, topics=[
            DR.DeleteRecordsTopic(name=topic, partitions=[DR.DeleteRecordsPartition(partition_index=0, offset=offset)])
        ]).topics
        return result.partitions[0].error_code, result.partitions[0].low_watermark

    assert delete("dr", 2) == (ErrorCode.NONE, 2)
    assert delete("dr", 1) == (ErrorCode.NONE, 2)
    assert delete("dr", 9) == (ErrorCode.OFFSET_OUT_OF_RANGE, -1)
    assert delete("dr", -1) == (ErrorCode.NONE, 5)
    assert delete("__consumer_offsets", 0) == (ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
    assert delete("dr-missing", 0) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)
    [topic] = list_offsets(client, "dr", (0, -2))
    assert [p.offset for p in topic.partitions] == [5]


def test_describe_topic_partitions_pages(client):
    create(client, new_topic("dtp-a", 3), new_topic("dtp-b", 2))

    def page(limit: int, cursor: DTP.Cursor | None = None, names=("dtp-a", "dtp-b", "dtp-missing")):
        return client.request(DESCRIBE_TOPIC_PARTITIONS, 0, response_partition_limit=limit, cursor=cursor,
                              topics=[DTP.TopicRequest(name=n) for n in names])

    first = page(2)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in first.topics] == [("dtp-a", [0, 1])]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("dtp-a", 2)
    second = page(2, DTP.Cursor(topic_name="dtp-a", partition_index=2))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in second.topics] == [
        ("dtp-a", [2]), ("dtp-b", [0])]
    assert (second.next_cursor.topic_name, second.next_cursor.partition_index) == ("dtp-b", 1)
    last = page(10, DTP.Cursor(topic_name="dtp-b", partition_index=1))
    assert [(t.name, t.error_code) for t in last.topics] == [("dtp-b", 0), ("dtp-missing", 3)]
    assert last.next_cursor is None
    bad_cursor = page(10, DTP.Cursor(topic_name="dtp-zzz", partition_index=0), names=("dtp-a",))
    assert [(t.name, t.error_code) for t in bad_cursor.topics] == [("dtp-a", ErrorCode.INVALID_REQUEST)]
