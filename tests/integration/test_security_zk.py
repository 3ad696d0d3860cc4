"""SCRAM credentials in ZooKeeper mode (issue 14): kept under /config/users in Kafka's format with a change
notification, and used by every broker of the cluster to authenticate."""

from __future__ import annotations

import json
import time

import pytest
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.cluster_process import cluster_defaults
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.network.ports import free_port

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)


def _broker(tmp_path, node_id: int, zookeeper: ZooKeeperServer) -> tuple[BrokerProcess, int]:
    plain, sasl = free_port(), free_port()
    return BrokerProcess(tmp_path / f"broker{node_id}", {
        **cluster_defaults(2), "node.id": str(node_id), "zookeeper.connect": zookeeper.connect_string,
        "listeners": f"PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl}",
        "inter.broker.listener.name": "PLAINTEXT", "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    }, port=plain), sasl


def test_scram_users_live_in_zookeeper_and_authenticate_on_every_broker(tmp_path):
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        (one, sasl_one), (two, sasl_two) = _broker(tmp_path, 1, zookeeper), _broker(tmp_path, 2, zookeeper)
        zk = KazooClient(hosts=zookeeper.connect_string, timeout=10)
        zk.start(timeout=10)
        try:
            one.start()
            two.start()
            admin = AdminClient({"bootstrap.servers": one.bootstrap})
            upsert = UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                                                  b"alice-secret")
            admin.alter_user_scram_credentials([upsert])["alice"].result(30)
            node = json.loads(zk.get("/config/users/alice")[0])
            assert node["version"] == 1 and node["config"]["SCRAM-SHA-512"].endswith(",iterations=8192")
            assert "alice-secret" not in json.dumps(node)
            notifications = [json.loads(zk.get(f"/config/changes/{c}")[0]) for c in zk.get_children("/config/changes")]
            assert {"version": 2, "entity_path": "users/alice"} in notifications
            for port in (sasl_one, sasl_two):  # the other broker learnt it through its watch
                errors = []
                producer = confluent_kafka.Producer({
                    "bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret",
                    "error_cb": errors.append, "log_level": 0})
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not errors:
                    metadata = producer.list_topics(timeout=5)
                    if metadata.brokers:
                        break
                assert not errors and metadata.brokers
        finally:
            for broker in (two, one):
                broker.kill()
            zk.stop()
            zk.close()


PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')


def test_a_cluster_replicates_over_a_sasl_inter_broker_listener(tmp_path):
    """The controller's requests, the followers' fetches and AlterPartition authenticate with
    sasl.mechanism.inter.broker.protocol, as Kafka's brokers do: replicated writes go through."""
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        brokers = []
        for node_id in (1, 2):
            port = free_port()
            brokers.append(BrokerProcess(tmp_path / f"broker{node_id}", {
                **cluster_defaults(2), "node.id": str(node_id), "zookeeper.connect": zookeeper.connect_string,
                "listeners": f"SASL_PLAINTEXT://127.0.0.1:{port}", "inter.broker.listener.name": "SASL_PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            }, port=port))
        try:
            for broker in brokers:
                broker.start()
            config = {"bootstrap.servers": brokers[0].bootstrap, "security.protocol": "SASL_PLAINTEXT",
                      "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret",
                      "log_level": 0}
            from confluent_kafka.admin import NewTopic

            admin = AdminClient(config)
            admin.create_topics([NewTopic("replicated", 1, 2, config={"min.insync.replicas": "2"})])[
                "replicated"].result(30)
            producer = confluent_kafka.Producer({**config, "acks": "all", "message.timeout.ms": 30000})
            outcome = []
            for i in range(5):
                producer.produce("replicated", f"v{i}".encode(), on_delivery=lambda err, _msg: outcome.append(err))
            assert producer.flush(40) == 0
            assert outcome == [None] * 5  # acks=all with min.insync.replicas=2: the follower fetched over SASL
            assert all("Failed authentication" not in b.log_text() for b in brokers)
        finally:
            for broker in reversed(brokers):
                broker.kill()
