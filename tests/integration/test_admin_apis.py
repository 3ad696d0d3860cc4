"""Admin and offset APIs driven by real clients: kafka-python's KafkaAdminClient and KafkaConsumer, confluent-kafka's
AdminClient. Exact error codes and Kafka's messages for edge cases are in test_admin_api_errors.py."""

from __future__ import annotations

import pytest

BASE_TIMESTAMP = 1_700_000_000_000


def produce_with_timestamps(bootstrap: str, topic: str, count: int, partition: int = 0) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(count):
        producer.send(topic, value=b"v%d" % i, partition=partition, timestamp_ms=BASE_TIMESTAMP + 1000 * i)
    producer.flush()
    producer.close()


def confluent_results(futures: dict) -> dict:
    """Each future's result, or the KafkaError it failed with."""
    results = {}
    for key, future in futures.items():
        try:
            results[key] = future.result(timeout=30)
        except Exception as exc:  # confluent-kafka raises KafkaException carrying a KafkaError
            results[key] = exc.args[0]
    return results


def test_kafka_python_topic_lifecycle(broker):
    from kafka import KafkaAdminClient
    from kafka.admin import NewPartitions, NewTopic
    from kafka.errors import InvalidReplicationFactorError, TopicAlreadyExistsError

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    created = admin.create_topics([NewTopic("orders", 3, 1, topic_configs={"cleanup.policy": "compact"})])
    result = created["topics"][0] if isinstance(created, dict) else created.topics[0]
    assert result["error_code"] == 0 and result["num_partitions"] == 3 and result["replication_factor"] == 1
    assert result["configs"]["cleanup.policy"]["value"] == "compact"
    assert result["configs"]["retention.ms"]["value"] == "604800000"
    with pytest.raises(TopicAlreadyExistsError):
        admin.create_topics([NewTopic("orders", 1, 1)])
    with pytest.raises(InvalidReplicationFactorError):
        admin.create_topics([NewTopic("replicated", 1, 3)])
    admin.create_topics([NewTopic("dry-run", 2, 1)], validate_only=True)
    admin.create_partitions({"orders": NewPartitions(5)})
    described = {t["name"]: t for t in admin.describe_topics(["orders"])}
    assert len(described["orders"]["partitions"]) == 5
    assert "dry-run" not in admin.list_topics()
    admin.delete_topics(["orders"])
    assert "orders" not in admin.list_topics()
    cluster = admin.describe_cluster()
    assert cluster["controller_id"] == 0
    assert [(b["broker_id"], b["port"]) for b in cluster["brokers"]] == [(0, broker.port)]
    admin.close()


def test_kafka_python_offsets_for_times_and_beginning_end(broker):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    admin.create_topics([NewTopic("timed", 1, 1)])
    produce_with_timestamps(broker.bootstrap, "timed", 10)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
    tp = TopicPartition("timed", 0)
    assert consumer.beginning_offsets([tp]) == {tp: 0}
    assert consumer.end_offsets([tp]) == {tp: 10}
    found = consumer.offsets_for_times({tp: BASE_TIMESTAMP + 3500})[tp]
    assert (found.offset, found.timestamp) == (4, BASE_TIMESTAMP + 4000)
    assert consumer.offsets_for_times({tp: BASE_TIMESTAMP + 10_000})[tp] is None
    admin.delete_records({tp: 6})
    assert consumer.beginning_offsets([tp]) == {tp: 6}
    consumer.close()
    admin.close()


def test_confluent_configs_round_trip(broker):
    from confluent_kafka.admin import (
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        NewTopic,
        ResourceType,
    )

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    assert confluent_results(admin.create_topics([NewTopic("configured", 1, 1, config={"retention.ms": "5000"})])) \
        == {"configured": None}
    topic = ConfigResource(ResourceType.TOPIC, "configured")
    configs = confluent_results(admin.describe_configs([topic]))[topic]
    assert configs["retention.ms"].value == "5000" and configs["retention.ms"].source == 1  # DYNAMIC_TOPIC_CONFIG
    assert configs["segment.bytes"].value == "1073741824" and configs["segment.bytes"].source == 5  # DEFAULT_CONFIG
    change = ConfigResource(ResourceType.TOPIC, "configured", incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
    ])
    assert list(confluent_results(admin.incremental_alter_configs([change])).values()) == [None]
    configs = confluent_results(admin.describe_configs([topic]))[topic]
    assert configs["cleanup.policy"].value == "delete,compact"
    assert configs["retention.ms"].value == "604800000" and configs["retention.ms"].source == 5
    broker_change = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
        ConfigEntry("log.retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
    refused = list(confluent_results(admin.incremental_alter_configs([broker_change])).values())[0]
    assert refused.name() == "INVALID_REQUEST"
    assert refused.str() == "Cannot update these configs dynamically: Set(log.retention.ms)"
    broker_resource = ConfigResource(ResourceType.BROKER, "0")
    broker_configs = confluent_results(admin.describe_configs([broker_resource]))[broker_resource]
    assert broker_configs["node.id"].value == "0" and broker_configs["node.id"].source == 4  # STATIC_BROKER_CONFIG
    assert broker_configs["node.id"].is_read_only


def test_confluent_list_offsets_and_delete_records(broker):
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    confluent_results(admin.create_topics([NewTopic("listed", 2, 1)]))
    produce_with_timestamps(broker.bootstrap, "listed", 5)
    p0, p1 = TopicPartition("listed", 0), TopicPartition("listed", 1)
    found = confluent_results(admin.list_offsets({p0: OffsetSpec.latest(), p1: OffsetSpec.earliest()}))
    offsets = {(tp.topic, tp.partition): info.offset for tp, info in found.items()}
    assert offsets == {("listed", 0): 5, ("listed", 1): 0}
    newest = list(confluent_results(admin.list_offsets({p0: OffsetSpec.max_timestamp()})).values())[0]
    assert (newest.offset, newest.timestamp) == (4, BASE_TIMESTAMP + 4000)
    at = list(confluent_results(admin.list_offsets({p0: OffsetSpec.for_timestamp(BASE_TIMESTAMP + 2000)},
                                                   isolation_level=IsolationLevel.READ_COMMITTED)).values())[0]
    assert at.offset == 2
    deleted = list(confluent_results(admin.delete_records([TopicPartition("listed", 0, 3)])).values())[0]
    assert deleted.low_watermark == 3
    earliest = list(confluent_results(admin.list_offsets({p0: OffsetSpec.earliest()})).values())[0]
    assert earliest.offset == 3


def test_confluent_describe_cluster_and_topics(broker):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    confluent_results(admin.create_topics([NewTopic("described", 3, 1)]))
    cluster = admin.describe_cluster(include_authorized_operations=True).result(timeout=30)
    assert [node.id for node in cluster.nodes] == [0] and cluster.controller.id == 0
    assert cluster.authorized_operations
    described = confluent_results(admin.describe_topics(TopicCollection(["described", "missing"])))
    assert [p.id for p in described["described"].partitions] == [0, 1, 2]
    assert described["missing"].name() == "UNKNOWN_TOPIC_OR_PART"
