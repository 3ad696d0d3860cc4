"""The ACLs enforced (issue 14 item 4): a real broker with `authorizer.class.name`, real clients, the answers Kafka's
KafkaApis gives. Over PLAINTEXT every client is User:ANONYMOUS; the bindings are stored before the broker starts
(the file CreateAcls writes), so a test needs no principal allowed to create them.
"""

from __future__ import annotations

import time

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import UNVERIFIED
from wirebroker.cluster.acls import (
    CLUSTER_RESOURCE_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclStore,
    PatternType,
    ResourceType,
)
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
from wirebroker.protocol.messages.fetch import FetchRequest, FetchResponse
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.produce import ProduceRequest

PRODUCE, FETCH, METADATA, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS = 0, 1, 3, 9, 15, 16
INIT_PRODUCER_ID, CREATE_TOPICS = 22, 19
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ANONYMOUS = "User:ANONYMOUS"
OP, TYPE, PATTERN = AclOperation, ResourceType, PatternType


def acl(resource_type: ResourceType, name: str, operation: AclOperation, *, deny: bool = False,
        prefixed: bool = False, principal: str = ANONYMOUS) -> AclBinding:
    return AclBinding(resource_type, name, PATTERN.PREFIXED if prefixed else PATTERN.LITERAL, principal, "*",
                      operation, AclPermissionType.DENY if deny else AclPermissionType.ALLOW)


def cluster(operation: AclOperation, *, deny: bool = False, principal: str = ANONYMOUS) -> AclBinding:
    return acl(TYPE.CLUSTER, CLUSTER_RESOURCE_NAME, operation, deny=deny, principal=principal)


@pytest.fixture
def secured(tmp_path):
    """Start a broker enforcing these bindings: `secured(acl(...), ..., **config)`."""
    started: list[BrokerProcess] = []

    def start(*bindings: AclBinding, port: int | None = None, **config: str) -> BrokerProcess:
        data = tmp_path / f"data{len(started)}"
        data.mkdir()
        AclStore(data).create(bindings)
        process = BrokerProcess(data, {"authorizer.class.name": STANDARD_AUTHORIZER, **config}, port=port).start()
        started.append(process)
        return process

    yield start
    for process in started:
        try:
            process.stop()
        finally:
            process.kill()


def create_topics(client: RawClient, *names: str) -> dict[str, int]:
    response = client.request(CREATE_TOPICS, 7, timeout_ms=10_000, topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1) for name in names])
    return {topic.name: topic.error_code for topic in response.topics}


def produce(client: RawClient, topic: str, batch: bytes, transactional_id: str | None = None) -> int:
    response = client.request(PRODUCE, 9, transactional_id=transactional_id, acks=-1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    return response.responses[0].partition_responses[0].error_code


def plain_batch(value: bytes = b"v") -> bytes:
    return records.build_batch([(int(time.time() * 1000), None, value, ())])


def fetch(client: RawClient, topic: str, replica_id: int, version: int = 12,
          topic_id: bytes = bytes(16)) -> FetchResponse.PartitionData:
    fields = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "topics": [
        FetchRequest.FetchTopic(topic=topic, topic_id=topic_id, partitions=[
            FetchRequest.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])]}
    if version >= 15:
        fields["replica_state"] = FetchRequest.ReplicaState(replica_id=replica_id, replica_epoch=-1)
    else:
        fields["replica_id"] = replica_id
    return client.request(FETCH, version, **fields).responses[0].partitions[0]


def metadata(client: RawClient, *names: str, version: int = 12, **fields) -> dict[str, object]:
    topics = None if not names else [MetadataRequest.MetadataRequestTopic(name=name) for name in names]
    response = client.request(METADATA, version, topics=topics, allow_auto_topic_creation=False, **fields)
    return {topic.name: topic for topic in response.topics}


def init_producer_id(client: RawClient, transactional_id: str | None = None) -> int:
    return client.request(INIT_PRODUCER_ID, 4, transactional_id=transactional_id, transaction_timeout_ms=60_000,
                          producer_id=-1, producer_epoch=-1).error_code


# ---- regressions ------------------------------------------------------------------------------------------------

def test_a_fetch_posing_as_a_follower_needs_cluster_action(secured):
    """CVE-2018-1288: a consumer that sends replica id >= 0 would read past the high watermark (and move it)."""
    broker = secured(cluster(OP.CREATE), acl(TYPE.TOPIC, "orders", OP.ALL))
    with RawClient(broker.bootstrap) as client:
        assert create_topics(client, "orders") == {"orders": ErrorCode.NONE}
        assert produce(client, "orders", plain_batch()) == ErrorCode.NONE
        assert fetch(client, "orders", replica_id=-1).error_code == ErrorCode.NONE
        topic_id = metadata(client, "orders")["orders"].topic_id
        for version in (12, 15):  # replica id in the body, then (by topic id) in ReplicaState (KIP-903)
            posing = fetch(client, "orders", replica_id=1, version=version, topic_id=topic_id)
            assert posing.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
            assert not posing.records
    assert "is Denied operation = CLUSTER_ACTION" in broker.log_text()


