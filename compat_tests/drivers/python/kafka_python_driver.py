"""The kafka-python driver of the matrix (see driver_common for the command line and output)."""
from __future__ import annotations

import logging
import os
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import CommitFailedError, KafkaError, RebalanceInProgressError, TopicAlreadyExistsError

import driver_common as dc
from driver_common import expect

logging.basicConfig(level=logging.WARNING)


def admin(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="compat-kafka-python")


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    client = admin(bootstrap)
    try:
        client.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        client.close()


def consume_assigned(bootstrap: str, topic: str, count: int, **config) -> list:
    """Records from partition 0 of topic, from offset 0, until count have come."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **config)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    records, until = [], dc.deadline()
    while len(records) < count and not dc.past(until):
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    consumer.close()
    return records


def metadata(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "metadata")
    create_topic(bootstrap, topic, 3)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id=dc.metadata_client_id(prefix))
    until = dc.deadline()
    while not dc.past(until):
        partitions = consumer.partitions_for_topic(topic)
        if partitions:
            break
        time.sleep(0.2)
    brokers = consumer._client.cluster.brokers()
    expect(len(brokers) == 1, f"expected 1 broker, metadata lists {len(brokers)}")
    broker = next(iter(brokers))
    host, port = bootstrap.rsplit(":", 1)
    expect((broker.host, broker.port) == (host, int(port)), f"broker at {broker.host}:{broker.port}, not {bootstrap}")
    expect(partitions == {0, 1, 2}, f"topic partitions {partitions}")
    leaders = {consumer._client.cluster.leader_for_partition(TopicPartition(topic, p)) for p in partitions}
    expect(leaders == {broker.node_id}, f"partition leaders {leaders}")
    consumer.close()
    return f"1 broker (node {broker.node_id} at {broker.host}:{broker.port}); {topic}: 3 partitions led by it"


def roundtrip(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "roundtrip")
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for key, value, headers in dc.roundtrip_records():
        producer.send(topic, key=key, value=value, headers=headers, partition=0)
    producer.flush()
    producer.close()
    records = consume_assigned(bootstrap, topic, dc.RECORD_COUNT)
    return dc.check_roundtrip([(r.offset, r.key, r.value, list(r.headers)) for r in records])


def compression(codec: str):
    def scenario(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, f"compression_{codec}")
        create_topic(bootstrap, topic)
        producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, linger_ms=20)
        expected = [dc.compressible_value(i) for i in range(dc.COMPRESSED_COUNT)]
        for value in expected:
            producer.send(topic, value=value, partition=0)
        producer.flush()
        producer.close()
        records = consume_assigned(bootstrap, topic, len(expected))
        return dc.check_values([r.value for r in records], expected, codec)
    return scenario


def large_records(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "large_records")
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    expected = [os.urandom(dc.LARGE_RECORD_BYTES) for _ in range(dc.LARGE_RECORD_COUNT)]
    for value in expected:
        producer.send(topic, value=value, partition=0).get(timeout=30)
    producer.close()
    records = consume_assigned(bootstrap, topic, len(expected))
    return dc.check_values([r.value for r in records], expected, "1 MB records")


def seek(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "seek")
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    base = int(time.time() * 1000) - 60_000
    for i in range(dc.RECORD_COUNT):
        producer.send(topic, key=f"key-{i}".encode(), value=b"v", partition=0, timestamp_ms=base + i * dc.SEEK_STEP_MS)
    producer.flush()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, max_poll_records=1)
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])

    def next_offset() -> int:
        until = dc.deadline()
        while not dc.past(until):
            for batch in consumer.poll(timeout_ms=500).values():
                return batch[0].offset
        raise dc.ScenarioFailed("no record came after the seek")

    consumer.seek_to_beginning(tp)
    first = next_offset()
    expect(first == 0, f"after seek to beginning read offset {first}")
    target = base + dc.SEEK_TARGET_INDEX * dc.SEEK_STEP_MS - dc.SEEK_STEP_MS // 2
    found = consumer.offsets_for_times({tp: target})[tp]
    expect(found is not None and found.offset == dc.SEEK_TARGET_INDEX, f"offsets_for_times gave {found}")
    consumer.seek(tp, found.offset)
    at_time = next_offset()
    expect(at_time == dc.SEEK_TARGET_INDEX, f"after seek to timestamp read offset {at_time}")
    consumer.seek_to_end(tp)
    end = consumer.position(tp)
    producer.send(topic, value=b"after-end", partition=0)
    producer.flush()
    producer.close()
    after_end = next_offset()
    consumer.close()
    expect(after_end == dc.RECORD_COUNT, f"after seek to end (position {end}) read offset {after_end}")
    return f"beginning -> 0, timestamp -> {at_time}, end -> {after_end}"


def idempotent(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "idempotent")
    create_topic(bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")
    expected = [f"idempotent-{i}".encode() for i in range(dc.IDEMPOTENT_COUNT)]
    for value in expected:
        producer.send(topic, value=value, partition=0)
    producer.flush()
    producer.close()
    records = consume_assigned(bootstrap, topic, len(expected))
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    end = consumer.end_offsets([TopicPartition(topic, 0)])[TopicPartition(topic, 0)]
    consumer.close()
    expect(end == len(expected), f"log end offset {end}, expected {len(expected)} (duplicates?)")
    return dc.check_values([r.value for r in records], expected, "idempotent")


def failover(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "failover")
    client = admin(bootstrap)
    try:
        client.create_topics([NewTopic(topic, dc.FAILOVER_PARTITIONS, dc.FAILOVER_REPLICAS,
                                       topic_configs={"min.insync.replicas": dc.FAILOVER_MIN_ISR})])
    finally:
        client.close()
    records = dc.failover_records()
    half = len(records) // 2
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")

    def send(part: list[tuple[int, bytes]]) -> None:
        futures = [producer.send(topic, value=value, partition=partition) for partition, value in part]
        producer.flush(timeout=dc.FAILOVER_FLUSH_S)
        failed = [f.exception for f in futures if not f.succeeded()]
        expect(not failed, f"{len(failed)} unacknowledged: {failed[:3]}")

    send(records[:half])
    killed = dc.kill_leader_and_wait(topic)
    send(records[half:])
    producer.close()
    partitions = [TopicPartition(topic, p) for p in range(dc.FAILOVER_PARTITIONS)]
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    consumed, until = [], dc.deadline()
    while len(consumed) < len(records) and not dc.past(until):
        for tp, batch in consumer.poll(timeout_ms=500).items():
            consumed.extend((tp.partition, r.value) for r in batch)
    ends = {tp.partition: offset for tp, offset in consumer.end_offsets(partitions).items()}
    consumer.close()
    return dc.check_failover(consumed, ends, killed)


class GroupMember(dc.GroupMember):
    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__()
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                      auto_offset_reset="earliest", enable_auto_commit=False)
        # kafka-python 3.0.12 can lose a leader's assignment when it joins before it knows the topic's partitions
        # (tests/integration/group_clients.py, know_the_topic_before_joining): load them first.
        self.consumer.partitions_for_topic(topic)

    def poll_once(self) -> None:
        for tp, batch in self.consumer.poll(timeout_ms=200).items():
            self.seen.update((tp.partition, r.offset) for r in batch)
        try:
            self.consumer.commit()
        except (CommitFailedError, RebalanceInProgressError):
            pass  # the group is rebalancing: the next poll rejoins and the next commit carries these offsets

    def assigned_partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.consumer.close()


def consumer_group(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "consumer_group")
    group = dc.topic_name(prefix, "consumer_group", "group")
    create_topic(bootstrap, topic, dc.GROUP_PARTITIONS)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for partition, value in dc.group_records():
        producer.send(topic, value=value, partition=partition)
    producer.flush()
    producer.close()

    def committed_offsets() -> dict[int, int]:
        client = admin(bootstrap)
        committed = client.list_group_offsets(group)[group]
        client.close()
        return {tp.partition: meta.offset for tp, meta in committed.items()}

    return dc.group_scenario(lambda: GroupMember(bootstrap, topic, group), committed_offsets)


def admin_scenario(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "admin")
    client = admin(bootstrap)
    client.create_topics([NewTopic(topic, 3, 1, topic_configs={"retention.ms": dc.RETENTION_MS})])
    try:
        client.create_topics([NewTopic(topic, 3, 1)])
        raise dc.ScenarioFailed("creating the topic again did not fail")
    except TopicAlreadyExistsError:
        pass
    # A KRaft broker learns of a new topic from the metadata log a moment after CreateTopics is answered, and
    # answers UNKNOWN_TOPIC_OR_PARTITION until then (seen on Apache Kafka 4.3.1 under load): describe until known.
    dc.wait_until(lambda: [t for t in client.describe_topics([topic]) if t["error_code"] == 0],
                  "the new topic to be described")
    described = client.describe_topics([topic])
    expect(len(described) == 1 and len(described[0]["partitions"]) == 3, f"describe_topics: {described}")
    response = client.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)], config_filter="all")
    configs = _config_values(response, topic)
    expect(configs.get("retention.ms") == dc.RETENTION_MS, f"retention.ms = {configs.get('retention.ms')}")
    expect(configs.get("cleanup.policy") == "delete", f"cleanup.policy = {configs.get('cleanup.policy')}")
    client.delete_topics([topic])
    dc.wait_until(lambda: topic not in client.list_topics(), "the deleted topic to leave the topic list")
    client.close()
    return f"created, duplicate refused, 3 partitions, retention.ms={dc.RETENTION_MS}, deleted"


def _config_values(response: dict, topic: str) -> dict[str, str]:
    """kafka-python 3 answers {resource_type: {resource_name: {config_key: {"value": ..., ...}}}}."""
    return {key: data.get("value") for key, data in response["topic"][topic].items()}


def transactions(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "transactions")
    create_topic(bootstrap, topic)

    def producer() -> KafkaProducer:
        transactional = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=topic)
        transactional.init_transactions()
        return transactional

    def send(transactional: KafkaProducer, value: bytes) -> None:
        transactional.begin_transaction()
        transactional.send(topic, value, partition=0).get(timeout=30)

    zombie = producer()
    send(zombie, dc.TXN_COMMITTED)
    zombie.commit_transaction()
    send(zombie, dc.TXN_ABORTED)
    zombie.abort_transaction()
    send(zombie, dc.TXN_ZOMBIE)
    successor = producer()  # fences the first producer and aborts its open transaction
    try:
        zombie.commit_transaction()
        raise dc.ScenarioFailed("the fenced producer committed")
    except KafkaError as exc:
        fenced = type(exc).__name__
    send(successor, dc.TXN_SUCCESSOR)
    successor.commit_transaction()
    zombie.close(timeout=5)
    successor.close(timeout=5)
    records = consume_assigned(bootstrap, topic, 2, isolation_level="read_committed")
    return dc.check_transactions([r.value for r in records], fenced)


def compacted(bootstrap: str, prefix: str) -> str:
    topic = dc.topic_name(prefix, "compacted")
    client = admin(bootstrap)
    try:
        client.create_topics([NewTopic(topic, 1, 1, topic_configs=dc.COMPACTED_CONFIG)])
    finally:
        client.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    tp = TopicPartition(topic, 0)

    def produce(records: list[tuple[bytes, bytes | None]]) -> None:
        futures = [producer.send(topic, key=key, value=value, partition=0) for key, value in records]
        producer.flush()
        for future in futures:
            future.get(30)

    def read_all() -> list[tuple[bytes | None, bytes | None]]:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        found, until = [], dc.deadline()
        try:
            while consumer.position(tp) < end:
                expect(not dc.past(until), f"offset {end} not reached")
                for batch in consumer.poll(timeout_ms=500).values():
                    found.extend((r.key, r.value) for r in batch)
        finally:
            consumer.close()
        return found

    try:
        return dc.compacted_scenario(produce, read_all)
    finally:
        producer.close()


def secured(scenario: str, bootstrap_variable: str, config: dict):
    """The sasl_scram and tls cells: 10 records through a secured listener (compat_tests/security_listeners.py)."""
    def run(bootstrap: str, prefix: str) -> str:
        topic = dc.topic_name(prefix, scenario)
        create_topic(bootstrap, topic)
        secured_bootstrap = os.environ.get(bootstrap_variable, "")
        expected = dc.secured_values()
        producer = KafkaProducer(bootstrap_servers=secured_bootstrap, **config)
        for value in expected:
            producer.send(topic, value=value, partition=0)
        producer.flush(30)
        producer.close()
        records = consume_assigned(secured_bootstrap, topic, len(expected), **config)
        return dc.check_values([r.value for r in records], expected, f"{scenario} ({config['security_protocol']})")
    return run


SECURED = {
    "sasl_scram": secured("sasl_scram", "COMPAT_SASL_BOOTSTRAP", {
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": os.environ.get("COMPAT_SCRAM_USER", ""),
        "sasl_plain_password": os.environ.get("COMPAT_SCRAM_PASSWORD", "")}),
    "tls": secured("tls", "COMPAT_TLS_BOOTSTRAP", {"security_protocol": "SSL",
                                                   "ssl_cafile": os.environ.get("COMPAT_TLS_CA", "")}),
}

dc.run(dc.core_scenarios(compression, metadata=metadata, roundtrip=roundtrip, large_records=large_records,
                         seek=seek, idempotent=idempotent, consumer_group=consumer_group, admin=admin_scenario,
                         failover=failover, transactions=transactions, compacted=compacted, **SECURED))
