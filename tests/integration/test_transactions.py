"""Transactions through the transaction coordinator with real clients (confluent-kafka's and kafka-python's
transactional producers): a commit is visible to read_committed and an abort is not, a second producer with the same
transactional.id fences the first, a producer that dies mid-transaction is aborted once its timeout passes (the last
stable offset moves past it), and the coordinator's state survives a kill -9 of the broker."""

from __future__ import annotations

import subprocess
import sys
import time

import confluent_kafka
import kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.raw_client import RawClient
from tests.integration.test_txn_markers import consume_all
from tests.integration.txn_raw import latest_offset
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.describe_transactions import (
    DescribeTransactionsResponse,
)

DESCRIBE_TRANSACTIONS = 65
LIST_TRANSACTIONS = 66
READ_COMMITTED = 1
READ_UNCOMMITTED = 0
TXN_TIMEOUT_MS = 3000
CLEANUP_INTERVAL_MS = 500
FAST_ABORTS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": str(CLEANUP_INTERVAL_MS)}


def create_topics(bootstrap: str, *names: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1) for name in names]).values():
        future.result(30)


def txn_producer(bootstrap: str, transactional_id: str, **config: object) -> confluent_kafka.Producer:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                                         **config})
    producer.init_transactions(30)
    return producer


def transaction(producer: confluent_kafka.Producer, values: list[bytes], commit: bool) -> None:
    producer.begin_transaction()
    for value in values:
        producer.produce("out", value)
    assert producer.flush(30) == 0  # in the log before the end (librdkafka's abort drops what is unsent)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def open_transaction(producer: confluent_kafka.Producer, value: bytes) -> None:
    """Begin a transaction and write one record of it (sent, not committed)."""
    producer.begin_transaction()
    producer.produce("out", value)
    assert producer.flush(30) == 0


def describe(bootstrap: str, transactional_id: str) -> DescribeTransactionsResponse.TransactionState:
    with RawClient(bootstrap) as client:
        return client.request(DESCRIBE_TRANSACTIONS, 0, transactional_ids=[transactional_id]).transaction_states[0]


def wait_for(condition, timeout_s: float, what: str) -> float:
    """Seconds until `condition()` held."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout_s:
            raise AssertionError(f"{what} not within {timeout_s} s")
        time.sleep(0.1)
    return time.monotonic() - started


def test_commit_is_visible_to_read_committed_and_abort_is_not(broker):
    create_topics(broker.bootstrap, "out")
    producer = txn_producer(broker.bootstrap, "app-1")
    transaction(producer, [b"c1", b"c2"], commit=True)
    transaction(producer, [b"a1", b"a2"], commit=False)
    transaction(producer, [b"c3"], commit=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"c1", b"c2", b"c3"]
    assert consume_all(broker.bootstrap, "out", "read_uncommitted") == [b"c1", b"c2", b"a1", b"a2", b"c3"]
    # EndTxn is answered once PrepareCommit is written; CompleteCommit follows the markers
    wait_for(lambda: describe(broker.bootstrap, "app-1").transaction_state == "CompleteCommit", 10, "CompleteCommit")
    state = describe(broker.bootstrap, "app-1")
    assert (state.error_code, state.transaction_state, state.topics) == (ErrorCode.NONE, "CompleteCommit", [])
    with RawClient(broker.bootstrap) as client:
        listed = client.request(LIST_TRANSACTIONS, 1, state_filters=["CompleteCommit", "Nonsense"], producer_id_filters=[],
                                duration_filter=-1)
    assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [
        ("app-1", "CompleteCommit")]
    assert listed.unknown_state_filters == ["Nonsense"]
    assert describe(broker.bootstrap, "nobody").error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND


def test_a_second_producer_with_the_same_transactional_id_fences_the_first(broker):
    create_topics(broker.bootstrap, "out")
    zombie = txn_producer(broker.bootstrap, "app-2")
    open_transaction(zombie, b"zombie")
    successor = txn_producer(broker.bootstrap, "app-2")  # aborts the zombie's open transaction first
    with pytest.raises(confluent_kafka.KafkaException) as fenced:
        zombie.commit_transaction(30)
    assert fenced.value.args[0].fatal(), fenced.value
    transaction(successor, [b"successor"], commit=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"successor"]
    assert describe(broker.bootstrap, "app-2").producer_epoch == 2  # 0, bumped by the fence, then for the successor


DYING_PRODUCER = """
import sys, time, confluent_kafka
producer = confluent_kafka.Producer({"bootstrap.servers": sys.argv[1], "transactional.id": "dying",
                                     "transaction.timeout.ms": int(sys.argv[2])})
