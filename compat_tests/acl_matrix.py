"""The ACL matrix (issue 14 item 4): the same ACLs, principals and requests against wirebroker and Apache Kafka 4.3.1,
every answer compared.

    python -m compat_tests.acl_matrix                      # both brokers; prints each difference, exit 1 if any
    python -m compat_tests.acl_matrix --broker wirebroker  # one broker's answers, as JSON
    python -m compat_tests.acl_matrix --broker kafka --record   # Kafka's answers into KAFKA_ANSWERS

KAFKA_ANSWERS keeps Apache Kafka 4.3.1's answers, so tests/integration/test_acl_matrix.py holds wirebroker to them
in every test run without starting Kafka.

Each broker runs StandardAuthorizer with allow.everyone.if.no.acl.found=false and two listeners: PLAINTEXT, whose
User:ANONYMOUS is a super user (the setup, and Kafka's own broker-to-controller traffic), and SASL_PLAINTEXT with
the PLAIN users alice and bob. The setup (over PLAINTEXT) creates the topics, a record in each, two groups'
offsets and the ACLs (CreateAcls). Then each principal sends the probes below over SASL_PLAINTEXT as hand-built
requests, so the exact error codes are compared, not a client library's reading of them.

What it covers: principals alice, bob (and User:* bindings), LITERAL / PREFIXED / "*" names, DENY over ALLOW, a
host-specific DENY that does not apply, implied DESCRIBE and DESCRIBE_CONFIGS, super users; and the requests
Metadata (a listing, named topics, authorized operations, auto-creation), Produce (plain and transactional),
Fetch (as consumer and posing as a follower), ListOffsets, DescribeConfigs, CreateTopics (validate only),
DeleteRecords, FindCoordinator (groups and transactional ids), OffsetCommit, OffsetFetch, DescribeGroups,
ListGroups, InitProducerId, DescribeAcls, CreateAcls, DescribeCluster and DescribeLogDirs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compat_tests.brokers import BrokerProcess, free_port
from compat_tests.reference_kafka import ReferenceKafka
from compat_tests.wirebroker_broker import Wirebroker
from tests.integration.raw_client import RawClient
from wirebroker.cluster.acls import (
    CLUSTER_RESOURCE_NAME,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_acls import CreateAclsRequest
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
from wirebroker.protocol.messages.delete_records import DeleteRecordsRequest
from wirebroker.protocol.messages.describe_configs import DescribeConfigsRequest
from wirebroker.protocol.messages.fetch import FetchRequest
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.offset_commit import OffsetCommitRequest
from wirebroker.protocol.messages.produce import ProduceRequest

(PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, DESCRIBE_GROUPS, LIST_GROUPS,
 SASL_HANDSHAKE, CREATE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID, DESCRIBE_ACLS, CREATE_ACLS, DESCRIBE_CONFIGS,
 DESCRIBE_LOG_DIRS, SASL_AUTHENTICATE, DESCRIBE_CLUSTER) = (0, 1, 2, 3, 8, 9, 10, 15, 16, 17, 19, 21, 22, 29, 30,
                                                            32, 35, 36, 60)
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
PLAIN_JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
              + " ".join(f'user_{user}="{password}"' for user, password in USERS.items()) + ";")
TOPICS = ("orders", "orders-eu", "payments", "secret", "public-a", "public-b")
GROUPS = ("team-a-group", "other-group")
OP, TYPE, PATTERN, PERMISSION = AclOperation, ResourceType, PatternType, AclPermissionType
ALICE, BOB, EVERYONE = "User:alice", "User:bob", "User:*"
# (principal, resource type, name, pattern, operation, permission, host)
ACLS = (
    (ALICE, TYPE.TOPIC, "orders", PATTERN.PREFIXED, OP.READ, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "orders-eu", PATTERN.LITERAL, OP.READ, PERMISSION.DENY, "*"),
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.WRITE, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.WRITE, PERMISSION.DENY, "10.9.9.9"),  # another host's
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.ALTER_CONFIGS, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "alice-", PATTERN.PREFIXED, OP.CREATE, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.GROUP, "team-a", PATTERN.PREFIXED, OP.READ, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TRANSACTIONAL_ID, "alice-tx", PATTERN.LITERAL, OP.WRITE, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.CLUSTER, CLUSTER_RESOURCE_NAME, PATTERN.LITERAL, OP.DESCRIBE, PERMISSION.ALLOW, "*"),
    (BOB, TYPE.TOPIC, "*", PATTERN.LITERAL, OP.ALL, PERMISSION.ALLOW, "*"),
    (BOB, TYPE.TOPIC, "secret", PATTERN.LITERAL, OP.DESCRIBE, PERMISSION.DENY, "*"),
    (BOB, TYPE.TOPIC, "public", PATTERN.PREFIXED, OP.WRITE, PERMISSION.DENY, "*"),
    (BOB, TYPE.GROUP, "other-group", PATTERN.LITERAL, OP.DESCRIBE, PERMISSION.ALLOW, "*"),
    (BOB, TYPE.CLUSTER, CLUSTER_RESOURCE_NAME, PATTERN.LITERAL, OP.IDEMPOTENT_WRITE, PERMISSION.ALLOW, "*"),
    (BOB, TYPE.CLUSTER, CLUSTER_RESOURCE_NAME, PATTERN.LITERAL, OP.CREATE, PERMISSION.ALLOW, "*"),
    (EVERYONE, TYPE.TOPIC, "public-a", PATTERN.LITERAL, OP.DESCRIBE, PERMISSION.ALLOW, "*"),
)
# Answers that only say "not yet" (a coordinator or leader still being set up): asked again, not compared.
NOT_YET = frozenset({ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
                     ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.LEADER_NOT_AVAILABLE,
                     ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.CONCURRENT_TRANSACTIONS})
# Kafka's KRaft broker answers an auto-created topic UNKNOWN_TOPIC_OR_PARTITION until the controller has made it
# (wirebroker's single node creates it before answering): not an authorization answer, so asked again.
AUTO_CREATE_NOT_YET = NOT_YET | {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
RETRY_S = 30.0
KAFKA_ANSWERS = Path(__file__).with_name("acl_matrix_kafka_4.3.1.json")


def settings(plaintext_port: int, sasl_port: int, controller_port: int | None = None) -> dict[str, object]:
    """The same server.properties keys for both brokers (the CONTROLLER listener is Kafka's KRaft one)."""
    public = f"PLAINTEXT://127.0.0.1:{plaintext_port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    controller = f",CONTROLLER://127.0.0.1:{controller_port}" if controller_port else ""
    return {
        "listeners": public + controller,
        "advertised.listeners": public,
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT"
                                          + (",CONTROLLER:PLAINTEXT" if controller_port else ""),
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
        "num.partitions": 1,
        "group.initial.rebalance.delay.ms": 0,
    }


@contextmanager
def running(kind: str, work_dir: Path) -> Iterator[tuple[str, str]]:
    """A broker of this kind ("wirebroker" or "kafka"), as (PLAINTEXT bootstrap, SASL_PLAINTEXT bootstrap)."""
    port, sasl_port = free_port(), free_port()
    broker: BrokerProcess
    if kind == "kafka":
        controller_port = free_port()
        broker = ReferenceKafka(work_dir, port=port, controller_port=controller_port,
                                settings=settings(port, sasl_port, controller_port))
    else:
        broker = Wirebroker(work_dir, port=port, settings=settings(port, sasl_port))
    with broker:  # started on entering, stopped on leaving
        yield f"127.0.0.1:{port}", f"127.0.0.1:{sasl_port}"


def until_ready(ask: Callable[[], Any], code_of: Callable[[Any], int], not_yet: frozenset[int] = NOT_YET) -> Any:
    """Ask again while the answer only says "not yet"."""
    deadline = time.monotonic() + RETRY_S
    while True:
        answer = ask()
        if code_of(answer) not in not_yet or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


# ---- setup (as the super user) ------------------------------------------------------------------------------------

def set_up(bootstrap: str) -> None:
    with RawClient(bootstrap) as admin:
        created = admin.request(CREATE_TOPICS, 7, timeout_ms=30_000, topics=[
            CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1) for name in TOPICS])
        assert all(t.error_code == ErrorCode.NONE for t in created.topics), created
        for topic in TOPICS:
            until_ready(lambda topic=topic: produce(admin, topic, batch()), lambda code: code)
        for group in GROUPS:  # FindCoordinator first: it creates __consumer_offsets, as clients rely on
            until_ready(lambda group=group: admin.request(FIND_COORDINATOR, 4, key_type=0, coordinator_keys=[group])
                        .coordinators[0].error_code, lambda code: code)
            codes = until_ready(lambda group=group: commit(admin, group, "orders"), lambda codes: max(codes.values()))
            assert codes == {"orders": ErrorCode.NONE}, (group, codes)
        answer = admin.request(CREATE_ACLS, 3, creations=[
            CreateAclsRequest.AclCreation(principal=principal, resource_type=resource_type, resource_name=name,
                                          resource_pattern_type=pattern, operation=operation,
                                          permission_type=permission, host=host)
            for principal, resource_type, name, pattern, operation, permission, host in ACLS])
        assert all(r.error_code == ErrorCode.NONE for r in answer.results), answer
    time.sleep(1.0)  # Kafka applies ACLs through its metadata log: let the broker's authorizer catch up


