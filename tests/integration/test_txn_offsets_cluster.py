"""Exactly-once copying on a three-broker ZooKeeper cluster (replication factor 3, min.insync.replicas 2), with the
copier of the single-broker crash test (eos_copier.py, test_transactions_eos.py): the transaction coordinator sends
its markers to partition leaders on other brokers (WriteTxnMarkers over the inter-broker listener), and the group
coordinator of the copier's group may be a third broker. The leader of an output partition is killed (-9) mid-copy
and started again; its successor holds every committed transaction, markers included, and the output equals the
input with nothing of an aborted transaction under read_committed."""

from __future__ import annotations

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.cluster_process import ClusterProcess
from tests.integration.eos_copier import GROUP
from tests.integration.raw_client import RawClient
from tests.integration.test_transactions_eos import PARTITIONS, Copier, Progress, copied
from tests.integration.test_txn_markers import consume_all
from wirebroker.protocol.errors import ErrorCode

PER_PARTITION = 2000
FIND_COORDINATOR = 10


def produce_input(bootstrap: str) -> dict[int, list[bytes]]:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    values = {p: [b"%d:%d" % (p, i) for i in range(PER_PARTITION)] for p in range(PARTITIONS)}
    for partition, partition_values in values.items():
        for value in partition_values:
            producer.produce("in", value, partition=partition)
    assert producer.flush(30) == 0
    return values


def test_exactly_once_across_the_loss_of_an_output_leader(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides={"min.insync.replicas": "2"}) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        for future in admin.create_topics([NewTopic(t, PARTITIONS, 3) for t in ("in", "out")]).values():
            future.result(30)
        expected = produce_input(cluster.bootstrap)

        def copied_in_cluster(_bootstrap: str) -> int | None:
            """The copier's committed input, asked of its group's coordinator, wherever it is now."""
            for node_id in cluster.alive():
                try:
                    with RawClient(cluster.broker(node_id).bootstrap) as client:
                        found = client.request(FIND_COORDINATOR, 1, key=GROUP, key_type=0)
                except OSError:
                    continue
                if found.error_code == ErrorCode.NONE and found.node_id in cluster.alive():
                    return copied(cluster.broker(found.node_id).bootstrap)
            return None

        copier = Copier(cluster.bootstrap, tmp_path / "copier.log")
        try:
            progress = Progress(cluster.bootstrap, copier, copied_in_cluster)
            progress.wait_for(PARTITIONS * PER_PARTITION // 3)
            leader = cluster.leader_of("out", 0)
            cluster.kill(leader)
            progress.wait_for(2 * PARTITIONS * PER_PARTITION // 3)
            cluster.restart(leader)
            progress.wait_for(PARTITIONS * PER_PARTITION)
        finally:
            copier.kill()
        for partition in range(PARTITIONS):
            assert consume_all(cluster.bootstrap, "out", "read_committed", partition) == expected[partition]
