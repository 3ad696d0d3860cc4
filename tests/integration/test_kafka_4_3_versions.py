"""The versions Kafka 4.3.1 serves and wirebroker now does too (issue 17), asked with exact requests and through
kafka-python, which picks the newest version both sides speak."""

from __future__ import annotations

import kafka
import pytest
from kafka.protocol.metadata import MetadataRequest as KafkaPythonMetadataRequest

from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.primitives import UUID_ZERO

METADATA = 3


@pytest.fixture
def admin(broker):
    client = kafka.KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield client
    client.close()


def negotiated(admin: kafka.KafkaAdminClient, request_class: type) -> int:
    return admin._manager.broker_version_data.api_version(request_class)


def by_id(topic_id: bytes) -> MetadataRequest.MetadataRequestTopic:
    topic = MetadataRequest.MetadataRequestTopic(topic_id=topic_id)
    topic.name = None  # the constructor reads None as the schema's default; a topic named by id has a null name
    return topic


def test_metadata_v13_names_topics_by_name_and_id_with_a_top_level_error_code(broker):
    with RawClient(broker.bootstrap) as client:
        by_name = client.request(METADATA, 13, topics=[MetadataRequest.MetadataRequestTopic(name="meta13")],
                                 allow_auto_topic_creation=True)
        assert by_name.error_code == ErrorCode.NONE
        (topic,) = by_name.topics
        assert topic.error_code == ErrorCode.NONE and topic.name == "meta13" and topic.topic_id != UUID_ZERO
        named = client.request(METADATA, 13, topics=[by_id(topic.topic_id)], allow_auto_topic_creation=False)
        assert named.error_code == ErrorCode.NONE
        assert [(t.name, t.topic_id, t.error_code) for t in named.topics] == [("meta13", topic.topic_id, 0)]
        unknown = client.request(METADATA, 13, topics=[by_id(b"\x01" * 16)], allow_auto_topic_creation=False)
        assert unknown.error_code == ErrorCode.NONE and unknown.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_kafka_python_reads_metadata_at_v13(broker, admin):
    admin.create_topics([kafka.admin.NewTopic("kp-meta13", 2, 1)])
    assert negotiated(admin, KafkaPythonMetadataRequest) == 13
    (described,) = admin.describe_topics(["kp-meta13"])
    assert described["error_code"] == 0 and len(described["partitions"]) == 2
