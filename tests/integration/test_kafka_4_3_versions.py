"""The versions Kafka 4.3.1 serves and wirebroker now does too (issue 17), asked with exact requests and through
kafka-python, which picks the newest version both sides speak."""

from __future__ import annotations

import time

import kafka
import pytest
from kafka.admin import OffsetSpec
from kafka.protocol.admin import DescribeClusterRequest as KafkaPythonDescribeClusterRequest
from kafka.protocol.consumer import FetchRequest as KafkaPythonFetchRequest
from kafka.protocol.consumer import ListOffsetsRequest as KafkaPythonListOffsetsRequest
from kafka.protocol.consumer.group import OffsetCommitRequest as KafkaPythonOffsetCommitRequest
from kafka.protocol.consumer.group import OffsetFetchRequest as KafkaPythonOffsetFetchRequest
from kafka.protocol.metadata import MetadataRequest as KafkaPythonMetadataRequest
from kafka.protocol.producer import ProduceRequest as KafkaPythonProduceRequest

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_admin_api_errors import send
from tests.integration.test_data_path_errors import a_batch
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.primitives import UUID_ZERO

PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH = 0, 1, 2, 3, 8, 9
DESCRIBE_GROUPS, DESCRIBE_LOG_DIRS, ALTER_PARTITION_REASSIGNMENTS, DESCRIBE_CLUSTER = 15, 35, 45, 60
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE, LIST_CONFIG_RESOURCES = 68, 69, 74
UNKNOWN_MEMBER_TYPE, CONSUMER_MEMBER = -1, 1  # ConsumerGroupDescribe v1 (KIP-1099)
TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32  # ConfigResource.Type ids
EARLIEST_PENDING_UPLOAD = -6  # KIP-1023


@pytest.fixture
def admin(broker):
    client = kafka.KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def negotiated(admin: kafka.KafkaAdminClient, request_class: type) -> int:
    return admin._manager.broker_version_data.api_version(request_class)


def by_id(topic_id: bytes) -> MetadataRequest.MetadataRequestTopic:
    topic = MetadataRequest.MetadataRequestTopic(topic_id=topic_id)
    topic.name = None  # the constructor reads None as the schema's default; a topic named by id has a null name
    return topic


def test_metadata_v13_names_topics_by_name_and_id_with_a_top_level_error_code(broker):
    with RawClient(broker.bootstrap) as client:
        by_name = client.request(METADATA, 13, topics=[MetadataRequest.MetadataRequestTopic(name="meta13")],
                                 allow_auto_topic_creation=True)
        assert by_name.error_code == ErrorCode.NONE
        (topic,) = by_name.topics
        assert topic.error_code == ErrorCode.NONE and topic.name == "meta13" and topic.topic_id != UUID_ZERO
        named = client.request(METADATA, 13, topics=[by_id(topic.topic_id)], allow_auto_topic_creation=False)
        assert named.error_code == ErrorCode.NONE
        assert [(t.name, t.topic_id, t.error_code) for t in named.topics] == [("meta13", topic.topic_id, 0)]
        unknown = client.request(METADATA, 13, topics=[by_id(b"\x01" * 16)], allow_auto_topic_creation=False)
        assert unknown.error_code == ErrorCode.NONE and unknown.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_kafka_python_reads_metadata_at_v13(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("kp-meta13", 2, 1)])
    assert negotiated(admin, KafkaPythonMetadataRequest) == 13
    (described,) = admin.describe_topics(["kp-meta13"])
    assert described["error_code"] == 0 and len(described["partitions"]) == 2


def list_offset(client: RawClient, version: int, topic: str, timestamp: int):
    from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest as L

    response = client.request(LIST_OFFSETS, version, replica_id=-1, topics=[
        L.ListOffsetsTopic(name=topic, partitions=[L.ListOffsetsPartition(partition_index=0, timestamp=timestamp)])])
    return response.topics[0].partitions[0]


