"""The cluster-administration APIs kafka-python's own suite asks for: ACLs (stored, not enforced), ElectLeaders,
DescribeLogDirs, AlterReplicaLogDirs, DescribeQuorum, Alter/ListPartitionReassignments, and the broker config
source of a key the operator set. Driven by kafka-python's KafkaAdminClient and confluent-kafka's AdminClient, and
by exact requests (RawClient) where the error codes and Kafka's messages are the point."""

from __future__ import annotations

import os

import pytest

from tests.integration.broker_process import BrokerProcess, free_port
from tests.integration.raw_client import RawClient
from tests.integration.test_admin_api_errors import create, new_topic, send
from tests.integration.test_data_path_errors import a_batch, produce
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsRequest as APR
from wirebroker.protocol.messages.alter_replica_log_dirs import AlterReplicaLogDirsRequest as ARLD
from wirebroker.protocol.messages.create_acls import CreateAclsRequest as CA
from wirebroker.protocol.messages.delete_acls import DeleteAclsRequest as DA
from wirebroker.protocol.messages.describe_acls import DescribeAclsRequest as DAC
from wirebroker.protocol.messages.describe_log_dirs import DescribeLogDirsRequest as DLD
from wirebroker.protocol.messages.describe_quorum import DescribeQuorumRequest as DQ
from wirebroker.protocol.messages.elect_leaders import ElectLeadersRequest as EL

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 29, 30, 31
ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS, ELECT_LEADERS = 34, 35, 43
ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS, DESCRIBE_QUORUM = 45, 46, 55
# ACL enum codes (Kafka's ResourceType, PatternType, AclOperation, AclPermissionType)
TOPIC, GROUP, CLUSTER = 2, 3, 4
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
READ, WRITE = 3, 4
DENY, ALLOW = 2, 3
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "allow.everyone.if.no.acl.found": "true"}


@pytest.fixture
def authorized(broker_factory):
    return broker_factory(**AUTHORIZER)


def creation(name: str = "orders", resource_type: int = TOPIC, pattern: int = LITERAL, principal: str = "User:a",
             host: str = "*", operation: int = READ, permission: int = ALLOW) -> CA.AclCreation:
    return CA.AclCreation(resource_type=resource_type, resource_name=name, resource_pattern_type=pattern,
                          principal=principal, host=host, operation=operation, permission_type=permission)


def delete_filter(name: str | None = None, resource_type: int = ANY, pattern: int = ANY,
                  operation: int = ANY) -> DA.DeleteAclsFilter:
    return DA.DeleteAclsFilter(resource_type_filter=resource_type, resource_name_filter=name,
                               pattern_type_filter=pattern, principal_filter=None, host_filter=None,
                               operation=operation, permission_type=ANY)


def describe_acls(client: RawClient, name: str | None = None, pattern: int = ANY, resource_type: int = ANY,
                  version: int = 3):
    return client.request(DESCRIBE_ACLS, version, resource_type_filter=resource_type, resource_name_filter=name,
                          pattern_type_filter=pattern, principal_filter=None, host_filter=None, operation=ANY,
                          permission_type=ANY)


def described(response) -> set[tuple]:
    return {(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation, a.permission_type)
            for r in response.resources for a in r.acls}


def connection_closed(client: RawClient, api_key: int, version: int, body) -> bool:
    try:
        send(client, api_key, version, body)
    except ConnectionError:  # the broker closed it (a reset included); a silent broker would time out instead
        return True
    return False


# ---- ACLs --------------------------------------------------------------------------------------------------------

def test_kafka_python_acl_lifecycle_survives_a_restart(authorized):
    from kafka import KafkaAdminClient
    from kafka.admin import ACL, ACLFilter, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType
    from kafka.errors import NoError

    def read_acls(principal=None):
        return ACLFilter(principal=principal, host="*", operation=ACLOperation.ANY,
                         permission_type=ACLPermissionType.ANY,
                         resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))

    acl = ACL(principal="User:test", host="*", operation=ACLOperation.READ, permission_type=ACLPermissionType.ALLOW,
              resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))
    admin = KafkaAdminClient(bootstrap_servers=authorized.bootstrap)
    assert admin.describe_acls(read_acls()) == ([], NoError)
    result = admin.create_acls([acl])
    assert (len(result["succeeded"]), result["failed"]) == (1, [])
    assert admin.describe_acls(read_acls()) == ([acl], NoError)
    admin.close()

    authorized.restart()
    admin = KafkaAdminClient(bootstrap_servers=authorized.bootstrap)
    assert admin.describe_acls(read_acls()) == ([acl], NoError)
    assert admin.describe_acls(read_acls("*")) == ([], NoError)  # a filter's "*" is no wildcard
    deleted = admin.delete_acls([ACLFilter(principal="User:test", host="*", operation=ACLOperation.READ,
                                           permission_type=ACLPermissionType.ALLOW,
                                           resource_pattern=ResourcePattern(ResourceType.TOPIC, "topic"))])
    assert [(len(matched), error) for _, matched, error in deleted] == [(1, NoError)]
    assert admin.describe_acls(read_acls()) == ([], NoError)
    admin.close()


