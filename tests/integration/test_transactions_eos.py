"""Exactly-once copy through crashes, the shape of Kafka's transactions_test: 100,000 records copied from `in` to
`out` by a consume-transform-produce copier (eos_copier.py: confluent-kafka, transactions of 750 records with the
input offsets), while the broker is killed (-9) three times and the copier three times. The output equals the input
exactly (no loss, no duplicate, order kept per partition), and a read_committed consumer reading `out` throughout
never sees a record of an aborted or still-open transaction (what it saw is a prefix of the input).

Sizes: WIREBROKER_RELIABILITY=full (`make reliability`) runs the issue's (100,000 records, three kills of each);
`make test` copies 20,000 records through one kill of each, which still breaks if a kill loses or repeats a record."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import confluent_kafka

from tests.integration.eos_copier import GROUP
from tests.integration.raw_client import RawClient
from tests.integration.test_transactions import create_topics
from tests.integration.test_txn_markers import consume_all
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.offset_fetch import OffsetFetchRequest

FULL = os.environ.get("WIREBROKER_RELIABILITY") == "full"
RECORDS = 100_000 if FULL else 20_000
PARTITIONS = 3
PER_TRANSACTION = 750
KILLS = ("copier", "broker") * (3 if FULL else 1)
STALL_S = 20  # a copier that commits nothing for this long is restarted (not counted as a kill)
FINISH_TIMEOUT_S = 300
OFFSET_FETCH = 9
FAST_ABORTS = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000"}


def produce_input(bootstrap: str) -> dict[int, list[bytes]]:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                         "linger.ms": 20})
    values: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    for i in range(RECORDS):
        partition = i % PARTITIONS
        value = b"%d:%d" % (partition, len(values[partition]))
        values[partition].append(value)
        producer.produce("in", value, partition=partition)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0
    return values


class Copier:
    """The copier process, restarted whenever it is not running."""

    def __init__(self, bootstrap: str, log_path: Path) -> None:
        self.bootstrap = bootstrap
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def ensure_running(self) -> None:
        if self.process is None or self.process.poll() is not None:
            with open(self.log_path, "a") as log:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "tests.integration.eos_copier", self.bootstrap, "--per-transaction",
                     str(PER_TRANSACTION), "--partitions", str(PARTITIONS)], stdout=log, stderr=subprocess.STDOUT)
            self.starts += 1

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class ReadCommittedWatcher(threading.Thread):
    """Reads `out` read_committed for the whole run, keeping what it sees per partition."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
        self.stop = threading.Event()
        self.consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "watcher",
                                                  "isolation.level": "read_committed", "enable.auto.commit": False})
        self.consumer.assign([confluent_kafka.TopicPartition("out", p, confluent_kafka.OFFSET_BEGINNING)
                              for p in range(PARTITIONS)])

    def run(self) -> None:
        while not self.stop.is_set():
            for message in self.consumer.consume(1000, timeout=0.5):
                if message.error() is None:
                    self.seen[message.partition()].append(message.value())
        self.consumer.close()


def copied(bootstrap: str) -> int | None:
    """How many input records the copier has committed (its group's offsets; pending transactional offsets are not
    counted), None while the broker is away. A raw OffsetFetch: a client library's would wait for stable offsets."""
    try:
        with RawClient(bootstrap) as client:
            response = client.request(OFFSET_FETCH, 6, group_id=GROUP, topics=[
                OffsetFetchRequest.OffsetFetchRequestTopic(name="in", partition_indexes=list(range(PARTITIONS)))])
    except (OSError, AssertionError):
        return None
    if response.error_code != ErrorCode.NONE:
        return None
    return sum(max(p.committed_offset, 0) for topic in response.topics for p in topic.partitions)


class Progress:
    """Waits for the copier to have committed so many records, restarting it when it is not running and when it
    stalls: librdkafka 2.x's send_offsets_to_transaction can wait forever, past its timeout, for a group
    coordinator it dropped while the broker was away (confluentinc/librdkafka#5456, #5511)."""

    def __init__(self, bootstrap: str, copier: Copier,
                 count: Callable[[str], int | None] = copied) -> None:  # a cluster asks the group's coordinator
        self.bootstrap = bootstrap
        self.copier = copier
        self._copied = count
        self._count, self._since = 0, time.monotonic()

    def wait_for(self, target: int) -> None:
        deadline = time.monotonic() + FINISH_TIMEOUT_S
        while (count := self._copied(self.bootstrap)) is None or count < target:
            assert time.monotonic() < deadline, (
                f"{count} of {target} records copied:\n{self.copier.log_path.read_text()[-3000:]}")
            self.copier.ensure_running()
            if count is not None and count > self._count:
                self._count, self._since = count, time.monotonic()
            elif time.monotonic() - self._since > STALL_S:
                self.copier.kill()
                self._since = time.monotonic()
            time.sleep(0.2)


def test_exactly_once_copy_through_broker_and_copier_kills(broker_factory, tmp_path):
    broker = broker_factory(**{"transaction.state.log.num.partitions": "3", "offsets.topic.num.partitions": "3",
                               **FAST_ABORTS})
    create_topics(broker.bootstrap, "in", "out", partitions=PARTITIONS)
    expected = produce_input(broker.bootstrap)
    copier = Copier(broker.bootstrap, tmp_path / "copier.log")
    watcher = ReadCommittedWatcher(broker.bootstrap)
    watcher.start()
    try:
        progress = Progress(broker.bootstrap, copier)
        for round_number, victim in enumerate(KILLS, start=1):
            progress.wait_for(RECORDS * round_number // (len(KILLS) + 1))
            if victim == "copier":
                copier.kill()
            else:
                broker.kill()
                broker.start()
        progress.wait_for(RECORDS)
    finally:
        copier.kill()
        watcher.stop.set()
        watcher.join(30)
    for partition in range(PARTITIONS):
        assert consume_all(broker.bootstrap, "out", "read_committed", partition) == expected[partition]
        seen = watcher.seen[partition]
        assert seen == expected[partition][:len(seen)], f"the watcher saw aborted or duplicate records in {partition}"
    assert copier.starts > KILLS.count("copier"), "the copier was not killed as planned"