def test_transactional_produce_needs_write_on_its_transactional_id(secured):
    """CVE-2018-17196: transactional records are refused unless the producer may WRITE its transactional id."""
    broker = secured(cluster(OP.CREATE), acl(TYPE.TOPIC, "orders", OP.ALL),
                     acl(TYPE.TRANSACTIONAL_ID, "allowed-", OP.WRITE, prefixed=True),
                     **UNVERIFIED)  # a transaction by hand: no coordinator to verify it (KIP-890 part 1)
    with RawClient(broker.bootstrap) as client:
        assert create_topics(client, "orders") == {"orders": ErrorCode.NONE}
        assert init_producer_id(client, "other-txn") == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert init_producer_id(client) == ErrorCode.NONE  # idempotent: WRITE on some topic suffices (KIP-679)
        batch = records.build_batch([(int(time.time() * 1000), None, b"t", ())], producer_id=7, producer_epoch=0,
                                    base_sequence=0, is_transactional=True)
        assert produce(client, "orders", batch, "other-txn") == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert produce(client, "orders", batch, None) == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert produce(client, "orders", batch, "allowed-txn") == ErrorCode.NONE


def test_an_idempotent_producer_needs_idempotent_write_or_write_on_some_topic(secured):
    """CVE-2018-17196's other half, as Kafka 3.0+ checks it: at InitProducerId (KIP-679)."""
    broker = secured(cluster(OP.CREATE), acl(TYPE.TOPIC, "orders", OP.READ),
                     acl(TYPE.TOPIC, "ord", OP.WRITE, prefixed=True, deny=True),
                     acl(TYPE.TOPIC, "orders-2", OP.WRITE))  # a WRITE dominated by the prefixed DENY
    with RawClient(broker.bootstrap) as client:
        assert init_producer_id(client) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert "no IDEMPOTENT_WRITE on the cluster and no WRITE on any topic" in broker.log_text()
    allowed = secured(cluster(OP.IDEMPOTENT_WRITE))
    with RawClient(allowed.bootstrap) as client:
        assert init_producer_id(client) == ErrorCode.NONE


def test_an_authorizer_class_name_this_broker_does_not_provide_stops_the_start(broker_factory):
    with pytest.raises(RuntimeError, match="com.example.MyAuthorizer is not an authorizer this broker provides"):
        broker_factory(**{"authorizer.class.name": "com.example.MyAuthorizer"})


# ---- topics: describe, prefixes, deny -----------------------------------------------------------------------------

