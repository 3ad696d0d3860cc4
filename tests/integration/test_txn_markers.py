"""WriteTxnMarkers on a real broker: markers end hand-made transactions; what read_committed and read_uncommitted
consumers (confluent-kafka) then see, the last stable offset, and the per-partition errors."""

from __future__ import annotations

import time

import confluent_kafka

from tests.integration.raw_client import RawClient
from tests.integration.txn_raw import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    RawTransactions,
    create_topic,
    latest_offset,
    unverified_broker,  # noqa: F401  (the broker fixture)
    write_txn_marker,
)
from wirebroker.protocol.errors import ErrorCode

FIND_COORDINATOR, API_VERSIONS = 10, 18


def consume_all(bootstrap: str, topic: str, isolation_level: str, partition: int = 0) -> list[bytes]:
    """Every value a consumer with this isolation level reads from the partition, up to its end."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                                         "isolation.level": isolation_level, "enable.partition.eof": True,
                                         "enable.auto.commit": False})
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, partition, confluent_kafka.OFFSET_BEGINNING)])
        values = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                assert message.error().code() == confluent_kafka.KafkaError._PARTITION_EOF, message.error()
                return values
            values.append(message.value())
        raise AssertionError(f"no end of partition seen; read {values}")
    finally:
        consumer.close()


def test_commit_and_abort_markers_decide_what_read_committed_sees(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "txn")
        txn = RawTransactions(client, "txn")
        txn.send([b"a1", b"a2"])
        assert latest_offset(client, "txn", READ_COMMITTED) == 0  # the open transaction holds the LSO back
        assert latest_offset(client, "txn", READ_UNCOMMITTED) == 2
        assert consume_all(broker.bootstrap, "txn", "read_committed") == []
        assert txn.end(commit=True) == {("txn", 0): ErrorCode.NONE}
        assert latest_offset(client, "txn", READ_COMMITTED) == 3  # past the marker
        txn.send([b"b1"])
        assert txn.end(commit=False) == {("txn", 0): ErrorCode.NONE}
        txn.send([b"c1"])
        assert latest_offset(client, "txn", READ_COMMITTED) == 5  # the open one starts at 5
        assert latest_offset(client, "txn", READ_UNCOMMITTED) == 6
    assert consume_all(broker.bootstrap, "txn", "read_committed") == [b"a1", b"a2"]
    assert consume_all(broker.bootstrap, "txn", "read_uncommitted") == [b"a1", b"a2", b"b1", b"c1"]


def test_marker_errors_per_partition(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "txn")
        txn = RawTransactions(client, "txn")
        txn.send([b"x"])
        assert txn.end(commit=True, partitions=[("txn", 0), ("txn", 99), ("nope", 0)]) == {
            ("txn", 0): ErrorCode.NONE, ("txn", 99): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        # A marker bumps the producer's epoch; an older epoch is a zombie's.
        assert txn.end(commit=False, producer_epoch=3, coordinator_epoch=2) == {("txn", 0): ErrorCode.NONE}
        assert txn.end(commit=False, producer_epoch=2, coordinator_epoch=2) == {
            ("txn", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
        assert txn.end(commit=False, producer_epoch=3, coordinator_epoch=1) == {
            ("txn", 0): ErrorCode.TRANSACTION_COORDINATOR_FENCED}
        # A late batch of the fenced epoch 0 never lands (the shape of KAFKA-17754).
        txn.send([b"late"], expected_error=ErrorCode.INVALID_PRODUCER_EPOCH)
        # A marker for a producer the partition never saw is written (nothing to complete).
        assert write_txn_marker(client, 424242, 0, True, [("txn", 0)]) == {("txn", 0): ErrorCode.NONE}
        versions = {k.api_key: (k.min_version, k.max_version) for k in client.request(API_VERSIONS, 3).api_keys}
        assert versions[27] == (1, 2)  # advertised as Kafka 4.3.1 does


def test_transaction_version_2_markers_need_a_bumped_epoch(broker):
    """v2's transaction_version 2 (KIP-890 part 2): the marker's epoch must be above the producer's; at 0 (a
    transaction ended by EndTxn v0-4) the same epoch is enough, as Kafka's appendEndTxnMarker checks."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "tv2")
        txn = RawTransactions(client, "tv2")
        epoch = txn.producer_epoch
        txn.send([b"a"])
        assert write_txn_marker(client, txn.producer_id, epoch, False, [("tv2", 0)], version=2,
                                transaction_version=2) == {("tv2", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
        assert latest_offset(client, "tv2", READ_COMMITTED) == 0  # nothing written: still open
        assert write_txn_marker(client, txn.producer_id, epoch + 1, True, [("tv2", 0)], version=2,
                                transaction_version=2) == {("tv2", 0): ErrorCode.NONE}
        assert latest_offset(client, "tv2", READ_COMMITTED) == 2
        # A producer the partition never saw has no epoch to be above.
        assert write_txn_marker(client, 434343, 0, True, [("tv2", 0)], version=2, transaction_version=2) == {
            ("tv2", 0): ErrorCode.NONE}
        # Transaction version 0 at v2: the same epoch ends the next transaction.
        txn.producer_epoch, txn.sequence = epoch + 1, 0
        txn.send([b"b"])
        assert write_txn_marker(client, txn.producer_id, epoch + 1, True, [("tv2", 0)], version=2) == {
            ("tv2", 0): ErrorCode.NONE}
        assert latest_offset(client, "tv2", READ_COMMITTED) == 5
    assert consume_all(broker.bootstrap, "tv2", "read_committed") == [b"a", b"b"]


def test_consumer_offsets_markers_go_to_the_group_coordinator(broker):
    with RawClient(broker.bootstrap) as client:
        assert client.request(FIND_COORDINATOR, 1, key="g", key_type=0).error_code == ErrorCode.NONE
        assert write_txn_marker(client, 77, 0, True, [("__consumer_offsets", 3)]) == {
            ("__consumer_offsets", 3): ErrorCode.NONE}


def test_aborted_records_stay_hidden_after_a_crash(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "txn")
        committed, aborted = RawTransactions(client, "txn"), RawTransactions(client, "txn")
        committed.send([b"c1"])
        aborted.send([b"a1", b"a2"])  # interleaved with the committed transaction
        committed.send([b"c2"])
        aborted.end(commit=False)
        committed.end(commit=True)
        open_start = RawTransactions(client, "txn").send([b"o1"])
    broker.kill()
    broker.start()
    with RawClient(broker.bootstrap) as client:
        assert latest_offset(client, "txn", READ_COMMITTED) == open_start  # still open after the restart
    assert consume_all(broker.bootstrap, "txn", "read_committed") == [b"c1", b"c2"]
    assert consume_all(broker.bootstrap, "txn", "read_uncommitted") == [b"c1", b"a1", b"a2", b"c2", b"o1"]
