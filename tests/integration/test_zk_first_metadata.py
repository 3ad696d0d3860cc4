"""A ZooKeeper-mode broker that is registered but has not yet had the controller's first UpdateMetadata.

Its Metadata answer would be empty (no brokers, no controller): librdkafka takes that as a partial response and never
asks again on that connection, so a CreateTopics through its admin client was never sent and timed out (seen in
`make test` when a client bootstrapped from the last broker to register within milliseconds of its registration).
The broker holds such a Metadata request until the controller's first UpdateMetadata, at most
FIRST_METADATA_WAIT_S. Here another session squats /controller, so the broker cannot become controller and hears
from none until the squatter leaves.
"""

from __future__ import annotations

import json
import time

from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.integration.broker_process import BrokerProcess
from tests.integration.cluster_process import cluster_defaults
from tests.integration.raw_client import RawClient
from wirebroker.apis.metadata import FIRST_METADATA_WAIT_S
from wirebroker.cluster.zookeeper_server import ZooKeeperServer

METADATA = 3
SQUATTER = json.dumps({"version": 1, "brokerid": 99, "timestamp": "0"}).encode()


def test_metadata_waits_for_the_controllers_first_update_metadata(tmp_path):
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        zk = KazooClient(hosts=zookeeper.connect_string, timeout=10)
        zk.start(timeout=10)
        broker = BrokerProcess(tmp_path / "broker1", {**cluster_defaults(1), "node.id": "1",
                                                      "zookeeper.connect": zookeeper.connect_string})
        try:
            zk.create("/controller", SQUATTER, ephemeral=True, makepath=True)
            broker.start()
            # No controller at all: the answer comes, bounded, with what the broker knows.
            with RawClient(broker.bootstrap) as client:
                started = time.monotonic()
                empty = client.request(METADATA, 12, topics=None, allow_auto_topic_creation=False)
                waited = time.monotonic() - started
            assert (empty.controller_id, empty.brokers) == (-1, [])
            assert FIRST_METADATA_WAIT_S - 0.5 <= waited <= FIRST_METADATA_WAIT_S + 5

            # The controller comes while librdkafka's first Metadata is held: the topic is created.
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            created = admin.create_topics([NewTopic("first", 1, 1)])["first"]
            time.sleep(1)
            zk.delete("/controller")
            created.result(20)
            assert "Creating topic first" in broker.log_text()
        finally:
            broker.kill()
            zk.stop()
            zk.close()
