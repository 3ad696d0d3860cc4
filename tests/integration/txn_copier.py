"""An exactly-once copier process (confluent-kafka): `python -m tests.integration.txn_copier BOOTSTRAP RECORDS`
copies topic "in" to "out" (partition 0) in transactions of up to 40 records that commit the group "copier"'s input
offsets, and exits 0 once its committed position reaches RECORDS.

A process of its own, so that a test can kill it (-9) like a crashed copier, and replace one that a broker crash left
stuck inside librdkafka (send_offsets_to_transaction can hang past its timeout when the group coordinator's broker
went away: librdkafka issues #5456 and #5511). Its successor's init_transactions fences it and aborts what it left
open; the group's committed offset says where to start.
"""

from __future__ import annotations

import sys

import confluent_kafka

PER_TRANSACTION = 40
SESSION_TIMEOUT_MS = 6000  # the broker's group.min.session.timeout.ms


def main(bootstrap: str, records: int) -> int:
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
            positions = consumer.position(consumer.assignment())
            producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(30)
            if any(p.partition == 0 and p.offset >= records for p in positions):
                return 0
    finally:
        consumer.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
