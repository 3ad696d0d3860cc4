"""Exactly-once consume-transform-produce with confluent-kafka (librdkafka's transactional producer): records copied
from an input topic to an output topic in transactions that also commit the copier's input offsets
(send_offsets_to_transaction: AddOffsetsToTxn, TxnOffsetCommit); one transaction aborted on the way. A
read_committed consumer of the output sees every input record once, in order, and nothing of the aborted
transaction; the group's committed offsets are the input's end."""

from __future__ import annotations

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.test_txn_markers import consume_all

RECORDS = 300
PER_TRANSACTION = 40


def produce_input(bootstrap: str) -> list[bytes]:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    values = [b"record-%d" % i for i in range(RECORDS)]
    for value in values:
        producer.produce("in", value, partition=0)
    assert producer.flush(30) == 0
    return values


def copy(bootstrap: str, abort_first: bool) -> None:
    """Copy until the committed input position reaches RECORDS, one transaction per poll of at most
    PER_TRANSACTION. With `abort_first`, the first transaction also writes b"aborted", is flushed to the broker and
    aborted, and its input is read again."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "copier",
                                         "isolation.level": "read_committed", "enable.auto.commit": False,
                                         "auto.offset.reset": "earliest"})
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "copier-0",
                                         "transaction.timeout.ms": 10_000})
    try:
        producer.init_transactions(30)
        consumer.subscribe(["in"])
        while True:
            messages = [m for m in consumer.consume(PER_TRANSACTION, 1.0) if not m.error()]
            if not messages:
                continue
            producer.begin_transaction()
            for message in messages:
                producer.produce("out", message.value(), partition=0)
            if abort_first:
                producer.produce("out", b"aborted", partition=0)
                assert producer.flush(30) == 0  # on the broker before the abort (else librdkafka drops them)
                producer.abort_transaction(30)
                abort_first = False
                first = messages[0]
                consumer.seek(confluent_kafka.TopicPartition(first.topic(), first.partition(), first.offset()))
                continue
            positions = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(30)
            if any(p.partition == 0 and p.offset >= RECORDS for p in positions):
                return
    finally:
        consumer.close()


def test_consume_transform_produce_is_exactly_once(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in ("in", "out")]).values():
        future.result(30)
    values = produce_input(broker.bootstrap)
    copy(broker.bootstrap, abort_first=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == values
    uncommitted = consume_all(broker.bootstrap, "out", "read_uncommitted")
    assert b"aborted" in uncommitted and len(uncommitted) > len(values)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "copier"})
    try:
        committed = consumer.committed([confluent_kafka.TopicPartition("in", 0)], 30)
        assert committed[0].offset == RECORDS
    finally:
        consumer.close()