def batch(transactional: bool = False) -> bytes:
    entries = [(int(time.time() * 1000), None, b"value", ())]
    if transactional:
        return records.build_batch(entries, producer_id=12345, producer_epoch=0, base_sequence=0, is_transactional=True)
    return records.build_batch(entries)


def produce(client: RawClient, topic: str, records_: bytes, transactional_id: str | None = None) -> int:
    response = client.request(PRODUCE, 9, transactional_id=transactional_id, acks=1, timeout_ms=10_000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=records_)])])
    return response.responses[0].partition_responses[0].error_code


def commit(client: RawClient, group: str, *topics: str) -> dict[str, int]:
    response = client.request(OFFSET_COMMIT, 8, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                              group_instance_id=None, topics=[
                                  OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[
                                      OffsetCommitRequest.OffsetCommitRequestPartition(
                                          partition_index=0, committed_offset=1, committed_leader_epoch=-1,
                                          committed_metadata="")]) for topic in topics])
    return {t.name: t.partitions[0].error_code for t in response.topics}


# ---- probes (as each principal) -----------------------------------------------------------------------------------

@contextmanager
def authenticated(bootstrap: str, user: str) -> Iterator[RawClient]:
    with RawClient(bootstrap, client_id=f"acl-matrix-{user}") as client:
        assert client.request(SASL_HANDSHAKE, 1, mechanism="PLAIN").error_code == ErrorCode.NONE
        answer = client.request(SASL_AUTHENTICATE, 2, auth_bytes=f"\0{user}\0{USERS[user]}".encode())
        assert answer.error_code == ErrorCode.NONE, answer
        yield client