def test_list_offsets_v11_answers_earliest_pending_upload_as_kafka_without_tiered_storage(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("offsets11", 1, 1)])
    produce_values(broker.bootstrap, "offsets11", 3)
    with RawClient(broker.bootstrap) as client:
        pending = list_offset(client, 11, "offsets11", EARLIEST_PENDING_UPLOAD)
        assert (pending.error_code, pending.offset, pending.timestamp, pending.leader_epoch) == (0, -1, -1, -1)
        assert list_offset(client, 10, "offsets11", EARLIEST_PENDING_UPLOAD).error_code == ErrorCode.UNSUPPORTED_VERSION
        latest = list_offset(client, 11, "offsets11", -1)
        assert (latest.error_code, latest.offset) == (0, 3)
    assert negotiated(admin, KafkaPythonListOffsetsRequest) == 11
    tp = kafka.TopicPartition("offsets11", 0)
    offsets = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST})
    assert offsets[tp].offset == 0


def list_config_resources(client: RawClient, version: int, *types: int):
    response = client.request(LIST_CONFIG_RESOURCES, version, **({"resource_types": list(types)} if version else {}))
    return response.error_code, [(r.resource_type, r.resource_name) for r in response.config_resources]


def test_list_config_resources_lists_brokers_loggers_and_topics_in_kafkas_order(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("configs74", 1, 1)])
    (node,) = (str(b["broker_id"]) for b in admin.describe_cluster()["brokers"])
    with RawClient(broker.bootstrap) as client:
        assert list_config_resources(client, 0) == (0, [])  # v0: client metrics only, and none are kept
        assert list_config_resources(client, 1, BROKER, BROKER_LOGGER) == (0, [(BROKER_LOGGER, node), (BROKER, node)])
        assert list_config_resources(client, 1, TOPIC) == (0, [(TOPIC, "configs74")])
        assert list_config_resources(client, 1, GROUP, CLIENT_METRICS) == (0, [])
        everything = list_config_resources(client, 1)
        assert everything == (0, [(BROKER_LOGGER, node), (BROKER, node), (TOPIC, "configs74")])
        assert list_config_resources(client, 1, TOPIC, 99) == (ErrorCode.UNSUPPORTED_VERSION, [])
    listed = admin.list_config_resources(["TOPIC", "BROKER"])
    assert listed == {"topic": ["configs74"], "broker": [node]}


UNKNOWN_ID = b"\x07" * 16


def topic_id_of(client: RawClient, name: str) -> bytes:
    response = client.request(METADATA, 13, topics=[MetadataRequest.MetadataRequestTopic(name=name)],
                              allow_auto_topic_creation=True)
    return response.topics[0].topic_id


def commit_v10(client: RawClient, group: str, *offsets: tuple[bytes, int, int]):
    from wirebroker.protocol.messages.offset_commit import OffsetCommitRequest as C

    response = client.request(OFFSET_COMMIT, 10, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                              topics=[C.OffsetCommitRequestTopic(topic_id=topic_id, partitions=[
                                  C.OffsetCommitRequestPartition(partition_index=partition, committed_offset=offset)])
                                  for topic_id, partition, offset in offsets])
    return [(t.topic_id, p.partition_index, p.error_code) for t in response.topics for p in t.partitions]


def fetch_offsets(client: RawClient, version: int, group: str, topics: list | None):
    from wirebroker.protocol.messages.offset_fetch import OffsetFetchRequest as F

    asked = None if topics is None else [
        F.OffsetFetchRequestTopics(**({"topic_id": t} if version >= 10 else {"name": t}), partition_indexes=[0])
        for t in topics]
    response = client.request(OFFSET_FETCH, version, groups=[F.OffsetFetchRequestGroup(group_id=group, topics=asked)])
    (answer,) = response.groups
    assert answer.error_code == ErrorCode.NONE
    key = (lambda t: t.topic_id) if version >= 10 else (lambda t: t.name)
    return [(key(t), p.partition_index, p.committed_offset, p.error_code) for t in answer.topics for p in t.partitions]


