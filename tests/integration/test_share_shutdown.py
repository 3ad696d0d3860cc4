"""A broker's share-group services stop with it (Kafka's SharePartitionManager.close and persister stop in
BrokerServer.shutdown): an embedded broker of a ZooKeeper cluster, whose ShareFetch started the share-partition,
share coordinator and loader threads, leaves none of them running once stopped; the embedded broker is started and
stopped many times in one process."""

from __future__ import annotations

import threading
import time

from tests.integration.raw_client import RawClient
from wirebroker.cluster.zookeeper_server import ZooKeeperServer
from wirebroker.embedded import Broker

SHARE_FETCH = 78
IN_A_CLUSTER = {"node_id": "1", "offsets_topic_replication_factor": "1", "offsets_topic_num_partitions": "1",
                "share_coordinator_state_topic_replication_factor": "1",
                "share_coordinator_state_topic_num_partitions": "1"}


def _share_threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("share-"))


def _until_no_share_threads(timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := _share_threads()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_no_share_thread_survives_the_broker(tmp_path):
    assert _until_no_share_threads() == []  # none left by an earlier test of this process
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as zookeeper:
        for _ in range(2):  # started and stopped again in the same process
            broker = Broker(**IN_A_CLUSTER, zookeeper_connect=zookeeper.connect_string)
            with broker, RawClient(broker.bootstrap_servers) as client:
                client.request(SHARE_FETCH, 1, group_id="g", member_id="AAAAAAAAAAAAAAAAAAAAAA",
                                        share_session_epoch=0, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                                        max_records=100, batch_size=100, topics=[], forgotten_topics_data=[])
                running = " ".join(_share_threads())
                assert "share-partition-requests" in running and "share-coordinator-requests" in running
            assert _until_no_share_threads() == []
