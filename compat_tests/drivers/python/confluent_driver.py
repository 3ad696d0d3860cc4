"""The confluent-kafka (librdkafka) driver of the matrix (see driver_common for the command line and output)."""
from __future__ import annotations

import os
import time

from confluent_kafka import (OFFSET_BEGINNING, OFFSET_END, Consumer, ConsumerGroupTopicPartitions, KafkaError,
                             KafkaException, Producer, TopicPartition)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

import driver_common as dc
from driver_common import expect

# librdkafka's message.max.bytes (1,000,000 by default) bounds a whole request; a 1,000,000-byte record needs a bit
# more, and it must stay under the broker's own message.max.bytes (1,048,588) so no batch holds two such records.
LARGE_MESSAGE_MAX_BYTES = 1_048_576
# A commit racing a rebalance fails with these; the member commits again after it rejoins.
REBALANCE_COMMIT_ERRORS = (KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION,
                           KafkaError.UNKNOWN_MEMBER_ID, KafkaError._ASSIGNMENT_LOST)


def create_topic(bootstrap: str, topic: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(30)


def produce_all(bootstrap: str, topic: str, records, **config) -> None:
    """Produce (key, value, headers, partition, timestamp) tuples and fail if any delivery failed."""
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, **config})
    for key, value, headers, partition, timestamp in records:
        extra = {"timestamp": timestamp} if timestamp else {}
        producer.produce(topic, value=value, key=key, headers=headers, partition=partition,
                         on_delivery=lambda err, _msg: err and errors.append(err), **extra)
        producer.poll(0)
    remaining = producer.flush(30)
    expect(remaining == 0 and not errors, f"{remaining} undelivered, errors: {errors[:3]}")


def consume_assigned(bootstrap: str, topic: str, count: int, **config) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}.reader",
                         "enable.auto.commit": False, **config})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    messages, until = [], dc.deadline()
    while len(messages) < count and not dc.past(until):
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        expect(msg.error() is None, f"consume error: {msg.error()}")
        messages.append(msg)
    consumer.close()
    return messages


def metadata(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "metadata")
    create_topic(bootstrap, topic, 3)
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": dc.metadata_client_id(prefix)})
    cluster = admin.list_topics(topic, timeout=30)
    expect(len(cluster.brokers) == 1, f"expected 1 broker, metadata lists {len(cluster.brokers)}")
    broker = next(iter(cluster.brokers.values()))
    expect(f"{broker.host}:{broker.port}" == bootstrap, f"broker at {broker.host}:{broker.port}, not {bootstrap}")
    partitions = cluster.topics[topic].partitions
    expect(sorted(partitions) == [0, 1, 2], f"topic partitions {sorted(partitions)}")
    leaders = {p.leader for p in partitions.values()}
    expect(leaders == {broker.id}, f"partition leaders {leaders}")
    return f"1 broker (node {broker.id} at {broker.host}:{broker.port}); {topic}: 3 partitions led by it"


def roundtrip(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "roundtrip")
    create_topic(bootstrap, topic)
    produce_all(bootstrap, topic, [(k, v, h, 0, None) for k, v, h in dc.roundtrip_records()])
    messages = consume_assigned(bootstrap, topic, dc.RECORD_COUNT)
    return dc.check_roundtrip([(m.offset(), m.key(), m.value(), m.headers() or []) for m in messages])


def compression(codec: str):
    def scenario(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, f"compression_{codec}")
        create_topic(bootstrap, topic)
        expected = [dc.compressible_value(i) for i in range(dc.COMPRESSED_COUNT)]
        produce_all(bootstrap, topic, [(None, v, None, 0, None) for v in expected],
                    **{"compression.type": codec, "linger.ms": 20})
        messages = consume_assigned(bootstrap, topic, len(expected))
        return dc.check_values([m.value() for m in messages], expected, codec)
    return scenario


def large_records(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "large_records")
    create_topic(bootstrap, topic)
    expected = [os.urandom(dc.LARGE_RECORD_BYTES) for _ in range(dc.LARGE_RECORD_COUNT)]
    produce_all(bootstrap, topic, [(None, v, None, 0, None) for v in expected],
                **{"message.max.bytes": LARGE_MESSAGE_MAX_BYTES})
    messages = consume_assigned(bootstrap, topic, len(expected))
    return dc.check_values([m.value() for m in messages], expected, "1 MB records")