def test_offset_commit_and_fetch_v10_name_topics_by_id(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = topic_id_of(client, "commit10")
        assert commit_v10(client, "g10", (topic_id, 0, 5), (UNKNOWN_ID, 0, 9)) == [
            (topic_id, 0, ErrorCode.NONE), (UNKNOWN_ID, 0, ErrorCode.UNKNOWN_TOPIC_ID)]
        assert fetch_offsets(client, 10, "g10", [topic_id, UNKNOWN_ID]) == [
            (topic_id, 0, 5, ErrorCode.NONE), (UNKNOWN_ID, 0, -1, ErrorCode.UNKNOWN_TOPIC_ID)]
        assert fetch_offsets(client, 10, "g10", None) == [(topic_id, 0, 5, ErrorCode.NONE)]
        assert fetch_offsets(client, 9, "g10", ["commit10"]) == [("commit10", 0, 5, ErrorCode.NONE)]


def test_kafka_python_commits_and_fetches_offsets_at_v10(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("kp-commit10", 1, 1)])
    assert negotiated(admin, KafkaPythonOffsetCommitRequest) == 10
    assert negotiated(admin, KafkaPythonOffsetFetchRequest) == 10
    tp = kafka.TopicPartition("kp-commit10", 0)
    consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="kp-g10", enable_auto_commit=False)
    try:
        consumer.assign([tp])
        consumer.commit({tp: kafka.OffsetAndMetadata(7, "", -1)})
        assert consumer.committed(tp) == 7
    finally:
        consumer.close()
    assert admin.list_group_offsets({"kp-g10": None})["kp-g10"][tp].offset == 7  # all of the group's offsets


def fetch_v18(client: RawClient, topic_id: bytes, offset: int, *, replica_id: int = -1,
              high_watermark: int | None = None, max_wait_ms: int = 0):
    from wirebroker.protocol.messages.fetch import FetchRequest as F

    partition = F.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1_000_000)
    if high_watermark is not None:
        partition.high_watermark = high_watermark
    started = time.monotonic()
    response = client.request(FETCH, 18, replica_state=F.ReplicaState(replica_id=replica_id), max_wait_ms=max_wait_ms,
                              min_bytes=1, max_bytes=1_000_000,
                              topics=[F.FetchTopic(topic_id=topic_id, partitions=[partition])])
    (topic,) = response.responses
    assert topic.topic_id == topic_id
    return topic.partitions[0], time.monotonic() - started


def test_fetch_v18_by_topic_id_for_a_consumer(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = topic_id_of(client, "fetch18")
        produce_values(broker.bootstrap, "fetch18", 3)
        consumed, _ = fetch_v18(client, topic_id, 0)
    assert consumed.error_code == ErrorCode.NONE and consumed.high_watermark == 3 and consumed.records


@pytest.fixture(scope="module")
def two_brokers(tmp_path_factory):
    with ClusterProcess(tmp_path_factory.mktemp("two-brokers"), brokers=2) as cluster:
        yield cluster


def new_topic(cluster: ClusterProcess, name: str, replication_factor: int) -> tuple[int, int]:
    """Create a one-partition topic; (its leader, the other broker)."""
    admin = kafka.KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        admin.create_topics([kafka.admin.NewTopic(name, 1, replication_factor)])
    finally:
        admin.close()
    leader = cluster.wait_until(lambda: max(cluster.leader_of(name, 0), 0), 30, f"a leader for {name}")
    (other,) = set(cluster.node_ids) - {leader}
    return leader, other


def test_fetch_v18_answers_a_follower_behind_the_high_watermark_at_once(two_brokers):
    leader, follower = new_topic(two_brokers, "follow18", 2)
    produce_values(two_brokers.bootstrap, "follow18", 3)  # acks=all: the follower has them, the high watermark is 3
    with RawClient(two_brokers.broker(leader).bootstrap) as client:
        topic_id = topic_id_of(client, "follow18")
        # The follower's fetch at the log end offset finds nothing to read. A high watermark behind the leader's
        # (0 < 3) is news answered at once; a current one waits for min_bytes until max_wait_ms.
        behind, waited_behind = fetch_v18(client, topic_id, 3, replica_id=follower, high_watermark=0,
                                          max_wait_ms=3000)
        current, waited_current = fetch_v18(client, topic_id, 3, replica_id=follower, high_watermark=3,
                                            max_wait_ms=600)
    assert (behind.error_code, behind.high_watermark) == (ErrorCode.NONE, 3) and waited_behind < 1.0
    assert current.error_code == ErrorCode.NONE and waited_current >= 0.5


def produce_values(bootstrap: str, topic: str, count: int) -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i in range(count):
            producer.send(topic, b"v%d" % i)
        producer.flush()
    finally:
        producer.close()


def test_kafka_python_fetches_at_v18(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("kp-fetch18", 1, 1)])
    assert negotiated(admin, KafkaPythonFetchRequest) == 18
    produce_values(broker.bootstrap, "kp-fetch18", 1)
    consumer = kafka.KafkaConsumer("kp-fetch18", bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                   consumer_timeout_ms=10_000)
    try:
        assert [m.value for m in consumer] == [b"v0"]
    finally:
        consumer.close()


