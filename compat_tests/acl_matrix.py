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
ListGroups, InitProducerId, DescribeAcls, CreateAcls, DescribeCluster and DescribeLogDirs (compat_tests/acl_probes.py
probe); DeleteTopics (by name, existing or not), CreatePartitions, IncrementalAlterConfigs and AlterConfigs (validate
only), DeleteGroups, OffsetDelete, EndTxn, AddOffsetsToTxn, TxnOffsetCommit and AddPartitionsToTxn (another's
transactional id), DescribeTransactions, ListTransactions, DescribeProducers, OffsetForLeaderEpoch, ElectLeaders,
ListPartitionReassignments, DescribeTopicPartitions and ConsumerGroupDescribe (probe_admin); Describe- and
AlterUserScramCredentials, the share-group APIs, the share-state APIs 83-87 and FindCoordinator for a share-partition
key (compat_tests/acl_probes_share.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compat_tests.acl_probes import (
    CREATE_ACLS,
    CREATE_TOPICS,
    DOOMED,
    FIND_COORDINATOR,
    GROUPS,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    TOPICS,
    USERS,
    batch,
    commit,
    probe,
    probe_admin,
    produce,
    until_ready,
)
from compat_tests.acl_probes_share import probe_share, topic_ids
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
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_acls import CreateAclsRequest
from wirebroker.protocol.messages.create_topics import CreateTopicsRequest

OP, TYPE, PATTERN, PERMISSION = AclOperation, ResourceType, PatternType, AclPermissionType
PLAIN_JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
              + " ".join(f'user_{user}="{password}"' for user, password in USERS.items()) + ";")
ALICE, BOB, EVERYONE = "User:alice", "User:bob", "User:*"
# (principal, resource type, name, pattern, operation, permission, host)
ACLS = (
    (ALICE, TYPE.TOPIC, "orders", PATTERN.PREFIXED, OP.READ, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "orders-eu", PATTERN.LITERAL, OP.READ, PERMISSION.DENY, "*"),
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.WRITE, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.WRITE, PERMISSION.DENY, "10.9.9.9"),  # another host's
    (ALICE, TYPE.TOPIC, "payments", PATTERN.LITERAL, OP.ALTER_CONFIGS, PERMISSION.ALLOW, "*"),
    (ALICE, TYPE.TOPIC, "secret", PATTERN.LITERAL, OP.DESCRIBE, PERMISSION.ALLOW, "127.0.0.1"),  # this host's
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


# ---- setup (as the super user) ------------------------------------------------------------------------------------

def set_up(bootstrap: str) -> None:
    with RawClient(bootstrap) as admin:
        created = admin.request(CREATE_TOPICS, 7, timeout_ms=30_000, topics=[
            CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1)
            for name in (*TOPICS, *DOOMED.values())])
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


@contextmanager
def authenticated(bootstrap: str, user: str) -> Iterator[RawClient]:
    with RawClient(bootstrap, client_id=f"acl-matrix-{user}") as client:
        assert client.request(SASL_HANDSHAKE, 1, mechanism="PLAIN").error_code == ErrorCode.NONE
        answer = client.request(SASL_AUTHENTICATE, 2, auth_bytes=f"\0{user}\0{USERS[user]}".encode())
        assert answer.error_code == ErrorCode.NONE, answer
        yield client


def answers_of(kind: str, work_dir: Path) -> dict[str, dict[str, Any]]:
    """Each principal's answers, as JSON reads them back (so that recorded and live answers compare alike)."""
    with running(kind, work_dir) as (plaintext, sasl):
        set_up(plaintext)
        ids = topic_ids(plaintext)
        result = {}
        for user in USERS:
            with authenticated(sasl, user) as client:
                result[user] = {**probe(client, user), **probe_admin(client, user), **probe_share(client, user, ids)}
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
