"""Change notifications (cluster/zk/change_notifications.py) over a real ZooKeeper server: every new notification
reaches the handler once, in order; those present at start are taken as seen; processed ones past their expiry are
deleted, as Kafka's ZkNodeChangeNotificationListener purges them."""

from __future__ import annotations

from kazoo.client import KazooClient

from tests.integration.cluster_process import wait_until
from wirebroker.cluster.zk import change_notifications
from wirebroker.cluster.zk.change_notifications import (
    ChangeNotificationListener,
    notify,
)
from wirebroker.cluster.zookeeper_server import ZooKeeperServer

PATH, PREFIX = "/test-changes", "change_"


def test_new_notifications_reach_the_handler_in_order_and_expired_ones_are_purged(tmp_path, monkeypatch):
    monkeypatch.setattr(change_notifications, "CHANGE_EXPIRATION_MS", 0)  # every processed notification expired
    with ZooKeeperServer(data_dir=tmp_path / "zookeeper", tick_time_ms=500) as server:
        zk = KazooClient(hosts=server.connect_string, timeout=10)
        zk.start(timeout=10)
        try:
            notify(zk, PATH, PREFIX, b"before start")
            seen: list[bytes] = []
            ChangeNotificationListener(zk, PATH, PREFIX, seen.append).start()
            for data in (b"one", b"two", b"three"):
                notify(zk, PATH, PREFIX, data)
            wait_until(lambda: seen == [b"one", b"two", b"three"], 10, "the three notifications")
            notify(zk, PATH, PREFIX, b"four")  # one more pass, which purges what the earlier ones left
            wait_until(lambda: seen[-1:] == [b"four"] and len(zk.get_children(PATH)) <= 1, 10,
                       "the processed notifications to be purged")
            assert seen == [b"one", b"two", b"three", b"four"]
        finally:
            zk.stop()
            zk.close()