def produce_v13(client: RawClient, topic_id: bytes, batch: bytes):
    from wirebroker.protocol.messages.produce import ProduceRequest as P

    response = client.request(PRODUCE, 13, acks=-1, timeout_ms=5000, topic_data=[
        P.TopicProduceData(topic_id=topic_id, partition_data=[P.PartitionProduceData(index=0, records=batch)])])
    (topic,) = response.responses
    (partition,) = topic.partition_responses
    return topic.topic_id, partition.error_code, partition.base_offset


def test_produce_v13_names_topics_by_id(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = topic_id_of(client, "produce13")
        assert produce_v13(client, topic_id, a_batch(3)) == (topic_id, ErrorCode.NONE, 0)
        assert produce_v13(client, topic_id, a_batch(2)) == (topic_id, ErrorCode.NONE, 3)
        assert produce_v13(client, UNKNOWN_ID, a_batch(1)) == (UNKNOWN_ID, ErrorCode.UNKNOWN_TOPIC_ID, -1)
        consumed, _ = fetch_v18(client, topic_id, 0)
    assert consumed.high_watermark == 5


def test_kafka_python_produces_at_v13(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("kp-produce13", 1, 1)])
    assert negotiated(admin, KafkaPythonProduceRequest) == 13
    produce_values(broker.bootstrap, "kp-produce13", 2)
    consumer = kafka.KafkaConsumer("kp-produce13", bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest",
                                   consumer_timeout_ms=10_000)
    try:
        assert [m.value for m in consumer] == [b"v0", b"v1"]
    finally:
        consumer.close()


def test_describe_log_dirs_v5_and_kafka_python_reads_this_broker_as_kafka_4_3(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("dirs5", 1, 1)])
    with RawClient(broker.bootstrap) as client:
        response = client.request(DESCRIBE_LOG_DIRS, 5, topics=None)
    (result,) = response.results
    assert result.error_code == ErrorCode.NONE and result.is_cordoned is False and result.total_bytes > 0
    assert "dirs5" in {t.name for t in result.topics}
    # kafka-python infers a broker's version from the newest versions it serves: 4.3 needs DescribeLogDirs v5,
    # 4.2 ListOffsets v11, 4.1 Produce v13, as Kafka 4.3.1 answers.
    assert admin._manager.broker_version_data.broker_version == (4, 3)
    ((described_dir,),) = (b["log_dirs"] for b in admin.describe_log_dirs(["dirs5"]))
    assert described_dir["error_code"] == 0 and described_dir["is_cordoned"] is False


def describe_group(client: RawClient, version: int, group: str) -> tuple[int, str | None, str]:
    (described,) = client.request(DESCRIBE_GROUPS, version, groups=[group]).groups
    return described.error_code, described.error_message, described.group_state


def join_consumer_group(client: RawClient, group: str, member: str, topic: str) -> None:
    """A member of a KIP-848 consumer group, by ConsumerGroupHeartbeat."""
    from wirebroker.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest as H

    heartbeat = H(group_id=group, member_id=member, member_epoch=0, rebalance_timeout_ms=30_000,
                  subscribed_topic_names=[topic], topic_partitions=[])
    heartbeat.instance_id = heartbeat.rack_id = heartbeat.subscribed_topic_regex = heartbeat.server_assignor = None
    assert send(client, CONSUMER_GROUP_HEARTBEAT, 0, heartbeat).error_code == ErrorCode.NONE


