"""Exactly-once consume-transform-produce with confluent-kafka (librdkafka's transactional producer): records copied
from an input topic to an output topic in transactions that also commit the copier's input offsets
(send_offsets_to_transaction: AddOffsetsToTxn, TxnOffsetCommit); one transaction aborted on the way. A
read_committed consumer of the output sees every input record once, in order, and nothing of the aborted
transaction; the group's committed offsets are the input's end."""

from __future__ import annotations

import subprocess
import threading
import time

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.raw_client import RawClient
from tests.integration.test_txn_markers import consume_all
from tests.integration.txn_copier import copy, copy_through_crashes
from tests.integration.txn_raw import READ_COMMITTED, latest_offset

RECORDS = 300
CRASH_RECORDS = 5000
CRASH_AFTER = 400  # committed output records before the broker is killed (the copier at twice that)


def produce_input(bootstrap: str, records: int = RECORDS) -> list[bytes]:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    values = [b"record-%d" % i for i in range(records)]
    for value in values:
        producer.produce("in", value, partition=0)
    assert producer.flush(30) == 0
    return values


def test_consume_transform_produce_is_exactly_once(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in ("in", "out")]).values():
        future.result(30)
    values = produce_input(broker.bootstrap)
    copy(broker.bootstrap, RECORDS, abort_first=True)
    assert consume_all(broker.bootstrap, "out", "read_committed") == values
    uncommitted = consume_all(broker.bootstrap, "out", "read_uncommitted")
    assert b"aborted" in uncommitted and len(uncommitted) > len(values)
    consumer = confluent_kafka.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "copier"})
    try:
        committed = consumer.committed([confluent_kafka.TopicPartition("in", 0)], 30)
        assert committed[0].offset == RECORDS
    finally:
        consumer.close()


def test_exactly_once_across_broker_and_copier_crashes(broker):
    """The broker is killed (-9) once some transactions are committed, and the copier once after that. The output
    is the input, exactly once, in order, and so is what a read_committed consumer read while it was written."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in ("in", "out")]).values():
        future.result(30)
    values = produce_input(broker.bootstrap, CRASH_RECORDS)

    def committed() -> int:
        with RawClient(broker.bootstrap) as client:
            return latest_offset(client, "out", READ_COMMITTED)

    def crash_broker(_copier: subprocess.Popen) -> None:
        broker.kill()
        broker.start()

    watcher = ReadCommittedWatcher(broker.bootstrap, "out")
    watcher.start()
    try:
        copy_through_crashes(broker.bootstrap, CRASH_RECORDS, committed,
                             [(CRASH_AFTER, crash_broker), (2 * CRASH_AFTER, subprocess.Popen.kill)])
        assert consume_all(broker.bootstrap, "out", "read_committed") == values
        deadline = time.monotonic() + 30
        while len(watcher.values) < len(values) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        watcher.stop()
    assert watcher.values == values  # read all along: never an aborted or open transaction's record, nor twice


class ReadCommittedWatcher(threading.Thread):
    """A read_committed consumer reading the output while it is written (and while the broker restarts)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.values: list[bytes] = []
        self._stop_event = threading.Event()
        self._consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "watcher",
                                                   "isolation.level": "read_committed",
                                                   "enable.auto.commit": False})
        self._consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])

    def run(self) -> None:
        while not self._stop_event.is_set():
            message = self._consumer.poll(0.2)
            if message is not None and not message.error():
                self.values.append(message.value())

    def stop(self) -> None:
        self._stop_event.set()
        self.join(10)
        self._consumer.close()
