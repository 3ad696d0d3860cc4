"""Transactions on a three-broker cluster: the transaction coordinator is the leader of the transactional id's
`__transaction_state` partition, its markers reach the leaders of the transaction's partitions on other brokers
(WriteTxnMarkers over the inter-broker listener), and when the coordinator's broker is killed the new leader of
that partition loads the state, so a new producer with the same transactional.id fences the old one and its open
transaction is aborted."""

from __future__ import annotations

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_failover import LEADER_CHANGE_TIMEOUT_S, create_topic
from tests.integration.test_transactions import txn_producer
from tests.integration.test_txn_markers import consume_all
from wirebroker.protocol.errors import ErrorCode

FIND_COORDINATOR = 10
TRANSACTION_KEY_TYPE = 1
PARTITIONS = 3
SETTINGS = {"replica.lag.time.max.ms": "10000", "transaction.state.log.num.partitions": "3"}


def find_transaction_coordinator(cluster: ClusterProcess, transactional_id: str) -> int:
    for node_id in cluster.alive():
        with RawClient(cluster.broker(node_id).bootstrap) as client:
            response = client.request(FIND_COORDINATOR, 3, key=transactional_id, key_type=TRANSACTION_KEY_TYPE)
        if response.error_code == ErrorCode.NONE:
            return response.node_id
    return -1


def produce_everywhere(producer, tag: str) -> None:
    for partition in range(PARTITIONS):
        producer.produce("out", f"{tag}-{partition}".encode(), partition=partition)
    assert producer.flush(60) == 0


def test_transactions_across_brokers_survive_the_loss_of_the_coordinator(tmp_path):
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, "out", PARTITIONS)
        assert len({cluster.leader_of("out", p) for p in range(PARTITIONS)}) > 1  # markers to several brokers
        producer = txn_producer(cluster.bootstrap, "cluster-app")
        for tag, commit in (("committed", True), ("aborted", False)):
            producer.begin_transaction()
            produce_everywhere(producer, tag)
            if commit:
                producer.commit_transaction(60)
            else:
                producer.abort_transaction(60)
        producer.begin_transaction()
        produce_everywhere(producer, "open")
        coordinator = find_transaction_coordinator(cluster, "cluster-app")
        assert coordinator in cluster.node_ids
        cluster.kill(coordinator)
        cluster.wait_until(lambda: find_transaction_coordinator(cluster, "cluster-app") not in (-1, coordinator),
                           LEADER_CHANGE_TIMEOUT_S, f"a transaction coordinator other than {coordinator}")
        successor = txn_producer(cluster.bootstrap, "cluster-app")  # loads the state, aborts the open transaction
        successor.begin_transaction()
        produce_everywhere(successor, "after")
        successor.commit_transaction(60)
        seen = [consume_all(cluster.bootstrap, "out", "read_committed", p) for p in range(PARTITIONS)]
    assert seen == [[f"committed-{p}".encode(), f"after-{p}".encode()] for p in range(PARTITIONS)]