def test_describe_groups_v6_says_which_groups_are_not_found_or_not_classic(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = topic_id_of(client, "groups6")
        assert commit_v10(client, "classic6", (topic_id, 0, 1))[0][2] == ErrorCode.NONE  # a simple classic group
        join_consumer_group(client, "consumer6", "a-member-6", "groups6")
        assert describe_group(client, 6, "classic6") == (ErrorCode.NONE, None, "Empty")
        assert describe_group(client, 6, "consumer6") == (
            ErrorCode.GROUP_ID_NOT_FOUND, "Group consumer6 is not a classic group.", "Dead")
        assert describe_group(client, 6, "absent6") == (ErrorCode.GROUP_ID_NOT_FOUND, "Group absent6 not found.", "Dead")
        assert describe_group(client, 5, "consumer6") == (ErrorCode.NONE, None, "Dead")
        assert describe_group(client, 5, "absent6") == (ErrorCode.NONE, None, "Dead")


def test_describe_cluster_v2_lists_no_fenced_broker(broker, admin):
    with RawClient(broker.bootstrap) as client:
        for include_fenced in (True, False):
            response = client.request(DESCRIBE_CLUSTER, 2, include_fenced_brokers=include_fenced)
            assert response.error_code == ErrorCode.NONE
            assert [(b.host, b.port, b.is_fenced) for b in response.brokers] == [
                ("127.0.0.1", broker.port, False)]
    assert negotiated(admin, KafkaPythonDescribeClusterRequest) == 2
    assert len(admin.describe_cluster()["brokers"]) == 1


def test_consumer_group_describe_v1_names_each_members_protocol(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id_of(client, "members1")
        join_consumer_group(client, "consumer1", "a-member-1", "members1")
        for version, member_type in ((1, CONSUMER_MEMBER), (0, UNKNOWN_MEMBER_TYPE)):  # v0 has no member type
            (group,) = client.request(CONSUMER_GROUP_DESCRIBE, version, group_ids=["consumer1"]).groups
            assert group.error_code == ErrorCode.NONE
            assert [(m.member_id, m.member_type) for m in group.members] == [("a-member-1", member_type)]


def reassign(client: RawClient, version: int, topic: str, replicas: list[int], **allow):
    from wirebroker.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsRequest as R

    response = client.request(ALTER_PARTITION_REASSIGNMENTS, version, timeout_ms=10_000, **allow, topics=[
        R.ReassignableTopic(name=topic, partitions=[R.ReassignablePartition(partition_index=0, replicas=replicas)])])
    assert response.error_code == ErrorCode.NONE
    (partition,) = response.responses[0].partitions
    return response.allow_replication_factor_change, partition.error_code, partition.error_message


def test_alter_partition_reassignments_v1_on_one_node_echoes_the_flag(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id_of(client, "reassign1")
        (node,) = (b.broker_id for b in client.request(DESCRIBE_CLUSTER, 2).brokers)
        assert reassign(client, 1, "reassign1", [node], allow_replication_factor_change=False) == (False, 0, None)
        assert reassign(client, 1, "reassign1", [node]) == (True, 0, None)


def test_alter_partition_reassignments_v1_refuses_a_replication_factor_change_when_asked(two_brokers):
    leader, other = new_topic(two_brokers, "reassign-rf", 1)
    with RawClient(two_brokers.broker(two_brokers.controller_id()).bootstrap) as client:
        assert reassign(client, 1, "reassign-rf", [leader, other], allow_replication_factor_change=False) == (
            False, ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 1 to 2")
        assert reassign(client, 1, "reassign-rf", [other], allow_replication_factor_change=False) == (
            False, ErrorCode.NONE, None)
        assert reassign(client, 1, "reassign-rf", [other, leader]) == (True, ErrorCode.NONE, None)
