"""Exactly-once copying on a three-broker ZooKeeper cluster (replication factor 3, min.insync.replicas 2): the
transaction coordinator sends its markers to partition leaders on other brokers (WriteTxnMarkers over the
inter-broker listener), and the group coordinator of the copier's group may be a third broker. The output's leader
is killed (-9) mid-copy; its successor holds every committed transaction, markers included, and the copy ends with
the output equal to the input."""

from __future__ import annotations

import subprocess

from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_txn_markers import consume_all
from tests.integration.test_txn_offsets_eos import produce_input
from tests.integration.txn_copier import copy_through_crashes
from tests.integration.txn_raw import READ_COMMITTED, latest_offset

RECORDS = 3000
CRASH_AFTER = 400


def test_exactly_once_across_the_loss_of_the_output_leader(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides={"min.insync.replicas": "2"}) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        for future in admin.create_topics([NewTopic(t, 1, 3) for t in ("in", "out")]).values():
            future.result(30)
        values = produce_input(cluster.bootstrap, RECORDS)
        killed: list[int] = []

        def committed() -> int | None:
            leader = cluster.leader_of("out", 0)
            if leader < 0:
                return None
            try:
                with RawClient(cluster.broker(leader).bootstrap) as client:
                    return latest_offset(client, "out", READ_COMMITTED)
            except (AssertionError, OSError):  # a leader that just changed, or the one being killed
                return None

        def kill_the_output_leader(_copier: subprocess.Popen) -> None:
            killed.append(cluster.leader_of("out", 0))
            cluster.kill(killed[0])

        copy_through_crashes(cluster.bootstrap, RECORDS, committed, [(CRASH_AFTER, kill_the_output_leader)])
        cluster.restart(killed[0])
        cluster.wait_until(lambda: cluster.leader_of("out", 0) >= 0, 30, "a leader of out-0")
        assert consume_all(cluster.bootstrap, "out", "read_committed") == values
