"""What the failover tests produce and how they judge it: producers at a steady rate that remember every record the
broker acknowledged, a read of everything back, and the verdict (lost, duplicated, out of order).

Values name their producer and a sequence number, `<producer>:<n>`; the Java producer (Kafka's VerifiableProducer,
kafka-clients 4.3.1 from compat_tests' cached jars) writes `<prefix>.<n>`. Within one producer and one partition
the numbers must rise with the offset (an idempotent producer keeps its order), and every acknowledged value must be
read back once, at the partition (and, for confluent-kafka, the offset) it was acknowledged at.
"""

from __future__ import annotations

import json
import math
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

JAVA_VALUE_PREFIX = 7  # VerifiableProducer writes "7.<n>"


@dataclass(frozen=True)
class Ack:
    producer: str
    value: str
    partition: int
    offset: int  # -1 when the client does not say (never for these two clients)
    sent_at: float  # time.time(); the Java producer's acks carry its own clock's time as sent_at and acked_at
    acked_at: float


@dataclass
class ProduceLog:
    """Every acknowledgement and every failure of one producer, safe to append from its delivery thread."""

    acks: list[Ack] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def acked(self, ack: Ack) -> None:
        with self.lock:
            self.acks.append(ack)

    def failed(self, error: str) -> None:
        with self.lock:
            self.errors.append(error)


class SteadyProducer:
    """An idempotent acks=all confluent-kafka producer on its own thread: `rate` records a second, round-robin over
    the partitions, until stop(); stop() flushes, so every record ends acknowledged or failed."""

    def __init__(self, name: str, bootstrap: str, topic: str, partitions: int, rate: float,
                 config: dict | None = None) -> None:
        self.name, self.topic, self.partitions, self.rate = name, topic, partitions, rate
        self.producer = Producer({
            "bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
            "message.timeout.ms": 120_000,  # longer than any failover here: records wait, they do not fail
            "retry.backoff.ms": 50, "linger.ms": 5, **(config or {}),
        })
        self.log = ProduceLog()
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"producer-{name}", daemon=True)

    def start(self) -> SteadyProducer:
        self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            value = f"{self.name}:{self.sent}"
            sent_at = time.time()
            self.producer.produce(self.topic, value.encode(), partition=self.sent % self.partitions,
                                  on_delivery=lambda err, msg, sent_at=sent_at: self._delivered(err, msg, sent_at))
            self.sent += 1
            self.producer.poll(0)
            # poll(timeout) returns as soon as it has served a delivery report: poll again until the next send is due
            next_send = started + self.sent / self.rate
            while (remaining := next_send - time.monotonic()) > 0 and not self._stop.is_set():
                self.producer.poll(remaining)

    def _delivered(self, err: KafkaError | None, msg, sent_at: float) -> None:
        if err is not None:
            self.log.failed(f"{msg.value().decode()} on partition {msg.partition()}: {err.name()} ({err.str()})")
        else:
            self.log.acked(Ack(self.name, msg.value().decode(), msg.partition(), msg.offset(), sent_at, time.time()))

    def stop(self, timeout: float = 150) -> ProduceLog:
        self._stop.set()
        self._thread.join()
        left = self.producer.flush(timeout)
        assert left == 0, f"{self.name}: {left} records neither acknowledged nor failed after {timeout}s"
        return self.log


class JavaProducer:
    """Kafka's VerifiableProducer (Java kafka-clients) with acks=all, idempotence and retries, at a steady rate;
    stop() sends SIGTERM, whose shutdown hook closes the producer (flushing) and prints what was acknowledged."""

    def __init__(self, jars_dir: Path, work_dir: Path, bootstrap: str, topic: str, rate: int) -> None:
        from compat_tests.reference_kafka import TOOLS, tool_command

        config = work_dir / "java-producer.properties"
        config.write_text("enable.idempotence=true\nretries=2147483647\ndelivery.timeout.ms=120000\n"
                          "max.in.flight.requests.per.connection=5\nretry.backoff.ms=50\nlinger.ms=5\n")
        self.stdout_path = work_dir / "java-producer.out"
        self.stderr_path = work_dir / "java-producer.err"
        command = tool_command(jars_dir, TOOLS["verifiable-producer"], [
            "--bootstrap-server", bootstrap, "--topic", topic, "--throughput", rate, "--acks", -1,
            "--value-prefix", JAVA_VALUE_PREFIX, "--command-config", config])
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    def acknowledged_any(self) -> bool:
        """Whether the JVM is up and a first record acknowledged (its events are printed line by line)."""
        return '"producer_send_success"' in self.stdout_path.read_text()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:  # a failed test: no flush wanted, only no JVM left behind
            self.process.kill()
            self.process.wait()

    def stop(self, timeout: float = 150) -> ProduceLog:
        self.process.terminate()
        self.process.wait(timeout)
        log = ProduceLog()
        for line in self.stdout_path.read_text().splitlines():
            if not line.startswith("{"):
                continue
            event = json.loads(line)
            if event["name"] == "producer_send_success":
                at = event["timestamp"] / 1000
                log.acked(Ack("java", event["value"], event["partition"], event["offset"], at, at))
            elif event["name"] == "producer_send_error":
                log.failed(f"{event['value']}: {event.get('exception')}: {event.get('message')}")
        return log


