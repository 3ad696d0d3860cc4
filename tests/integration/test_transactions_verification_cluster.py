"""Transaction verification (KIP-890 part 1) across brokers: in a three-broker cluster the leader of a partition
that is not the transaction coordinator's broker verifies a protocol 1 producer's first batch there with an
AddPartitionsToTxn v5 verify_only to the coordinator's broker: refused (nothing appended) until the producer's own
AddPartitionsToTxn put the partition in the transaction, then appended."""

from __future__ import annotations

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_failover import create_topic
from tests.integration.test_transactions_cluster import find_transaction_coordinator
from tests.integration.test_transactions_verification import (
    TOPIC,
    TXN_ID,
    add_partitions,
    ends,
    init,
    produce,
)
from wirebroker.protocol.errors import ErrorCode

PARTITIONS = 3
SETTINGS = {"transaction.state.log.num.partitions": "3"}


def test_a_leader_verifies_at_the_coordinator_of_another_broker(tmp_path):
    with ClusterProcess(tmp_path, overrides=SETTINGS) as cluster:
        create_topic(cluster, TOPIC, PARTITIONS)
        cluster.wait_until(lambda: find_transaction_coordinator(cluster, TXN_ID) in cluster.node_ids, 30,
                           "a transaction coordinator")  # the first FindCoordinator makes __transaction_state
        coordinator = find_transaction_coordinator(cluster, TXN_ID)
        remote = [p for p in range(PARTITIONS) if cluster.leader_of(TOPIC, p) != coordinator]
        assert remote, "every partition is led by the transaction coordinator"
        partition = remote[0]
        with RawClient(cluster.broker(coordinator).bootstrap) as at_coordinator, \
                RawClient(cluster.broker(cluster.leader_of(TOPIC, partition)).bootstrap) as at_leader:
            producer_id, epoch = init(at_coordinator)
            assert produce(at_leader, 11, producer_id, epoch, 0, [partition])[partition][0] == (
                ErrorCode.TRANSACTION_ABORTABLE)
            assert produce(at_leader, 10, producer_id, epoch, 0, [partition])[partition] == (
                ErrorCode.INVALID_TXN_STATE, "Partition was not added to the transaction")
            assert ends(at_leader, [partition]) == [0]

            add_partitions(at_coordinator, producer_id, epoch, [partition])
            assert produce(at_leader, 11, producer_id, epoch, 0, [partition]) == {partition: (ErrorCode.NONE, None)}
            assert ends(at_leader, [partition]) == [1]