producer.init_transactions(30)
producer.begin_transaction()
producer.produce("out", b"never committed")
assert producer.flush(30) == 0
print("open", flush=True)
time.sleep(600)
"""


def test_a_producer_killed_mid_transaction_is_aborted_after_its_timeout(broker_factory):
    broker = broker_factory(**FAST_ABORTS)
    create_topics(broker.bootstrap, "out")
    dying = subprocess.Popen([sys.executable, "-c", DYING_PRODUCER, broker.bootstrap, str(TXN_TIMEOUT_MS)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert dying.stdout.readline().strip() == "open"
        opened = time.monotonic()
        dying.kill()
        dying.wait()
        with RawClient(broker.bootstrap) as client:
            assert latest_offset(client, "out", READ_COMMITTED) == 0  # the open transaction holds the LSO
            assert latest_offset(client, "out", READ_UNCOMMITTED) == 1
            wait_for(lambda: latest_offset(client, "out", READ_COMMITTED) == 2, 30, "the abort")
            aborted_after = time.monotonic() - opened
        # within transaction.timeout.ms + one cleanup interval (+ scheduling slack on a loaded machine)
        assert aborted_after < (TXN_TIMEOUT_MS + CLEANUP_INTERVAL_MS) / 1000 + 2.0, aborted_after
        assert consume_all(broker.bootstrap, "out", "read_committed") == []
        wait_for(lambda: describe(broker.bootstrap, "dying").transaction_state == "CompleteAbort", 10,
                 "CompleteAbort after the markers")
    finally:
        dying.kill()
        dying.wait()
    transaction(txn_producer(broker.bootstrap, "dying"), [b"next"], commit=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"next"]


def test_state_survives_a_kill_9_and_the_open_transaction_is_aborted(broker_factory):
    broker = broker_factory(**FAST_ABORTS)
    create_topics(broker.bootstrap, "out")
    producer = txn_producer(broker.bootstrap, "app-3", **{"transaction.timeout.ms": TXN_TIMEOUT_MS})
    transaction(producer, [b"before"], commit=True)
    open_transaction(producer, b"open at the crash")
    broker.kill()
    broker.start()
    wait_for(lambda: describe(broker.bootstrap, "app-3").error_code == ErrorCode.NONE, 10,
             "the coordinator loaded")  # NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS until then
    state = describe(broker.bootstrap, "app-3")
    assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) in (
        ("Ongoing", [("out", [0])]), ("PrepareAbort", [("out", [0])]), ("CompleteAbort", []))
    with RawClient(broker.bootstrap) as client:
        wait_for(lambda: latest_offset(client, "out", READ_COMMITTED) == latest_offset(client, "out",
                                                                                      READ_UNCOMMITTED),
                 TXN_TIMEOUT_MS / 1000 + 10, "the abort of the transaction open at the crash")
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"before"]
    successor = txn_producer(broker.bootstrap, "app-3")
    transaction(successor, [b"after"], commit=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"before", b"after"]


def test_kafka_python_transactional_producer(broker):
    create_topics(broker.bootstrap, "out")
    producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="kp-app")
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send("out", b"kp-aborted")
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send("out", b"kp-committed")
        producer.commit_transaction()
    finally:
        producer.close(timeout=10)
    assert consume_all(broker.bootstrap, "out", "read_committed") == [b"kp-committed"]


def test_list_transactions_filters(broker):
    create_topics(broker.bootstrap, "out")
    open_producer = txn_producer(broker.bootstrap, "open-one")
    open_transaction(open_producer, b"x")
    transaction(txn_producer(broker.bootstrap, "done-one"), [b"y"], commit=True)
    with RawClient(broker.bootstrap) as client:
        ongoing = client.request(LIST_TRANSACTIONS, 1, state_filters=["Ongoing"], producer_id_filters=[], duration_filter=-1)
        everything = client.request(LIST_TRANSACTIONS, 0, state_filters=[], producer_id_filters=[])
        # v2 (KIP-1152): the pattern must match the whole id; null or empty lists all; a broken one is refused.
        by_pattern = {pattern: client.request(LIST_TRANSACTIONS, 2, state_filters=[], producer_id_filters=[],
                                              duration_filter=-1, transactional_id_pattern=pattern)
                      for pattern in ("done-.*", "one", "(open|done)-o.e", "", None, "[")}
    assert {pattern: (r.error_code, [t.transactional_id for t in r.transaction_states])
            for pattern, r in by_pattern.items()} == {
        "done-.*": (ErrorCode.NONE, ["done-one"]), "one": (ErrorCode.NONE, []),
        "(open|done)-o.e": (ErrorCode.NONE, ["done-one", "open-one"]), "": (ErrorCode.NONE, ["done-one", "open-one"]),
        None: (ErrorCode.NONE, ["done-one", "open-one"]), "[": (ErrorCode.INVALID_REGULAR_EXPRESSION, [])}
    assert [t.transactional_id for t in ongoing.transaction_states] == ["open-one"]
    assert [t.transactional_id for t in everything.transaction_states] == ["done-one", "open-one"]
    state = describe(broker.bootstrap, "open-one")
    assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) == ("Ongoing", [("out", [0])])
    open_producer.abort_transaction(30)