@dataclass(frozen=True)
class Record:
    partition: int
    offset: int
    value: str


def read_all(bootstrap: str, topic: str, partitions: int, timeout: float = 60) -> list[Record]:
    """Every record of the topic up to each partition's high watermark (what a consumer may read)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-all-{time.monotonic_ns()}",
                         "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions) if ends[p] > 0])
        positions = {p: 0 for p in range(partitions)}
        records: list[Record] = []
        deadline = time.monotonic() + timeout
        while any(positions[p] < ends[p] for p in range(partitions)):
            assert time.monotonic() < deadline, f"read {positions} of {ends} within {timeout}s"
            msg = consumer.poll(1)
            if msg is None or msg.error() is not None:
                continue
            records.append(Record(msg.partition(), msg.offset(), msg.value().decode()))
            positions[msg.partition()] = msg.offset() + 1
        return records
    finally:
        consumer.close()


@dataclass
class Verdict:
    acknowledged: int
    lost: list[Ack]
    duplicates: dict[str, int]
    out_of_order: list[str]
    misplaced: list[str]
    duplicate_batches: list[str] = field(default_factory=list)  # from judge's `dump`, only when there are duplicates

    def problems(self) -> str:
        if not (self.lost or self.duplicates or self.out_of_order or self.misplaced):
            return ""
        batches = "".join(f"\n  {line}" for line in self.duplicate_batches)
        return (f"{len(self.lost)} of {self.acknowledged} acknowledged records lost (first: {self.lost[:5]}); "
                f"{len(self.duplicates)} values read more than once (first: {list(self.duplicates.items())[:5]}); "
                f"out of order: {self.out_of_order[:5]}; acknowledged elsewhere than read: {self.misplaced[:5]}"
                + (f"\nrecord batches on disk holding a duplicated value:{batches}" if batches else ""))


def judge(acks: list[Ack], records: list[Record], dump: Callable[[set[str]], list[str]] | None = None) -> Verdict:
    """0 acknowledged records lost, 0 duplicates, each producer's order kept within each partition.

    `dump` (batch_dump.duplicate_batches over a cluster) is called only when values were read twice, with those
    values; its lines (the batches on disk holding them) go into the verdict's problems.
    """
    read: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        read[record.value].append(record)
    lost = [ack for ack in acks if ack.value not in read]
    duplicates = {value: len(copies) for value, copies in read.items() if len(copies) > 1}
    misplaced = [f"{ack.value} acked at {ack.partition}/{ack.offset}, read at {read[ack.value][0]}"
                 for ack in acks if ack.value in read and (read[ack.value][0].partition != ack.partition or
                                                           ack.offset >= 0 and read[ack.value][0].offset != ack.offset)]
    out_of_order = []
    last_seen: dict[tuple[str, int], tuple[int, int]] = {}
    for record in sorted(records, key=lambda r: (r.partition, r.offset)):
        producer, number = _producer_and_number(record.value)
        key = (producer, record.partition)
        if key in last_seen and number <= last_seen[key][0]:
            out_of_order.append(f"{record.value} at {record.partition}/{record.offset} after "
                                f"{producer} #{last_seen[key][0]} at offset {last_seen[key][1]}")
        last_seen[key] = (number, record.offset)
    batches = dump(set(duplicates)) if duplicates and dump is not None else []
    return Verdict(len(acks), lost, duplicates, out_of_order, misplaced, batches)


def _producer_and_number(value: str) -> tuple[str, int]:
    separator = ":" if ":" in value else "."
    producer, _, number = value.rpartition(separator)
    return producer, int(number)


def percentile(samples: list[float], fraction: float) -> float:
    """The nearest-rank percentile (p50: fraction 0.5); the largest sample for p99 of fewer than 100."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def failover_seconds(acks: list[Ack], partitions: set[int], killed_at: float) -> list[float]:
    """Per partition the victim led: from the kill to the first acknowledgement of a record sent after it."""
    firsts = {}
    for ack in acks:
        if ack.partition in partitions and ack.sent_at > killed_at:
            firsts[ack.partition] = min(firsts.get(ack.partition, math.inf), ack.acked_at - killed_at)
    return [firsts[p] for p in sorted(firsts)]
