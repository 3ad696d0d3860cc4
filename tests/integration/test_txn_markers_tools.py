"""Kafka's kafka-transactions.sh (TransactionsCommand, Kafka 4.3.1) on a hanging transaction: describe-producers
lists the producer and the start offset of its open transaction (DescribeProducers), and `abort` ends it with an
ABORT marker the admin client sends itself (WriteTxnMarkers), after which the last stable offset moves on."""

from __future__ import annotations

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import (
    READ_COMMITTED,
    RawTransactions,
    create_topic,
    latest_offset,
)

TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"


def test_describe_producers_and_abort_a_hanging_transaction(broker):
    jars = install_jars()
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "hanging")
        committed = RawTransactions(client, "hanging")
        committed.send([b"kept"], transactional=False)
        hanging = RawTransactions(client, "hanging")
        start = hanging.send([b"h1", b"h2"])
        assert latest_offset(client, "hanging", READ_COMMITTED) == start

        described = run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap,
                                                          "describe-producers", "--topic", "hanging",
                                                          "--partition", "0"], check=True).stdout
        rows = {int(line.split()[0]): line.split() for line in described.splitlines()[1:] if line.strip()}
        # ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp CurrentTransactionStartOffset
        assert rows[hanging.producer_id][1:4] == ["0", "-1", "1"] and rows[hanging.producer_id][5] == str(start)
        assert rows[committed.producer_id][5] == "None"

        run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "abort", "--topic",
                                              "hanging", "--partition", "0", "--start-offset", str(start)],
                 check=True)
        assert latest_offset(client, "hanging", READ_COMMITTED) == start + 3  # the two records and the marker