def test_metadata_shows_only_what_the_principal_may_describe(secured):
    from confluent_kafka.admin import AdminClient

    broker = secured(cluster(OP.CREATE), acl(TYPE.TOPIC, "visible", OP.DESCRIBE),
                     acl(TYPE.TOPIC, "pub-", OP.READ, prefixed=True),
                     acl(TYPE.TOPIC, "pub-secret", OP.DESCRIBE, deny=True))
    with RawClient(broker.bootstrap) as client:
        created = create_topics(client, "visible", "pub-a", "pub-secret", "hidden")
        assert set(created.values()) == {ErrorCode.NONE}
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert set(admin.list_topics(timeout=10).topics) == {"visible", "pub-a"}
        asked = metadata(client, "hidden", "pub-secret", "visible", "not-there", "pub-a",
                         include_topic_authorized_operations=True)
        codes = {name: topic.error_code for name, topic in asked.items()}
        assert codes == {"hidden": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                         "pub-secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                         "visible": ErrorCode.NONE,
                         "not-there": ErrorCode.TOPIC_AUTHORIZATION_FAILED,  # existence not disclosed
                         "pub-a": ErrorCode.NONE}
        assert asked["hidden"].topic_id == bytes(16)
        assert asked["pub-a"].topic_authorized_operations == (1 << OP.READ) | (1 << OP.DESCRIBE)
        assert asked["visible"].topic_authorized_operations == 1 << OP.DESCRIBE
        assert fetch(client, "pub-a", replica_id=-1).error_code == ErrorCode.NONE
        assert fetch(client, "visible", replica_id=-1).error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        assert produce(client, "pub-a", plain_batch()) == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_super_users_pass_every_check_and_allow_everyone_opens_topics_without_acls(secured):
    from kafka import KafkaConsumer, KafkaProducer

    deny_all = [cluster(OP.ALL, deny=True, principal="User:*"), acl(TYPE.TOPIC, "*", OP.ALL, deny=True,
                                                                   principal="User:*")]
    superuser = secured(*deny_all, **{"super.users": f"User:admin;{ANONYMOUS}"})
    producer = KafkaProducer(bootstrap_servers=superuser.bootstrap)
    producer.send("anything", b"hello").get(timeout=20)
    producer.close()
    consumer = KafkaConsumer("anything", bootstrap_servers=superuser.bootstrap, group_id="g",
                             auto_offset_reset="earliest", consumer_timeout_ms=10_000)
    assert next(iter(consumer)).value == b"hello"
    consumer.close()

    open_broker = secured(acl(TYPE.TOPIC, "closed", OP.ALL, principal="User:bob"),
                          **{"allow.everyone.if.no.acl.found": "true"})
    with RawClient(open_broker.bootstrap) as client:
        # The cluster has no ACL, so CREATE on it is everyone's: both are created.
        assert create_topics(client, "open", "closed") == {"open": ErrorCode.NONE, "closed": ErrorCode.NONE}
        assert produce(client, "open", plain_batch()) == ErrorCode.NONE
        assert produce(client, "closed", plain_batch()) == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_create_topics_needs_create_on_the_cluster_or_the_topic(secured):
    broker = secured(acl(TYPE.TOPIC, "team-", OP.CREATE, prefixed=True), acl(TYPE.TOPIC, "team-a", OP.DESCRIBE_CONFIGS))
    with RawClient(broker.bootstrap) as client:
        response = client.request(CREATE_TOPICS, 7, timeout_ms=10_000, topics=[
            CreateTopicsRequest.CreatableTopic(name=name, num_partitions=2, replication_factor=1)
            for name in ("team-a", "team-b", "other")])
        results = {topic.name: topic for topic in response.topics}
        assert {name: r.error_code for name, r in results.items()} == {
            "team-a": ErrorCode.NONE, "team-b": ErrorCode.NONE, "other": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        assert results["other"].error_message == "Authorization failed."
        assert (results["team-a"].num_partitions, results["team-a"].topic_config_error_code) == (2, ErrorCode.NONE)
        assert results["team-a"].configs
        assert results["team-b"].topic_config_error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        assert (results["team-b"].num_partitions, results["team-b"].configs) == (-1, [])


def test_sasl_principals_get_their_own_acls(secured):
    """The principal a client authenticates as (SASL PLAIN here) is the one the ACLs name."""
    from confluent_kafka import KafkaException, Producer

    from wirebroker.network.ports import free_port

    port, sasl_port = free_port(), free_port()
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
            'user_alice="alice-secret" user_bob="bob-secret";')
    broker = secured(acl(TYPE.TOPIC, "orders", OP.WRITE, principal="User:alice"),
                     acl(TYPE.TOPIC, "*", OP.DESCRIBE, principal="User:*"), port=port, **{
                         "listeners": f"PLAINTEXT://127.0.0.1:{port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
                         "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
                         "super.users": ANONYMOUS,  # the PLAINTEXT listener creates the topic
                         "sasl.enabled.mechanisms": "PLAIN",
                         "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas})
    with RawClient(broker.bootstrap) as client:
        assert create_topics(client, "orders") == {"orders": ErrorCode.NONE}

    def produce_as(user: str) -> str:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret",
                             "message.timeout.ms": 10_000})
        outcome = []
        producer.produce("orders", b"v", on_delivery=lambda error, _: outcome.append(error))
        producer.flush(15)
        error = outcome[0] if outcome else KafkaException("no delivery report")
        return "delivered" if error is None else error.name()

    assert produce_as("alice") == "delivered"
    assert produce_as("bob") == "TOPIC_AUTHORIZATION_FAILED"
    assert "Principal = User:bob is Denied operation = WRITE" in broker.log_text()


# ---- groups -----------------------------------------------------------------------------------------------------

def test_a_consumer_needs_read_on_its_group_and_lists_only_groups_it_may_describe(secured):
    from confluent_kafka import Consumer, KafkaError

    broker = secured(cluster(OP.CREATE), acl(TYPE.TOPIC, "orders", OP.ALL),
                     acl(TYPE.GROUP, "good-", OP.READ, prefixed=True))
    with RawClient(broker.bootstrap) as client:
        assert create_topics(client, "orders") == {"orders": ErrorCode.NONE}
        assert produce(client, "orders", plain_batch(b"hello")) == ErrorCode.NONE

    def consume(group: str):
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["orders"])
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                message = consumer.poll(0.5)
                if message is not None:
                    return message.error() or message.value()
            return None
        finally:
            consumer.close()

    assert consume("good-group") == b"hello"
    refused = consume("bad-group")
    assert isinstance(refused, KafkaError) and refused.code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    with RawClient(broker.bootstrap) as client:
        assert [g.group_id for g in client.request(LIST_GROUPS, 4, states_filter=[]).groups] == ["good-group"]
        described = client.request(DESCRIBE_GROUPS, 5, groups=["good-group", "bad-group"],
                                   include_authorized_operations=True).groups
        assert [(g.group_id, g.error_code) for g in described] == [
            ("good-group", ErrorCode.NONE), ("bad-group", ErrorCode.GROUP_AUTHORIZATION_FAILED)]
        assert described[0].authorized_operations == (1 << OP.READ) | (1 << OP.DESCRIBE)
        fetched = client.request(OFFSET_FETCH, 7, group_id="bad-group", topics=None, require_stable=False)
        assert fetched.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