def probe(client: RawClient, user: str) -> dict[str, Any]:
    names = [*TOPICS, "missing-topic"]
    answers: dict[str, Any] = {}
    listing = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False,
                             include_topic_authorized_operations=True)
    answers["metadata.all"] = sorted(t.name for t in listing.topics if not t.name.startswith("__"))
    named = client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names],
                           allow_auto_topic_creation=False, include_topic_authorized_operations=True)
    answers["metadata.named"] = {t.name: [t.error_code, t.topic_authorized_operations] for t in named.topics}
    created = until_ready(lambda: client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(
        name=f"auto-{user}")], allow_auto_topic_creation=True), lambda r: r.topics[0].error_code, AUTO_CREATE_NOT_YET)
    answers["metadata.auto_create"] = created.topics[0].error_code
    answers["produce"] = {topic: produce(client, topic, batch()) for topic in TOPICS}
    answers["produce.transactional"] = {txn: produce(client, "payments", batch(True), txn)
                                        for txn in ("nobody-tx", None)}
    answers["fetch"] = {topic: fetch(client, topic, -1) for topic in TOPICS}
    answers["fetch.as_follower"] = {topic: fetch(client, topic, 1) for topic in ("orders", "payments")}
    offsets = client.request(LIST_OFFSETS, 7, replica_id=-1, isolation_level=0, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
            ListOffsetsRequest.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1)])
        for topic in TOPICS])
    answers["list_offsets"] = {t.name: t.partitions[0].error_code for t in offsets.topics}
    configs = client.request(DESCRIBE_CONFIGS, 4, include_synonyms=False, include_documentation=False, resources=[
        *(DescribeConfigsRequest.DescribeConfigsResource(resource_type=2, resource_name=t, configuration_keys=None)
          for t in TOPICS),
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=4, resource_name="0", configuration_keys=None)])
    answers["describe_configs"] = {f"{r.resource_type}:{r.resource_name}": r.error_code for r in configs.results}
    creation = client.request(CREATE_TOPICS, 7, timeout_ms=10_000, validate_only=True, topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1)
        for name in ("alice-new", "bob-new", "orders-new")])
    answers["create_topics"] = {t.name: [t.error_code, t.topic_config_error_code] for t in creation.topics}
    deletion = client.request(DELETE_RECORDS, 2, timeout_ms=10_000, topics=[
        DeleteRecordsRequest.DeleteRecordsTopic(name=topic, partitions=[
            DeleteRecordsRequest.DeleteRecordsPartition(partition_index=0, offset=0)]) for topic in TOPICS])
    answers["delete_records"] = {t.name: t.partitions[0].error_code for t in deletion.topics}
    answers["find_coordinator"] = {
        f"{key_type}:{key}": until_ready(
            lambda key=key, key_type=key_type: client.request(FIND_COORDINATOR, 4, key_type=key_type,
                                                              coordinator_keys=[key]).coordinators[0].error_code,
            lambda code: code)
        for key_type, keys in ((0, GROUPS), (1, ("alice-tx", "bob-tx"))) for key in keys}
    answers["offset_commit"] = {group: commit(client, group, "orders", "payments") for group in GROUPS}
    answers["offset_fetch"] = {}
    for group in GROUPS:
        fetched = client.request(OFFSET_FETCH, 7, group_id=group, topics=None, require_stable=False)
        answers["offset_fetch"][group] = [fetched.error_code, sorted(t.name for t in fetched.topics)]
    described = client.request(DESCRIBE_GROUPS, 5, groups=list(GROUPS), include_authorized_operations=True)
    answers["describe_groups"] = {g.group_id: [g.error_code, g.authorized_operations] for g in described.groups}
    listed = client.request(LIST_GROUPS, 4, states_filter=[])
    answers["list_groups"] = [listed.error_code, sorted(g.group_id for g in listed.groups)]
    answers["init_producer_id"] = {
        str(txn): until_ready(lambda txn=txn: client.request(
            INIT_PRODUCER_ID, 4, transactional_id=txn, transaction_timeout_ms=60_000, producer_id=-1,
            producer_epoch=-1).error_code, lambda code: code)
        for txn in (None, "alice-tx", "bob-tx")}
    answers["describe_acls"] = client.request(DESCRIBE_ACLS, 3, resource_type_filter=1, resource_name_filter=None,
                                              pattern_type_filter=1, principal_filter=None, host_filter=None,
                                              operation=1, permission_type=1).error_code
    answers["create_acls"] = client.request(CREATE_ACLS, 3, creations=[CreateAclsRequest.AclCreation(
        principal=f"User:{user}", resource_type=TYPE.TOPIC, resource_name="anything", host="*",
        resource_pattern_type=PATTERN.LITERAL, operation=OP.READ, permission_type=PERMISSION.ALLOW)]
    ).results[0].error_code
    cluster = client.request(DESCRIBE_CLUSTER, 1, include_cluster_authorized_operations=True, endpoint_type=1)
    answers["describe_cluster"] = [cluster.error_code, cluster.cluster_authorized_operations]
    answers["describe_log_dirs"] = client.request(DESCRIBE_LOG_DIRS, 4, topics=None).error_code
    return answers


