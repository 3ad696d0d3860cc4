"""Consumers of three client libraries run on threads, recording what they consume and hold, for group tests."""

from __future__ import annotations

import asyncio
import threading
import time

import confluent_kafka
import kafka
from aiokafka import AIOKafkaConsumer
from kafka.admin import NewTopic

SESSION_TIMEOUT_MS = 3000
HEARTBEAT_INTERVAL_MS = 300


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    admin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, per_partition: int, partitions: int, tag: str = "") -> None:
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(per_partition):
        for p in range(partitions):
            producer.send(topic, f"{tag}{p}-{i}".encode(), partition=p)
    producer.flush()
    producer.close()


def wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def know_the_topic_before_joining(consumer: kafka.KafkaConsumer, topic: str) -> None:
    """Load the subscribed topic's partitions into a kafka-python consumer before its first poll.

    kafka-python 3.0.12 (the newest) can lose a whole assignment: a leader that assigned before its metadata knew the
    topic rejoins once the metadata arrives, and if a poll() times out during that JoinGroup/SyncGroup the finished
    join is never applied (the assignment it just made clears the reason to rejoin). The member then holds nothing
    and sends no heartbeats; after session_timeout_ms the coordinator, Apache Kafka 4.3.1 as ours, removes it and
    the other member takes every partition, and its LeaveGroup at close is answered UNKNOWN_MEMBER_ID. With the
    partitions known first, the leader's first assignment covers them and that rejoin never happens.
    """
    if not consumer.partitions_for_topic(topic):
        raise AssertionError(f"kafka-python sees no partitions of topic {topic}")


class ThreadedConsumer:
    """A consumer polling on its own thread; `consumed` holds (partition, offset), `assignment` its partitions.
    It commits synchronously after every batch, so what it consumed is what it committed."""

    name = "consumer"

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.bootstrap, self.group, self.topic = bootstrap, group, topic
        self.consumed: list[tuple[int, int]] = []
        self.assignment: set[int] = set()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)

    def start(self) -> ThreadedConsumer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), f"{self.name} did not close"
        if self.error is not None:
            raise self.error

    def _main(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # noqa: BLE001  (reported by close() on the test's thread)
            self.error = exc


class KafkaPythonConsumer(ThreadedConsumer):
    name = "kafka-python"

    def __init__(self, bootstrap: str, group: str, topic: str, **config) -> None:
        super().__init__(bootstrap, group, topic)
        self.config = config

    def run(self) -> None:
        consumer = kafka.KafkaConsumer(self.topic, bootstrap_servers=self.bootstrap, group_id=self.group,
                                       auto_offset_reset="earliest", enable_auto_commit=False,
                                       session_timeout_ms=SESSION_TIMEOUT_MS,
                                       heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS, **self.config)
        know_the_topic_before_joining(consumer, self.topic)
        while not self._stop.is_set():
            batches = consumer.poll(200)
            for records in batches.values():
                self.consumed += [(r.partition, r.offset) for r in records]
            if batches:
                consumer.commit()
            self.assignment = {tp.partition for tp in consumer.assignment()}
        consumer.close()


class ConfluentConsumer(ThreadedConsumer):
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, group: str, topic: str, **config) -> None:
        super().__init__(bootstrap, group, topic)
        self.config = config
        self.revoked: list[set[int]] = []
        self.assigned: list[set[int]] = []

    def run(self) -> None:
        config = {"bootstrap.servers": self.bootstrap, "group.id": self.group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False}
        if self.config.get("group.protocol") != "consumer":
            config |= {"session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS}
        consumer = confluent_kafka.Consumer(config | self.config)
        consumer.subscribe([self.topic],
                           on_assign=lambda c, ps: self.assigned.append({p.partition for p in ps}),
                           on_revoke=lambda c, ps: self.revoked.append({p.partition for p in ps}))
        while not self._stop.is_set():
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.consumed.append((message.partition(), message.offset()))
                consumer.commit(message=message, asynchronous=False)
            self.assignment = {p.partition for p in consumer.assignment()}
        consumer.close()


class AioKafkaConsumer(ThreadedConsumer):
    name = "aiokafka"

    def run(self) -> None:
        asyncio.run(self._run())

    async def _run(self) -> None:
        consumer = AIOKafkaConsumer(self.topic, bootstrap_servers=self.bootstrap, group_id=self.group,
                                    auto_offset_reset="earliest", enable_auto_commit=False,
                                    session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS)
        await consumer.start()
        try:
            while not self._stop.is_set():
                batches = await consumer.getmany(timeout_ms=200)
                for records in batches.values():
                    self.consumed += [(r.partition, r.offset) for r in records]
                if batches:
                    await consumer.commit()
                self.assignment = {tp.partition for tp in consumer.assignment()}
        finally:
            await consumer.stop()
