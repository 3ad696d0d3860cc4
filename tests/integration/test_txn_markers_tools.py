"""Kafka's kafka-transactions.sh (TransactionsCommand, Kafka 4.3.1) on a hanging transaction: describe-producers
lists the producer and the start offset of its open transaction (DescribeProducers), find-hanging finds it (no
transaction coordinator knows its producer), and `abort` ends it with an ABORT marker the admin client sends itself
(WriteTxnMarkers), after which the last stable offset moves on; and DumpLogSegments reads our control batches and
.txnindex."""

from __future__ import annotations

import re

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import (
    READ_COMMITTED,
    RawTransactions,
    create_topic,
    latest_offset,
    unverified_broker,  # noqa: F401  (the broker fixture)
)

TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"


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

        # No transaction coordinator knows the producer: find-hanging (DescribeProducers, ListTransactions) lists it.
        hanging_rows = run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "find-hanging",
                                                             "--broker-id", "0", "--max-transaction-timeout", "0"],
                                check=True).stdout.splitlines()[1:]
        assert [row.split()[:3] for row in hanging_rows] == [["hanging", "0", str(hanging.producer_id)]]

        run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "abort", "--topic",
                                              "hanging", "--partition", "0", "--start-offset", str(start)],
                 check=True)
        assert latest_offset(client, "hanging", READ_COMMITTED) == start + 3  # the two records and the marker


def test_dump_log_segments_reads_our_markers_and_txnindex(broker):
    jars = install_jars()
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "dumped")
        txn = RawTransactions(client, "dumped")
        start = txn.send([b"x1", b"x2"])
        txn.end(commit=False, coordinator_epoch=5)
        txn.send([b"y1"])
        txn.end(commit=True, coordinator_epoch=5)
    broker.stop()
    segment = broker.data_dir / "dumped-0" / "00000000000000000000"
    dump = run_tool(jars, DUMP_LOG_SEGMENTS, ["--deep-iteration", "--files", f"{segment}.log"], check=True).stdout
    markers = re.findall(r"endTxnMarker: (\w+) coordinatorEpoch: (\d+)", dump)
    assert markers == [("ABORT", "5"), ("COMMIT", "5")]
    assert dump.count("isTransactional: true") == 4 and dump.count("isControl: true") == 2
    index = run_tool(jars, DUMP_LOG_SEGMENTS, ["--files", f"{segment}.txnindex"], check=True).stdout
    assert re.findall(r"producerId: (\d+) firstOffset: (\d+) lastOffset: (\d+) lastStableOffset: (\d+)", index) == [
        (str(txn.producer_id), str(start), str(start + 2), str(start + 3))]