def test_confluent_prefixed_bindings_and_match_filters(authorized):
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": authorized.bootstrap})
    literal = AclBinding(ResourceType.TOPIC, "orders", ResourcePatternType.LITERAL, "User:a", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    wildcard = AclBinding(ResourceType.TOPIC, "*", ResourcePatternType.LITERAL, "User:b", "*",
                          AclOperation.WRITE, AclPermissionType.DENY)
    prefixed = AclBinding(ResourceType.TOPIC, "ord", ResourcePatternType.PREFIXED, "User:c", "*",
                          AclOperation.READ, AclPermissionType.ALLOW)
    other = AclBinding(ResourceType.GROUP, "ord", ResourcePatternType.PREFIXED, "User:c", "*",
                       AclOperation.READ, AclPermissionType.ALLOW)
    for future in admin.create_acls([literal, wildcard, prefixed, other]).values():
        assert future.result(timeout=30) is None

    def applying_to(name, resource_type=ResourceType.TOPIC):
        return AclBindingFilter(resource_type, name, ResourcePatternType.MATCH, None, None, AclOperation.ANY,
                                AclPermissionType.ANY)

    assert set(admin.describe_acls(applying_to("orders")).result(timeout=30)) == {literal, wildcard, prefixed}
    assert set(admin.describe_acls(applying_to("payments")).result(timeout=30)) == {wildcard}
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    deleted = admin.delete_acls([applying_to("ord", ResourceType.ANY)])
    assert set(next(iter(deleted.values())).result(timeout=30)) == {wildcard, prefixed, other}
    assert admin.describe_acls(everything).result(timeout=30) == [literal]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_acl_apis_without_an_authorizer_answer_security_disabled(broker, version):
    with RawClient(broker.bootstrap) as client:
        response = describe_acls(client, version=version)
        assert (response.error_code, response.error_message) == (ErrorCode.SECURITY_DISABLED,
                                                                  "No Authorizer is configured on the broker")
        created = client.request(CREATE_ACLS, version, creations=[creation(), creation("other")]).results
        assert [(r.error_code, r.error_message) for r in created] == [
            (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
        deleted = client.request(DELETE_ACLS, version, filters=[delete_filter()]).filter_results
        assert [(r.error_code, r.error_message, r.matching_acls) for r in deleted] == [
            (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.", [])]


def test_create_acls_refusals_as_kafka_gives_them(authorized):
    with RawClient(authorized.bootstrap) as client:
        results = client.request(CREATE_ACLS, 3, creations=[
            creation("orders"),
            creation("orders"),  # the same binding twice: stored once
            creation("not-the-cluster", resource_type=CLUSTER),
            creation(""),
            creation(resource_type=99),
            creation(operation=77),
        ]).results
        assert [(r.error_code, r.error_message) for r in results] == [
            (ErrorCode.NONE, ""),  # Kafka leaves a success's message at its default
            (ErrorCode.NONE, ""),
            (ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
            (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
            (ErrorCode.INVALID_REQUEST, "Invalid resourceType UNKNOWN"),
            (ErrorCode.INVALID_REQUEST, "Invalid operation UNKNOWN"),
        ]
        assert described(describe_acls(client)) == {(TOPIC, "orders", LITERAL, "User:a", "*", READ, ALLOW)}
        # ANY or MATCH where a binding needs a value: Kafka cannot build the binding and fails every creation.
        for bad in (creation(pattern=MATCH), creation(operation=ANY), creation(resource_type=ANY)):
            results = client.request(CREATE_ACLS, 3, creations=[creation("fine"), bad]).results
            assert [(r.error_code, r.error_message) for r in results] == [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
        assert len(described(describe_acls(client))) == 1


def test_delete_acls_lists_each_filters_matches(authorized):
    with RawClient(authorized.bootstrap) as client:
        client.request(CREATE_ACLS, 3, creations=[creation("orders"), creation("ord", pattern=PREFIXED),
                                                  creation("orders", operation=WRITE, permission=DENY)])
        results = client.request(DELETE_ACLS, 3, filters=[
            delete_filter("orders", pattern=MATCH, operation=WRITE),
            delete_filter(pattern=PREFIXED),
            delete_filter(resource_type=42),
        ]).filter_results
        assert [(r.error_code, r.error_message) for r in results] == [
            (ErrorCode.NONE, None), (ErrorCode.NONE, None), (ErrorCode.INVALID_REQUEST, "Unknown patternFilter.")]
        assert [[(m.resource_name, m.pattern_type, m.operation, m.error_code) for m in r.matching_acls]
                for r in results] == [[("orders", LITERAL, WRITE, 0)], [("ord", PREFIXED, READ, 0)], []]
        assert described(describe_acls(client)) == {(TOPIC, "orders", LITERAL, "User:a", "*", READ, ALLOW)}
        assert described(describe_acls(client, "orders", pattern=LITERAL, resource_type=GROUP)) == set()


@pytest.mark.parametrize(("api_key", "body"), [
    (DESCRIBE_ACLS, DAC(resource_type_filter=0, pattern_type_filter=ANY, operation=ANY, permission_type=ANY)),
    (CREATE_ACLS, CA(creations=[creation(operation=0)])),
    (DELETE_ACLS, DA(filters=[delete_filter(pattern=0)])),
])
def test_an_acl_request_naming_unknown_closes_the_connection(authorized, api_key, body):
    with RawClient(authorized.bootstrap) as client:
        assert connection_closed(client, api_key, 3, body)
    with RawClient(authorized.bootstrap) as client:
        assert describe_acls(client).error_code == ErrorCode.NONE  # the broker serves on


# ---- ElectLeaders ------------------------------------------------------------------------------------------------

def test_elect_leaders_needs_no_election_on_one_broker(broker):
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    from kafka.errors import ElectionNotNeededError

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("elect", 3, 1)])
    for election_type in (0, 1):  # preferred, unclean
        response = admin.elect_leaders(election_type, {"elect": [0, 1, 2]}, raise_errors=False)
        assert [(t.topic, [(p.partition_id, p.error_code) for p in t.partition_result])
                for t in response.replica_election_results] == [
            ("elect", [(0, ElectionNotNeededError.errno), (1, ElectionNotNeededError.errno),
                       (2, ElectionNotNeededError.errno)])]
    admin.close()
    with RawClient(broker.bootstrap) as client:
        response = client.request(ELECT_LEADERS, 2, election_type=0, timeout_ms=1000, topic_partitions=[
            EL.TopicPartitions(topic="elect", partitions=[7]), EL.TopicPartitions(topic="nowhere", partitions=[0])])
        assert [(t.topic, [(p.partition_id, p.error_code, p.error_message) for p in t.partition_result])
                for t in response.replica_election_results] == [
            ("elect", [(7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as elect-7")]),
            ("nowhere", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nowhere")])]
        for version in (0, 1):
            older = client.request(ELECT_LEADERS, version, topic_partitions=[
                EL.TopicPartitions(topic="elect", partitions=[0])], timeout_ms=1000)
            assert older.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED
        everything = client.request(ELECT_LEADERS, 2, election_type=0, topic_partitions=None, timeout_ms=1000)
        assert everything.error_code == ErrorCode.NONE
        assert ("elect", []) in [(t.topic, t.partition_result) for t in everything.replica_election_results]
        unknown = client.request(ELECT_LEADERS, 2, election_type=5, timeout_ms=1000,
                                 topic_partitions=[EL.TopicPartitions(topic="elect", partitions=[0])])
        assert unknown.error_code == ErrorCode.INVALID_REQUEST
        assert [(p.error_code, p.error_message) for p in unknown.replica_election_results[0].partition_result] == [
            (ErrorCode.INVALID_REQUEST, "Unknown election type 5")]


def test_confluent_elect_leaders(broker):
    from confluent_kafka import ElectionType, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic("elect-c", 2, 1)])["elect-c"].result(timeout=30)
    wanted = [TopicPartition("elect-c", 0), TopicPartition("elect-c", 1)]
    results = admin.elect_leaders(ElectionType.PREFERRED, wanted).result(timeout=30)
    assert {(tp.topic, tp.partition): error.code() for tp, error in results.items()} == {
        ("elect-c", 0): ErrorCode.ELECTION_NOT_NEEDED, ("elect-c", 1): ErrorCode.ELECTION_NOT_NEEDED}


# ---- DescribeLogDirs and AlterReplicaLogDirs ---------------------------------------------------------------------

@pytest.fixture
def two_dirs(broker_factory, tmp_path):
    dirs = [str(tmp_path / "dir-a"), str(tmp_path / "dir-b")]
    return broker_factory(**{"log.dirs": ",".join(dirs)}), dirs


def on_disk_size(partition_dir: str) -> int:
    return sum(os.path.getsize(os.path.join(partition_dir, n)) for n in os.listdir(partition_dir) if n.endswith(".log"))


def test_describe_log_dirs_reports_each_dir_and_its_partitions(two_dirs):
    from kafka import KafkaAdminClient

    broker, dirs = two_dirs
    with RawClient(broker.bootstrap) as client:
        create(client, new_topic("sized", 2))
        for _ in range(3):
            assert produce(client, "sized", a_batch(5, value_size=100)).error_code == ErrorCode.NONE
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    [answer] = admin.describe_log_dirs()
    admin.close()
    assert answer["broker"] == 0
    results = {r["log_dir"]: r for r in answer["log_dirs"]}
    assert set(results) == set(dirs)  # every configured dir, by its absolute path
    sizes = {}
    for log_dir, result in results.items():
        assert result["error_code"] == 0 and 0 < result["usable_bytes"] <= result["total_bytes"]
        for topic in result["topics"]:
            for p in topic["partitions"]:
                assert (p["offset_lag"], p["is_future_key"]) == (0, False)
                sizes[(topic["name"], p["partition_index"])] = (log_dir, p["partition_size"])
    for (topic, partition), (log_dir, size) in sizes.items():
        assert size == on_disk_size(os.path.join(log_dir, f"{topic}-{partition}"))
    assert sizes[("sized", 0)][1] > 0 and sizes[("sized", 1)][1] == 0
    assert sizes[("sized", 0)][0] != sizes[("sized", 1)][0]  # new partitions spread over the dirs

    with RawClient(broker.bootstrap) as client:
        for version in (1, 2, 3, 4):
            response = client.request(DESCRIBE_LOG_DIRS, version, topics=[
                DLD.DescribableLogDirTopic(topic="sized", partitions=[1, 9])])
            held = [(r.log_dir, [(t.name, [p.partition_index for p in t.partitions]) for t in r.topics])
                    for r in response.results]
            assert sorted(held) == sorted([(sizes[("sized", 1)][0], [("sized", [1])]), (sizes[("sized", 0)][0], [])])


def alter_dirs(client: RawClient, *moves: tuple[str, str, int]):
    response = client.request(ALTER_REPLICA_LOG_DIRS, 2, dirs=[
        ARLD.AlterReplicaLogDir(path=path, topics=[ARLD.AlterReplicaLogDirTopic(name=topic, partitions=[partition])])
        for path, topic, partition in moves])
    return {(t.topic_name, p.partition_index): p.error_code for t in response.results for p in t.partitions}


def test_alter_replica_log_dirs_accepts_the_current_dir_only(two_dirs):
    from kafka import KafkaAdminClient, TopicPartitionReplica
    from kafka.errors import NoError

    broker, dirs = two_dirs
    long_name = "l" * 230  # too long for the "-future" directory a move needs
    with RawClient(broker.bootstrap) as client:
        create(client, new_topic("moving", 1), new_topic(long_name, 1))
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    current = next(r["log_dir"] for r in admin.describe_log_dirs()[0]["log_dirs"]
                   for t in r["topics"] if t["name"] == "moving")
    other = next(d for d in dirs if d != current)
    replica = TopicPartitionReplica("moving", 0, 0)
    assert admin.alter_replica_log_dirs({replica: current}) == {replica: NoError}
    admin.close()
    with RawClient(broker.bootstrap) as client:
        assert alter_dirs(client, (other, "moving", 0), (current, "ghost", 0), ("/not/a/log/dir", long_name, 0),
                          (current, long_name, 0)) == {
            ("moving", 0): ErrorCode.KAFKA_STORAGE_ERROR,
            ("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            (long_name, 0): ErrorCode.INVALID_TOPIC_EXCEPTION,
        }
        assert alter_dirs(client, ("relative/dir", "moving", 0)) == {("moving", 0): ErrorCode.LOG_DIR_NOT_FOUND}
        # A partition named under two dirs goes to the later one.
        assert alter_dirs(client, (other, "moving", 0), (current, "moving", 0)) == {("moving", 0): ErrorCode.NONE}
    assert os.path.isdir(os.path.join(current, "moving-0"))


# ---- DescribeQuorum ----------------------------------------------------------------------------------------------

def test_describe_quorum_names_this_node_the_only_voter_and_leader(broker):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    quorum = admin.describe_metadata_quorum()
    admin.close()
    [topic] = quorum["topics"]
    [partition] = topic["partitions"]
    assert (topic["topic_name"], partition["partition_index"], partition["error"]) == ("__cluster_metadata", 0, None)
    assert (partition["leader_id"], partition["leader_epoch"], partition["high_watermark"]) == (0, 0, 0)
    [voter] = partition["current_voters"]
    assert (voter["replica_id"], voter["log_end_offset"], partition["observers"]) == (0, 0, [])
    assert voter["last_fetch_timestamp"] > 0 and voter["last_caught_up_timestamp"] > 0
    assert quorum["nodes"] == [{"node_id": 0, "listeners": [{"name": "PLAINTEXT", "host": "127.0.0.1",
                                                             "port": broker.port}]}]

    def ask(version, *names_and_partitions):
        return client.request(DESCRIBE_QUORUM, version, topics=[
            DQ.TopicData(topic_name=name, partitions=[DQ.PartitionData(partition_index=p) for p in partitions])
            for name, partitions in names_and_partitions])

    with RawClient(broker.bootstrap) as client:
        for version in (0, 1):
            answer = ask(version, ("__cluster_metadata", [0])).topics[0].partitions[0]
            assert (answer.error_code, answer.leader_id, [v.replica_id for v in answer.current_voters]) == (0, 0, [0])
        wrong = ask(2, ("__cluster_metadata", [0, 1]), ("other", [0]))
        unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        assert [(t.topic_name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
                for t in wrong.topics] == [("__cluster_metadata", [(0, *unknown), (1, *unknown)]),
                                           ("other", [(0, *unknown)])]


# ---- Alter and ListPartitionReassignments ------------------------------------------------------------------------

def test_partition_reassignments_complete_at_once_on_one_broker(broker):
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("moved", 2, 1)])
    assert admin.alter_partition_reassignments({TopicPartition("moved", 0): [0]}) == {TopicPartition("moved", 0): None}
    assert admin.list_partition_reassignments() == {}
    assert admin.list_partition_reassignments([TopicPartition("moved", 0), TopicPartition("nowhere", 3)]) == {}
    admin.close()

    def target(partition, replicas):
        return APR.ReassignablePartition(partition_index=partition, replicas=replicas)

    with RawClient(broker.bootstrap) as client:
        response = client.request(ALTER_PARTITION_REASSIGNMENTS, 0, timeout_ms=1000, topics=[
            APR.ReassignableTopic(name="moved", partitions=[target(1, None), target(0, [0, 0]), target(0, [1, 0]),
                                                            target(0, []), target(5, [0])]),
            APR.ReassignableTopic(name="nowhere", partitions=[target(0, [0])])])
        assert (response.error_code, response.error_message) == (ErrorCode.NONE, None)
        assert [(t.name, [(p.partition_index, p.error_code, p.error_message) for p in t.partitions])
                for t in response.responses] == [
            ("moved", [
                (1, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None),  # no message that only repeats the code's
                (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                 "The manual partition assignment includes the broker 0 more than once."),
                (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                 "The manual partition assignment includes broker 1, but no such broker is registered."),
                (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                 "The manual partition assignment includes an empty replica list."),
                (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition moved:5."),
            ]),
            ("nowhere", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nowhere.")]),
        ]
        listed = client.request(LIST_PARTITION_REASSIGNMENTS, 0, timeout_ms=1000, topics=None)
        assert (listed.error_code, listed.topics) == (ErrorCode.NONE, [])


# ---- DescribeConfigs of the broker -------------------------------------------------------------------------------

@pytest.mark.parametrize(("advertised", "source"), [(True, "STATIC_BROKER_CONFIG"), (False, "DEFAULT_CONFIG")])
def test_broker_keys_the_operator_set_are_static_broker_config(tmp_path, advertised, source):
    """What kafka-python's suite checks of advertised.listeners: STATIC_BROKER_CONFIG on Kafka 4 because the suite's
    broker sets it. Kafka, like this broker, reports a key nobody set as DEFAULT_CONFIG (no value here)."""
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    port = free_port()
    address = f"PLAINTEXT://127.0.0.1:{port}"
    process = BrokerProcess(tmp_path / "data", {"advertised.listeners": address} if advertised else {}, port).start()
    try:
        admin = KafkaAdminClient(bootstrap_servers=process.bootstrap)
        configs = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, 0)], config_filter="all")
        admin.close()
    finally:
        process.stop()
    entry = configs["broker"]["0"]["advertised.listeners"]
    assert (entry["config_source"], entry["config_type"], entry["read_only"], entry["is_sensitive"],
            entry["synonyms"]) == (source, "LIST", True, False, [])
    assert entry["value"] == (address if advertised else None)