def seek(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "seek")
    create_topic(bootstrap, topic)
    base = int(time.time() * 1000) - 60_000
    produce_all(bootstrap, topic, [(f"key-{i}".encode(), b"v", None, 0, base + i * dc.SEEK_STEP_MS)
                                   for i in range(dc.RECORD_COUNT)])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}.reader", "enable.auto.commit": False})

    def read_from(offset: int) -> int:
        consumer.assign([TopicPartition(topic, 0, offset)])
        until = dc.deadline()
        while not dc.past(until):
            msg = consumer.poll(0.5)
            if msg is not None:
                expect(msg.error() is None, f"consume error: {msg.error()}")
                return msg.offset()
        raise dc.ScenarioFailed(f"no record came after seeking to {offset}")

    first = read_from(OFFSET_BEGINNING)
    expect(first == 0, f"after seek to beginning read offset {first}")
    target = base + dc.SEEK_TARGET_INDEX * dc.SEEK_STEP_MS - dc.SEEK_STEP_MS // 2
    found = consumer.offsets_for_times([TopicPartition(topic, 0, target)], timeout=30)[0]
    expect(found.offset == dc.SEEK_TARGET_INDEX, f"offsets_for_times gave {found.offset}")
    at_time = read_from(found.offset)
    expect(at_time == dc.SEEK_TARGET_INDEX, f"after seek to timestamp read offset {at_time}")
    consumer.assign([TopicPartition(topic, 0, OFFSET_END)])
    consumer.poll(1.0)  # let the consumer resolve the logical end offset before the new record lands
    produce_all(bootstrap, topic, [(None, b"after-end", None, 0, None)])
    until, after_end = dc.deadline(), None
    while after_end is None and not dc.past(until):
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            after_end = msg.offset()
    consumer.close()
    expect(after_end == dc.RECORD_COUNT, f"after seek to end read offset {after_end}")
    return f"beginning -> 0, timestamp -> {at_time}, end -> {after_end}"


def idempotent(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "idempotent")
    create_topic(bootstrap, topic)
    expected = [f"idempotent-{i}".encode() for i in range(dc.IDEMPOTENT_COUNT)]
    produce_all(bootstrap, topic, [(None, v, None, 0, None) for v in expected],
                **{"enable.idempotence": True, "acks": "all"})
    messages = consume_assigned(bootstrap, topic, len(expected))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}.reader"})
    _low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
    consumer.close()
    expect(high == len(expected), f"log end offset {high}, expected {len(expected)} (duplicates?)")
    return dc.check_values([m.value() for m in messages], expected, "idempotent")


def failover(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "failover")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, dc.FAILOVER_PARTITIONS, dc.FAILOVER_REPLICAS,
                                  config={"min.insync.replicas": dc.FAILOVER_MIN_ISR})])[topic].result(30)
    records = dc.failover_records()
    half = len(records) // 2
    errors: list = []
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})

    def send(part: list[tuple[int, bytes]]) -> None:
        for partition, value in part:
            producer.produce(topic, value=value, partition=partition,
                             on_delivery=lambda err, _msg: err and errors.append(err))
            producer.poll(0)
        remaining = producer.flush(dc.FAILOVER_FLUSH_S)
        expect(remaining == 0 and not errors, f"{remaining} unacknowledged, errors: {errors[:3]}")

    send(records[:half])
    killed = dc.kill_leader_and_wait(topic)
    send(records[half:])
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}.reader", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(dc.FAILOVER_PARTITIONS)])
    consumed, until = [], dc.deadline()
    while len(consumed) < len(records) and not dc.past(until):
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        expect(msg.error() is None, f"consume error: {msg.error()}")
        consumed.append((msg.partition(), msg.value()))
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in range(dc.FAILOVER_PARTITIONS)}
    consumer.close()
    return dc.check_failover(consumed, ends, killed)


class GroupMember(dc.GroupMember):
    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__()
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
        self.consumer.subscribe([topic])

    def poll_once(self) -> None:
        msg = self.consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            self.seen.add((msg.partition(), msg.offset()))
            try:
                self.consumer.commit(msg, asynchronous=False)
            except KafkaException as exc:
                if exc.args[0].code() not in REBALANCE_COMMIT_ERRORS:
                    raise

    def assigned_partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    create_topic(bootstrap, topic, dc.GROUP_PARTITIONS)
    produce_all(bootstrap, topic, [(None, value, None, partition, None) for partition, value in dc.group_records()])

    def committed_offsets() -> dict[int, int]:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
        return {tp.partition: tp.offset for tp in result.topic_partitions}

    return dc.group_scenario(lambda: GroupMember(bootstrap, topic, group), committed_offsets)


