"""Client quotas in ZooKeeper mode (issue 14): AlterClientQuotas on one broker writes Kafka's nodes under
/config/users, /config/clients and /config/ips with change notifications, and the other broker describes them."""

from __future__ import annotations

import json
import time

from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.cluster_process import cluster_defaults
from tests.integration.raw_client import RawClient
from tests.integration.test_client_quotas import alter, alteration, describe
from wirebroker.cluster.zookeeper_server import ZooKeeperServer


def test_quotas_live_in_zookeeper_as_kafka_keeps_them(tmp_path):
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        brokers = [BrokerProcess(tmp_path / f"broker{n}", {
            **cluster_defaults(2), "node.id": str(n), "zookeeper.connect": zookeeper.connect_string}) for n in (1, 2)]
        zk = KazooClient(hosts=zookeeper.connect_string, timeout=10)
        zk.start(timeout=10)
        try:
            for broker in brokers:
                broker.start()
            with RawClient(brokers[0].bootstrap) as client:
                assert alter(client, alteration({"user": "alice", "client-id": "app/1"}, producer_byte_rate=1024.0),
                             alteration({"client-id": None}, request_percentage=12.5),
                             alteration({"ip": "127.0.0.1"}, connection_creation_rate=5.0)) == [(0, None)] * 3
            assert json.loads(zk.get("/config/users/alice/clients/app%2F1")[0]) == {
                "version": 1, "config": {"producer_byte_rate": "1024"}}
            assert json.loads(zk.get("/config/clients/<default>")[0])["config"] == {"request_percentage": "12.5"}
            assert json.loads(zk.get("/config/ips/127.0.0.1")[0])["config"] == {"connection_creation_rate": "5"}
            notifications = [json.loads(zk.get(f"/config/changes/{c}")[0])["entity_path"]
                             for c in zk.get_children("/config/changes")]
            assert {"users/alice/clients/app%2F1", "clients/<default>", "ips/127.0.0.1"} <= set(notifications)
            expected = {(("client-id", "app/1"), ("user", "alice")): {"producer_byte_rate": 1024.0},
                        (("client-id", None),): {"request_percentage": 12.5},
                        (("ip", "127.0.0.1"),): {"connection_creation_rate": 5.0}}
            with RawClient(brokers[1].bootstrap) as client:  # the other broker learnt them through its watch
                deadline = time.monotonic() + 10
                while describe(client) != expected and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert describe(client) == expected
                assert alter(client, alteration({"client-id": None}, request_percentage=None)) == [(0, None)]
            assert json.loads(zk.get("/config/clients/<default>")[0])["config"] == {}
        finally:
            zk.stop()
            for broker in brokers:
                broker.kill()
