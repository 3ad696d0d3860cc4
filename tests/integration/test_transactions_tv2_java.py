"""Transaction protocol 2 (transaction.version 2, KIP-890 part 2) with Java's producer, kafka-clients 4.3.1
(java/TransactionsProbe.java, compiled against the jars of Apache Kafka 4.3.1 in the compatibility matrix's cache):
the broker finalizes transaction.version 2 as Kafka 4.3.1 does, so the producer commits and aborts without a single
AddPartitionsToTxn or AddOffsetsToTxn (the broker's request metrics count none: EndTxn v5, TxnOffsetCommit v5 and
Produce v12+ instead); read_committed sees exactly the committed records and the group's offsets are those of the
committed transaction only. In a three-broker ZooKeeper cluster the leaders of the written partitions are not all
the transaction coordinator, so their adds travel as AddPartitionsToTxn v5 between brokers (seen by hand after: a
raw Produce v12 to another broker's partition shows in the coordinator's DescribeTransactions)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaAdminClient

from tests.integration.cluster_process import ClusterProcess
from tests.integration.raw_client import RawClient
from tests.integration.test_http_port import get_metrics
from tests.integration.test_transactions_tv2_adds import group_offsets
from tests.integration.test_txn_markers import consume_all
from wirebroker.network.ports import free_port
from wirebroker.protocol import records
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.produce import ProduceRequest

pytestmark = pytest.mark.usefixtures("jdk_and_maven")

PROBE_SOURCE = Path(__file__).parent / "java" / "TransactionsProbe.java"
KAFKA_JARS = "kafka-4.3.1"  # Apache Kafka 4.3.1's classpath, kafka-clients-4.3.1.jar in it
PRODUCE, FIND_COORDINATOR, INIT_PRODUCER_ID, DESCRIBE_TRANSACTIONS = 0, 10, 22, 65
GROUP_KEY, TRANSACTION_KEY = 0, 1
TOPIC, GROUP, TXN_ID = "tv2-java", "tv2-java-group", "tv2-java-producer"


def run_probe(bootstrap: str, partitions: int, coordinator_of: Callable[[str, int], str]) -> None:
    """Run the probe, then check what read_committed reads and the group's offsets, asked of its coordinator
    (`coordinator_of(key, key type)` -> its bootstrap address)."""
    from compat_tests.cache import DEFAULT_CACHE_DIR
    from compat_tests.installers import DRIVER_JVM_OPTS, compile_java
    from compat_tests.maven import classpath, fetch_jars

    jars = fetch_jars(KAFKA_JARS)
    classes = compile_java(PROBE_SOURCE, jars, DEFAULT_CACHE_DIR / "java" / "transactions-probe")
    done = subprocess.run(["java", *DRIVER_JVM_OPTS, "-cp", f"{classes}:{classpath(jars)}", "TransactionsProbe",
                           bootstrap, TOPIC, GROUP, TXN_ID], capture_output=True, text=True, timeout=240, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(("step ", "probe "))]
    assert lines == ["step committed ok", "step aborted ok", "step last ok", "probe done"], done.stdout + done.stderr
    for partition in range(partitions):
        assert consume_all(bootstrap, TOPIC, "read_committed", partition) == [
            b"committed-%d" % partition, b"last-%d" % partition]
        assert len(consume_all(bootstrap, TOPIC, "read_uncommitted", partition)) == 3
    assert group_offsets(coordinator_of(GROUP, GROUP_KEY), GROUP, TOPIC, partitions) == {(TOPIC, 0): 5}


def create_topic(bootstrap: str, partitions: int, replication_factor: int) -> None:
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(TOPIC, partitions, replication_factor)])
    finally:
        admin.close()


def requests_by_version(url: str) -> dict[str, dict[int, float]]:
    counts: dict[str, dict[int, float]] = {}
    for (name, labels), value in get_metrics(url).items():
        if name == "kafka_network_requestmetrics_requests_total":
            label = dict(labels)
            counts.setdefault(label["request"], {})[int(label["version"])] = value
    return counts


def test_a_java_producer_commits_and_aborts_without_adding_partitions(broker_factory):
    url = f"http://127.0.0.1:{free_port()}"
    broker = broker_factory(**{"http.listener": url, "offsets.topic.num.partitions": "1",
                               "transaction.state.log.num.partitions": "1"})
    create_topic(broker.bootstrap, 2, 1)
    run_probe(broker.bootstrap, 2, lambda key, key_type: broker.bootstrap)
    seen = requests_by_version(url)
    assert "AddPartitionsToTxn" not in seen and "AddOffsetsToTxn" not in seen, seen
    assert seen["EndTxn"] == {5: 3}
    assert seen["TxnOffsetCommit"] == {5: 2}
    assert min(seen["Produce"]) >= 12, seen["Produce"]


def test_a_java_producer_in_a_cluster_adds_through_the_coordinator_broker(tmp_path):
    with ClusterProcess(tmp_path, brokers=3, overrides={"min.insync.replicas": "2"}) as cluster:
        create_topic(cluster.bootstrap, 3, 3)

        def coordinator(key: str, key_type: int) -> int:
            def found() -> tuple[int] | None:
                with RawClient(cluster.broker(cluster.alive()[0]).bootstrap) as client:
                    answer = client.request(FIND_COORDINATOR, 1, key=key, key_type=key_type)
                return (answer.node_id,) if answer.error_code == ErrorCode.NONE else None

            return cluster.wait_until(found, 60, f"the coordinator of {key}")[0]

        transaction_coordinator = coordinator(TXN_ID, TRANSACTION_KEY)  # there before the producer asks for it
        leaders = {cluster.leader_of(TOPIC, p) for p in range(3)}
        assert leaders - {transaction_coordinator}, "every partition is led by the transaction coordinator"
        run_probe(cluster.bootstrap, 3, lambda key, key_type: cluster.broker(coordinator(key, key_type)).bootstrap)

        # raw, to see it: a record to a partition another broker leads is in the transaction at the coordinator
        remote = next(p for p in range(3) if cluster.leader_of(TOPIC, p) != transaction_coordinator)
        with RawClient(cluster.broker(transaction_coordinator).bootstrap) as at_coordinator, \
                RawClient(cluster.broker(cluster.leader_of(TOPIC, remote)).bootstrap) as at_leader:
            init = at_coordinator.request(INIT_PRODUCER_ID, 4, transactional_id=TXN_ID, transaction_timeout_ms=60_000,
                                          producer_id=-1, producer_epoch=-1)
            assert init.error_code == ErrorCode.NONE
            batch = records.build_batch([(0, None, b"raw", ())], producer_id=init.producer_id,
                                        producer_epoch=init.producer_epoch, base_sequence=0, is_transactional=True)
            produced = at_leader.request(PRODUCE, 12, transactional_id=TXN_ID, acks=-1, timeout_ms=10_000, topic_data=[
                ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
                    ProduceRequest.PartitionProduceData(index=remote, records=batch)])])
            assert produced.responses[0].partition_responses[0].error_code == ErrorCode.NONE
            [state] = at_coordinator.request(DESCRIBE_TRANSACTIONS, 0, transactional_ids=[TXN_ID]).transaction_states
            assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) == (
                "Ongoing", [(TOPIC, [remote])])
