"""An exactly-once copier (confluent-kafka), in-process or `python -m tests.integration.txn_copier BOOTSTRAP RECORDS`:
copies topic "in" to "out" (partition 0) in transactions of up to 40 records that commit the group "copier"'s input
offsets, and exits 0 once its committed position reaches RECORDS.

As a process of its own, a test can kill it (-9) like a crashed copier, and replace one that a broker crash left
stuck inside librdkafka (send_offsets_to_transaction can hang past its timeout when the group coordinator's broker
went away: librdkafka issues #5456 and #5511). Its successor's init_transactions fences it and aborts what it left
open; the group's committed offset says where to start.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import confluent_kafka

PER_TRANSACTION = 40
SESSION_TIMEOUT_MS = 6000  # the broker's group.min.session.timeout.ms
STALL_S = 20  # a copier without progress for this long is stuck (see above) and is replaced
REPO = Path(__file__).resolve().parents[2]


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


def start(bootstrap: str, records: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.integration.txn_copier", bootstrap, str(records)],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


Crash = tuple[int, Callable[[subprocess.Popen], None]]  # (committed output records, what to do then)


def copy_through_crashes(bootstrap: str, records: int, committed: Callable[[], int | None], crashes: list[Crash],
                         timeout_s: float = 180) -> None:
    """Run copier processes until one has copied `records`. Each crash runs once (in order) when the committed
    output (`committed()`: None when it cannot be asked now) reaches its threshold; it gets the running copier,
    to kill it or to kill a broker. A copier that dies or makes no progress for STALL_S is replaced."""
    crashes = list(crashes)
    copier = start(bootstrap, records)
    progress, last_move, deadline = -1, time.monotonic(), time.monotonic() + timeout_s
    try:
        while copier.poll() != 0:
            assert time.monotonic() < deadline, f"no end of the copy; output at {progress}"
            now_committed = committed()
            if now_committed is not None and now_committed != progress:
                progress, last_move = now_committed, time.monotonic()
            if crashes and progress >= crashes[0][0]:
                crashes.pop(0)[1](copier)
            if copier.poll() not in (None, 0) or time.monotonic() - last_move > STALL_S:
                copier.kill()
                copier.wait()
                copier, last_move = start(bootstrap, records), time.monotonic()
            time.sleep(0.05)
    finally:
        copier.kill()
        copier.wait()
    assert not crashes, f"the copy ended before the crashes at {[threshold for threshold, _ in crashes]}"


if __name__ == "__main__":
    copy(sys.argv[1], int(sys.argv[2]))
