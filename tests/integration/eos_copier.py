"""An exactly-once copier, the shape of Kafka's TransactionalMessageCopier: read `in` (read_committed), write each
record to the same partition of `out` and commit the input offsets in the same transaction
(send_offsets_to_transaction), about `--per-transaction` records at a time.

Run as a process the tests kill: `python -m tests.integration.eos_copier BOOTSTRAP`. It starts from the group's
committed offsets, so a copier killed mid-transaction (its transaction aborted by the coordinator once the next
copier fences it) is continued by the next one without loss or duplicate. A transaction that fails with an abortable
error is aborted and the input rewound to the committed offsets; a retriable commit is retried; a fatal error (this
copier fenced) ends the process with status 3. It prints "copied N" after every commit.
"""

from __future__ import annotations

import argparse
import sys

import confluent_kafka

GROUP = "eos-copier"
TRANSACTIONAL_ID = "eos-copier"
FENCED_EXIT_STATUS = 3


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("bootstrap")
    parser.add_argument("--per-transaction", type=int, default=750)
    parser.add_argument("--partitions", type=int, default=3)
    args = parser.parse_args()
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": args.bootstrap, "group.id": GROUP, "isolation.level": "read_committed",
        "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    producer = confluent_kafka.Producer({
        "bootstrap.servers": args.bootstrap, "transactional.id": TRANSACTIONAL_ID, "transaction.timeout.ms": 10_000,
        "linger.ms": 5})
    producer.init_transactions(60)
    partitions = [confluent_kafka.TopicPartition("in", p) for p in range(args.partitions)]
    rewind(consumer, partitions)
    copied = 0
    while True:
        messages = [m for m in consumer.consume(args.per_transaction, timeout=1.0) if m.error() is None]
        if not messages:
            continue
        try:
            producer.begin_transaction()
            for message in messages:
                producer.produce("out", message.value(), partition=message.partition())
            producer.send_offsets_to_transaction(consumer.position(partitions), consumer.consumer_group_metadata(),
                                                 60)
            commit(producer)
        except confluent_kafka.KafkaException as exc:
            error = exc.args[0]
            if error.fatal():
                print(f"fenced: {error}", flush=True)
                return FENCED_EXIT_STATUS
            if not error.txn_requires_abort():
                raise
            print(f"aborting: {error}", flush=True)
            producer.abort_transaction(60)
            rewind(consumer, partitions)
            continue
        copied += len(messages)
        print(f"copied {copied}", flush=True)


def commit(producer: confluent_kafka.Producer) -> None:
    """commit_transaction, retried while its error is retriable (the broker restarting)."""
    while True:
        try:
            producer.commit_transaction(60)
            return
        except confluent_kafka.KafkaException as exc:
            if not exc.args[0].retriable():
                raise


def rewind(consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]) -> None:
    """Read on from the committed offsets (the start for partitions with none)."""
    committed = consumer.committed(partitions, timeout=60)
    consumer.assign([confluent_kafka.TopicPartition(tp.topic, tp.partition,
                                                    tp.offset if tp.offset >= 0 else confluent_kafka.OFFSET_BEGINNING)
                     for tp in committed])


if __name__ == "__main__":
    sys.exit(main())
