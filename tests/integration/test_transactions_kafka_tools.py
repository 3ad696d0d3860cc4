"""Kafka's own tools read our transaction coordinator: kafka-transactions.sh (TransactionsCommand, Kafka 4.3.1)
lists and describes an open transaction (ListTransactions, DescribeTransactions), and DumpLogSegments
--transaction-log-decoder decodes `__transaction_state` (Kafka's TransactionLogKey/Value records). Kafka's jars come
from Maven Central into the compat cache (`python -m compat_tests` installs them)."""

from __future__ import annotations

import json
import re

from compat_tests.reference_kafka import install_jars, run_tool
from tests.integration.test_transactions import (
    create_topics,
    describe,
    open_transaction,
    transaction,
    txn_producer,
    wait_for,
)

TRANSACTIONS_COMMAND = "org.apache.kafka.tools.TransactionsCommand"
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"
ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT = 1, 2, 3, 4, 5


def rows(output: str) -> list[list[str]]:
    """The tool's tab-separated table, header first."""
    return [[cell.strip() for cell in line.split("\t")] for line in output.splitlines() if line.strip()]


def test_kafka_tools_read_our_transactions(broker_factory):
    jars = install_jars()
    broker = broker_factory(**{"transaction.state.log.num.partitions": "1"})
    create_topics(broker.bootstrap, "out")
    producer = txn_producer(broker.bootstrap, "tools-txn")
    transaction(producer, [b"committed"], commit=True)
    open_transaction(producer, b"open")

    listed = rows(run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "list"],
                           check=True).stdout)
    assert listed[0][:4] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    assert [(row[0], row[3]) for row in listed[1:]] == [("tools-txn", "Ongoing")]
    # KIP-1152: the admin client sends the pattern in ListTransactions v2; it must match the whole id.
    by_pattern = {pattern: [row[0] for row in rows(run_tool(
        jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "list", "--transactional-id-pattern",
                                     pattern], check=True).stdout)[1:]] for pattern in ("tools-.*", "tools")}
    assert by_pattern == {"tools-.*": ["tools-txn"], "tools": []}
    described = rows(run_tool(jars, TRANSACTIONS_COMMAND, ["--bootstrap-server", broker.bootstrap, "describe",
                                                           "--transactional-id", "tools-txn"], check=True).stdout)
    header, row = described[0], described[1]
    fields = dict(zip(header, row, strict=False))
    assert (fields["TransactionalId"], fields["ProducerEpoch"], fields["TransactionState"],
            fields["TopicPartitions"]) == ("tools-txn", "0", "Ongoing", "out-0")
    producer.abort_transaction(30)  # answered once PrepareAbort is written: CompleteAbort follows the markers
    wait_for(lambda: describe(broker.bootstrap, "tools-txn").transaction_state == "CompleteAbort", 10,
             "CompleteAbort")

    broker.stop()
    segment = broker.data_dir / "__transaction_state-0" / "00000000000000000000.log"
    dumped = run_tool(jars, DUMP_LOG_SEGMENTS, ["--transaction-log-decoder", "--files", str(segment)],
                      check=True).stdout
    records = [(json.loads(key), json.loads(payload)) for key, payload in
               re.findall(r"key: (\{.*?\}) payload: (\{.*\}|null)$", dumped, re.MULTILINE)]
    assert {json.dumps(key) for key, _ in records} == {'{"type": "0", "data": {"transactionalId": "tools-txn"}}'}
    states = [(value["version"], value["data"]["transactionStatus"], value["data"]["transactionPartitions"])
              for _, value in records]
    out = [{"topic": "out", "partitionIds": [0]}]
    assert states == [("0", 0, None), ("0", ONGOING, out), ("0", PREPARE_COMMIT, out), ("0", COMPLETE_COMMIT, []),
                      ("0", ONGOING, out), ("0", PREPARE_ABORT, out), ("0", COMPLETE_ABORT, [])]