def admin_scenario(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "admin")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1, config={"retention.ms": dc.RETENTION_MS})])[topic].result(30)
    try:
        admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
        raise dc.ScenarioFailed("creating the topic again did not fail")
    except KafkaException as exc:
        code = exc.args[0].code()
        expect(code == KafkaError.TOPIC_ALREADY_EXISTS, f"second create failed with {exc}")
    described = admin.list_topics(topic, timeout=30).topics[topic]
    expect(len(described.partitions) == 3, f"topic has {len(described.partitions)} partitions")
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(30)
    expect(configs["retention.ms"].value == dc.RETENTION_MS, f"retention.ms = {configs['retention.ms'].value}")
    expect(configs["cleanup.policy"].value == "delete", f"cleanup.policy = {configs['cleanup.policy'].value}")
    admin.delete_topics([topic])[topic].result(30)
    dc.wait_until(lambda: topic not in admin.list_topics(timeout=30).topics, "the deleted topic to leave the list")
    return f"created, duplicate refused, 3 partitions, retention.ms={dc.RETENTION_MS}, deleted"


def transactions(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "transactions")
    create_topic(bootstrap, topic)

    def producer() -> Producer:
        transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic})
        transactional.init_transactions(30)
        return transactional

    def send(transactional: Producer, value: bytes) -> None:
        transactional.begin_transaction()
        transactional.produce(topic, value, partition=0)
        expect(transactional.flush(30) == 0, "records left unsent")

    zombie = producer()
    send(zombie, dc.TXN_COMMITTED)
    zombie.commit_transaction(30)
    send(zombie, dc.TXN_ABORTED)
    zombie.abort_transaction(30)
    send(zombie, dc.TXN_ZOMBIE)
    successor = producer()  # fences the first producer and aborts its open transaction
    try:
        zombie.commit_transaction(30)
        raise dc.ScenarioFailed("the fenced producer committed")
    except KafkaException as exc:
        fenced = exc.args[0]
        expect(fenced.fatal(), f"the fenced producer's commit failed with a non-fatal {fenced}")
    send(successor, dc.TXN_SUCCESSOR)
    successor.commit_transaction(30)
    messages = consume_assigned(bootstrap, topic, 2, **{"isolation.level": "read_committed"})
    return dc.check_transactions([m.value() for m in messages], fenced.name())


def compacted(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "compacted")
    create_topic(bootstrap, topic, config=dc.COMPACTED_CONFIG)
    producer = Producer({"bootstrap.servers": bootstrap})

    def produce(records: list[tuple[bytes, bytes | None]]) -> None:
        errors = []
        for key, value in records:
            producer.produce(topic, value=value, key=key, partition=0,
                             on_delivery=lambda err, _msg: err and errors.append(err))
        expect(producer.flush(30) == 0 and not errors, f"undelivered, errors: {errors[:3]}")

    def read_all() -> list[tuple[bytes | None, bytes | None]]:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}.reader",
                             "enable.auto.commit": False, "enable.partition.eof": True})
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        found, until = [], dc.deadline()
        try:
            while not dc.past(until):
                msg = consumer.poll(0.5)
                if msg is None:
                    continue
                if msg.error() and msg.error().code() == KafkaError._PARTITION_EOF:
                    return found
                expect(msg.error() is None, f"consume error: {msg.error()}")
                found.append((msg.key(), msg.value()))
        finally:
            consumer.close()
        raise dc.ScenarioFailed("the end of the partition was not reached")

    return dc.compacted_scenario(produce, read_all)


def secured(scenario: str, config: dict):
    """The sasl_scram and tls cells: 10 records through a secured listener (compat_tests/security_listeners.py)."""
    def run(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, scenario)
        create_topic(bootstrap, topic)
        expected = dc.secured_values()
        produce_all(config["bootstrap.servers"], topic, [(None, v, None, 0, None) for v in expected], **config)
        messages = consume_assigned(config["bootstrap.servers"], topic, len(expected), **config)
        return dc.check_values([m.value() for m in messages], expected, f"{scenario} ({config['security.protocol']})")
    return run


SECURED = {
    "sasl_scram": secured("sasl_scram", {
        "bootstrap.servers": os.environ.get("COMPAT_SASL_BOOTSTRAP", ""), "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": os.environ.get("COMPAT_SCRAM_USER", ""),
        "sasl.password": os.environ.get("COMPAT_SCRAM_PASSWORD", "")}),
    "tls": secured("tls", {"bootstrap.servers": os.environ.get("COMPAT_TLS_BOOTSTRAP", ""), "security.protocol": "SSL",
                           "ssl.ca.location": os.environ.get("COMPAT_TLS_CA", "")}),
}

dc.run(dc.core_scenarios(compression, metadata=metadata, roundtrip=roundtrip, large_records=large_records,
                         seek=seek, idempotent=idempotent, consumer_group=consumer_group, admin=admin_scenario,
                         failover=failover, transactions=transactions, compacted=compacted, **SECURED))