def fetch(client: RawClient, topic: str, replica_id: int) -> int:
    response = client.request(FETCH, 12, replica_id=replica_id, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                              isolation_level=0, session_id=0, session_epoch=-1, topics=[
                                  FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchPartition(
                                      partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                      partition_max_bytes=1 << 20)])])
    return response.responses[0].partitions[0].error_code


def answers_of(kind: str, work_dir: Path) -> dict[str, dict[str, Any]]:
    """Each principal's answers, as JSON reads them back (so that recorded and live answers compare alike)."""
    with running(kind, work_dir) as (plaintext, sasl):
        set_up(plaintext)
        result = {}
        for user in USERS:
            with authenticated(sasl, user) as client:
                result[user] = probe(client, user)
        return json.loads(json.dumps(result))


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
    """Each place where the two answers differ, as "path: ours != theirs"."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [line for key in sorted(set(ours) | set(theirs), key=str)
                for line in differences(ours.get(key), theirs.get(key), f"{path}.{key}" if path else str(key))]
    return [] if ours == theirs else [f"{path}: wirebroker {ours!r} != Kafka {theirs!r}"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", choices=("wirebroker", "kafka", "both"), default="both")
    parser.add_argument("--record", action="store_true", help=f"with --broker kafka: write {KAFKA_ANSWERS.name}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="acl-matrix-") as tmp:
        kinds = ("wirebroker", "kafka") if args.broker == "both" else (args.broker,)
        results = {kind: answers_of(kind, Path(tmp) / kind) for kind in kinds}
    if args.record and args.broker == "kafka":
        KAFKA_ANSWERS.write_text(json.dumps(results["kafka"], indent=1, sort_keys=True) + "\n")
        return 0
    if args.broker != "both":
        json.dump(results[args.broker], sys.stdout, indent=1)
        print()
        return 0
    found = differences(results["wirebroker"], results["kafka"])
    for line in found:
        print(line)
    print(f"ACL matrix: {answer_count(results['kafka']) - len(found)}/{answer_count(results['kafka'])} answers "
          "the same on wirebroker and Apache Kafka 4.3.1")
    return 1 if found else 0


def answer_count(answers: Any) -> int:
    return sum(1 for _ in _leaves(answers))


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


if __name__ == "__main__":
    sys.exit(main())
