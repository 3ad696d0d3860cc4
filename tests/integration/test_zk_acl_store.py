"""The ZooKeeper ACL store (cluster/zk/acls.py) of two brokers over a real ZooKeeper server, without the brokers:
Kafka's znode layout, a store started later reading every node, change notifications keeping the other up to date,
and DeleteAcls' matching as Kafka's AclAuthorizer does it."""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient

from tests.integration.cluster_process import wait_until
from wirebroker.cluster.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from wirebroker.cluster.zk.acls import ZkAclStore, encode_acls
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.protocol.errors import InvalidRequestError

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
READ_ORDERS = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", AclOperation.READ, ALLOW)
WRITE_ORDERS = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "10.0.0.1",
                          AclOperation.WRITE, DENY)
TEAM_GROUPS = AclBinding(ResourceType.GROUP, "team-", PatternType.PREFIXED, "User:alice", "*", AclOperation.READ,
                         ALLOW)
TXN = AclBinding(ResourceType.TRANSACTIONAL_ID, "tx-1", PatternType.LITERAL, "User:*", "*",
                 AclOperation.IDEMPOTENT_WRITE, ALLOW)


def _filter(resource_type: ResourceType = ResourceType.ANY, name: str | None = None,
            pattern: PatternType = PatternType.ANY, principal: str | None = None) -> AclBindingFilter:
    return AclBindingFilter(resource_type, name, pattern, principal, None, AclOperation.ANY, AclPermissionType.ANY)


@pytest.fixture
def zookeeper(tmp_path):
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as server:
        clients = []

        def connect() -> KazooClient:
            client = KazooClient(hosts=server.connect_string, timeout=10)
            client.start(timeout=10)
            clients.append(client)
            return client

        yield connect
        for client in clients:
            client.stop()
            client.close()


def test_bindings_live_in_kafka_s_znodes_and_reach_every_store(zookeeper):
    one = ZkAclStore(zookeeper())
    one.create([READ_ORDERS, WRITE_ORDERS, TEAM_GROUPS, TXN, READ_ORDERS])
    assert set(one.bindings()) == {READ_ORDERS, WRITE_ORDERS, TEAM_GROUPS, TXN}
    zk = zookeeper()
    assert json.loads(zk.get("/kafka-acl/Topic/orders")[0]) == {"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "Write", "host": "10.0.0.1"}]}
    assert json.loads(zk.get("/kafka-acl-extended/prefixed/Group/team-")[0])["acls"][0]["operation"] == "Read"
    assert json.loads(zk.get("/kafka-acl/TransactionalId/tx-1")[0])["acls"][0]["operation"] == "IdempotentWrite"

    two = ZkAclStore(zookeeper())  # started after: reads every node
    assert set(two.bindings()) == set(one.bindings())

    deleted = two.delete([_filter(ResourceType.TOPIC, "orders", PatternType.MATCH), _filter(principal="User:alice")])
    assert [set(d) for d in deleted] == [{READ_ORDERS, WRITE_ORDERS}, {TEAM_GROUPS}]  # each under its first filter
    assert zk.exists("/kafka-acl/Topic/orders") is None
    assert zk.exists("/kafka-acl-extended/prefixed/Group/team-") is None
    wait_until(lambda: set(one.bindings()) == {TXN}, 10, "the first store to hear of the deletion")
    assert [set(d) for d in one.delete([_filter(ResourceType.TOPIC, "orders", PatternType.LITERAL)])] == [set()]


def test_a_filter_naming_one_resource_deletes_what_zookeeper_holds_though_no_notification_came(zookeeper):
    """AclAuthorizer.deleteAcls reads such a resource from ZooKeeper: a binding this broker has not heard of (written
    here without a notification) is deleted too."""
    store = ZkAclStore(zookeeper())
    zookeeper().create("/kafka-acl/Topic/orders", encode_acls((READ_ORDERS,)), makepath=True)
    assert store.bindings() == ()
    assert store.delete([_filter(ResourceType.TOPIC, "orders", PatternType.LITERAL)]) == [[READ_ORDERS]]
    assert store.bindings() == ()


def test_a_resource_name_with_a_slash_is_refused_as_kafka_refuses_it(zookeeper):
    store = ZkAclStore(zookeeper())
    with pytest.raises(InvalidRequestError, match="Failed to create ACL"):
        store.validate(AclBinding(ResourceType.TOPIC, "a/b", PatternType.LITERAL, "User:alice", "*",
                                  AclOperation.READ, ALLOW))
    store.validate(READ_ORDERS)
