"""ACLs in ZooKeeper mode (issue 14): kept where Kafka's AclAuthorizer keeps them (/kafka-acl, /kafka-acl-extended,
with change notifications), so a binding created or deleted through one broker is enforced by every broker.

Over PLAINTEXT every client is User:ANONYMOUS; allow.everyone.if.no.acl.found lets it (and the brokers' own
requests) through wherever no binding names the resource."""

from __future__ import annotations

import json

from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.cluster_process import cluster_defaults, wait_until
from tests.integration.raw_client import RawClient
from wirebroker.cluster.acls import (
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.create_acls import CreateAclsRequest
from wirebroker.protocol.messages.delete_acls import DeleteAclsRequest
from wirebroker.protocol.messages.metadata import MetadataRequest

METADATA, DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS = 3, 29, 30, 31
ANONYMOUS = "User:ANONYMOUS"


def _broker(tmp_path, node_id: int, zookeeper: ZooKeeperServer) -> BrokerProcess:
    return BrokerProcess(tmp_path / f"broker{node_id}", {
        **cluster_defaults(2), "node.id": str(node_id), "zookeeper.connect": zookeeper.connect_string,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
    })


def _creation(name: str, pattern: PatternType, principal: str, operation: AclOperation,
              permission: AclPermissionType) -> CreateAclsRequest.AclCreation:
    return CreateAclsRequest.AclCreation(resource_type=ResourceType.TOPIC, resource_name=name,
                                         resource_pattern_type=pattern, principal=principal, host="*",
                                         operation=operation, permission_type=permission)


def _topic_error(client: RawClient, topic: str) -> int:
    response = client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                              allow_auto_topic_creation=False)
    return response.topics[0].error_code


def _described(client: RawClient) -> set[tuple[str, int, str, int, int]]:
    response = client.request(DESCRIBE_ACLS, 3, resource_type_filter=ResourceType.ANY, resource_name_filter=None,
                              pattern_type_filter=PatternType.ANY, principal_filter=None, host_filter=None,
                              operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)
    assert response.error_code == ErrorCode.NONE
    return {(r.resource_name, r.pattern_type, a.principal, a.operation, a.permission_type)
            for r in response.resources for a in r.acls}


def test_acls_created_or_deleted_through_one_broker_are_enforced_by_every_broker(tmp_path):
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        one, two = _broker(tmp_path, 1, zookeeper), _broker(tmp_path, 2, zookeeper)
        zk = KazooClient(hosts=zookeeper.connect_string, timeout=10)
        zk.start(timeout=10)
        try:
            one.start()
            two.start()
            with RawClient(one.bootstrap) as via_one, RawClient(two.bootstrap) as via_two:
                assert _topic_error(via_two, "secret") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                created = via_one.request(CREATE_ACLS, 3, creations=[
                    _creation("secret", PatternType.LITERAL, ANONYMOUS, AclOperation.DESCRIBE,
                              AclPermissionType.DENY),
                    _creation("team-", PatternType.PREFIXED, "User:bob", AclOperation.READ,
                              AclPermissionType.ALLOW),
                    _creation("a/b", PatternType.LITERAL, "User:bob", AclOperation.READ, AclPermissionType.ALLOW),
                ])
                assert [(r.error_code, r.error_message) for r in created.results] == [
                    (ErrorCode.NONE, ""), (ErrorCode.NONE, ""), (ErrorCode.INVALID_REQUEST, "Failed to create ACL")]

                # Kafka's znodes and notifications.
                assert json.loads(zk.get("/kafka-acl/Topic/secret")[0]) == {"version": 1, "acls": [
                    {"principal": ANONYMOUS, "permissionType": "Deny", "operation": "Describe", "host": "*"}]}
                assert json.loads(zk.get("/kafka-acl-extended/prefixed/Topic/team-")[0])["acls"] == [
                    {"principal": "User:bob", "permissionType": "Allow", "operation": "Read", "host": "*"}]
                literal = [zk.get(f"/kafka-acl-changes/{c}")[0] for c in zk.get_children("/kafka-acl-changes")]
                assert b"TOPIC:secret" in literal
                extended = [json.loads(zk.get(f"/kafka-acl-extended-changes/{c}")[0])
                            for c in zk.get_children("/kafka-acl-extended-changes")]
                assert {"version": 1, "resourceType": "TOPIC", "name": "team-", "patternType": "PREFIXED"} in extended

                # The other broker enforces and lists them.
                wait_until(lambda: _topic_error(via_two, "secret") == ErrorCode.TOPIC_AUTHORIZATION_FAILED, 20,
                           "broker 2 to enforce the DENY created through broker 1")
                expected = {("secret", PatternType.LITERAL, ANONYMOUS, AclOperation.DESCRIBE, AclPermissionType.DENY),
                            ("team-", PatternType.PREFIXED, "User:bob", AclOperation.READ, AclPermissionType.ALLOW)}
                wait_until(lambda: _described(via_two) == expected, 20, "broker 2 to list the bindings")
                assert _topic_error(via_one, "secret") == ErrorCode.TOPIC_AUTHORIZATION_FAILED

                deleted = via_two.request(DELETE_ACLS, 3, filters=[DeleteAclsRequest.DeleteAclsFilter(
                    resource_type_filter=ResourceType.TOPIC, resource_name_filter="secret",
                    pattern_type_filter=PatternType.LITERAL, principal_filter=None, host_filter=None,
                    operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)])
                assert [(m.resource_name, m.principal) for m in deleted.filter_results[0].matching_acls] == [
                    ("secret", ANONYMOUS)]
                assert zk.exists("/kafka-acl/Topic/secret") is None
                wait_until(lambda: _topic_error(via_one, "secret") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 20,
                           "broker 1 to drop the DENY deleted through broker 2")
                assert _described(via_one) == expected - {next(e for e in expected if e[0] == "secret")}
        finally:
            for broker in (two, one):
                broker.kill()
            zk.stop()
            zk.close()
