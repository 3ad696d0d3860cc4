"""Exactly-once consume-transform-produce with confluent-kafka (librdkafka's transactional producer): records copied
from an input topic to an output topic in transactions that also commit the copier's input offsets
(send_offsets_to_transaction: AddOffsetsToTxn, TxnOffsetCommit); one transaction aborted on the way. A
read_committed consumer of the output sees every input record once, in order, and nothing of the aborted
transaction; the group's committed offsets are the input's end."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.raw_client import RawClient
from tests.integration.test_txn_markers import consume_all
from tests.integration.txn_copier import copy
from tests.integration.txn_raw import READ_COMMITTED, latest_offset

RECORDS = 300
CRASH_RECORDS = 5000
CRASH_AFTER = 400  # committed output records before the broker is killed (the copier at twice that)
STALL_S = 20  # a copier without progress for this long is stuck (see txn_copier.py) and is replaced
REPO = Path(__file__).resolve().parents[2]


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


def start_copier(bootstrap: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.integration.txn_copier", bootstrap, str(CRASH_RECORDS)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_exactly_once_across_broker_and_copier_crashes(broker):
    """The broker is killed (-9) once some transactions are committed, and the copier once after that; a copier
    that makes no progress for STALL_S is replaced. The output is the input, exactly once, in order."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in ("in", "out")]).values():
        future.result(30)
    values = produce_input(broker.bootstrap, CRASH_RECORDS)
    copier = start_copier(broker.bootstrap)
    crashes = [("broker", CRASH_AFTER), ("copier", 2 * CRASH_AFTER)]
    progress, last_move, deadline = -1, time.monotonic(), time.monotonic() + 180
    try:
        while copier.poll() != 0:
            assert time.monotonic() < deadline, f"no end of the copy; output at {progress}"
            with RawClient(broker.bootstrap) as client:
                committed = latest_offset(client, "out", READ_COMMITTED)
            if committed != progress:
                progress, last_move = committed, time.monotonic()
            if crashes and committed >= crashes[0][1]:
                if crashes.pop(0)[0] == "broker":
                    broker.kill()
                    broker.start()
                else:
                    copier.kill()
            if copier.poll() not in (None, 0) or time.monotonic() - last_move > STALL_S:
                copier.kill()
                copier.wait()
                copier, last_move = start_copier(broker.bootstrap), time.monotonic()
            time.sleep(0.05)
    finally:
        copier.kill()
        copier.wait()
    assert not crashes, f"the copy ended before the crashes {crashes}"
    assert consume_all(broker.bootstrap, "out", "read_committed") == values
