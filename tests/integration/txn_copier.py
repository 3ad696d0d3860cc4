"""An exactly-once copier (confluent-kafka), in-process or `python -m tests.integration.txn_copier BOOTSTRAP RECORDS`:
copies topic "in" to "out" (partition 0) in transactions of up to 40 records that commit the group "copier"'s input
offsets, and exits 0 once its committed position reaches RECORDS.

As a process of its own, a test can kill it (-9) like a crashed copier, and replace one that a broker crash left
stuck inside librdkafka (send_offsets_to_transaction can hang past its timeout when the group coordinator's broker
went away: librdkafka issues #5456 and #5511). Its successor's init_transactions fences it and aborts what it left
open; the group's committed offset says where to start.
"""

from __future__ import annotations

import sys

import confluent_kafka

PER_TRANSACTION = 40
SESSION_TIMEOUT_MS = 6000  # the broker's group.min.session.timeout.ms


def copy(bootstrap: str, records: int, abort_first: bool = False) -> None:
    """Copy until the committed input position reaches `records`. With `abort_first`, the first transaction also
    writes b"aborted", is flushed to the broker and aborted, and its input is read again."""
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "copier",
                                         "isolation.level": "read_committed", "enable.auto.commit": False,
                                         "auto.offset.reset": "earliest",
                                         # A killed predecessor stays a group member until its session expires.
                                         "session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": 1000})
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
            if any(p.partition == 0 and p.offset >= records for p in positions):
                return
    finally:
        consumer.close()


if __name__ == "__main__":
    copy(sys.argv[1], int(sys.argv[2]))
