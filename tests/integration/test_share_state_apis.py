"""The share coordinator's persister APIs (KIP-932, keys 83-87) over the wire, as a share-partition leader calls
them: initialize, write (merged into the stored state), read, read the summary, delete; a stale state epoch is
FENCED_STATE_EPOCH and an unknown topic id UNKNOWN_TOPIC_OR_PARTITION. Also the share APIs' authorization and the
share-group configs of GROUP resources."""

from __future__ import annotations

from tests.integration.group_clients import create_topic
from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
)
from wirebroker.protocol.messages.describe_configs import DescribeConfigsRequest
from wirebroker.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
)
from wirebroker.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
)
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
)
from wirebroker.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
)
from wirebroker.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
)

INITIALIZE, READ, WRITE, DELETE, SUMMARY = 83, 84, 85, 86, 87
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def _read(client: RawClient, topic_id: bytes):
    response = client.request(READ, 0, group_id="g", topics=[ReadShareGroupStateRequest.ReadStateData(
        topic_id=topic_id, partitions=[ReadShareGroupStateRequest.PartitionData(partition=0, leader_epoch=0)])])
    return response.results[0].partitions[0]


def _uninitialized(result) -> bool:
    """Kafka 4.3.1's answer to a read of a share-partition never initialised (or deleted)."""
    return (result.error_code, result.error_message) == (
        ErrorCode.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")


def test_share_state_is_initialized_written_read_and_deleted(broker_factory):
    broker = broker_factory(**{"offsets.topic.num.partitions": "1",
                               "share.coordinator.state.topic.num.partitions": "1"})
    create_topic(broker.bootstrap, "stateful", 1)
    with RawClient(broker.bootstrap) as client:
        topic_id = client.request(3, 12, topics=[MetadataRequest.MetadataRequestTopic(name="stateful")]).topics[0].topic_id
        assert _uninitialized(_read(client, topic_id))  # never initialized

        init = client.request(INITIALIZE, 0, group_id="g", topics=[InitializeShareGroupStateRequest.InitializeStateData(
            topic_id=topic_id, partitions=[InitializeShareGroupStateRequest.PartitionData(
                partition=0, state_epoch=1, start_offset=10)])])
        assert init.results[0].partitions[0].error_code == ErrorCode.NONE

        def write(state_epoch: int, start_offset: int, batches: list[tuple[int, int, int, int]]) -> int:
            response = client.request(WRITE, 1, group_id="g", topics=[WriteShareGroupStateRequest.WriteStateData(
                topic_id=topic_id, partitions=[WriteShareGroupStateRequest.PartitionData(
                    partition=0, state_epoch=state_epoch, leader_epoch=0, start_offset=start_offset,
                    delivery_complete_count=1, state_batches=[WriteShareGroupStateRequest.StateBatch(
                        first_offset=f, last_offset=last, delivery_state=s, delivery_count=c)
                        for f, last, s, c in batches])])])
            return response.results[0].partitions[0].error_code

        assert write(1, -1, [(10, 14, AVAILABLE, 1)]) == ErrorCode.NONE
        assert write(1, 11, [(12, 12, ACKNOWLEDGED, 1), (13, 13, ARCHIVED, 2)]) == ErrorCode.NONE
        assert write(0, 11, []) == ErrorCode.FENCED_STATE_EPOCH
        state = _read(client, topic_id)
        assert (state.state_epoch, state.start_offset) == (1, 11)
        assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in state.state_batches] == [
            (11, 11, AVAILABLE, 1), (12, 12, ACKNOWLEDGED, 1), (13, 13, ARCHIVED, 2), (14, 14, AVAILABLE, 1)]

        summary = client.request(SUMMARY, 1, group_id="g", topics=[
            ReadShareGroupStateSummaryRequest.ReadStateSummaryData(topic_id=topic_id, partitions=[
                ReadShareGroupStateSummaryRequest.PartitionData(partition=0, leader_epoch=0)])])
        answered = summary.results[0].partitions[0]
        assert (answered.start_offset, answered.state_epoch, answered.delivery_complete_count) == (11, 1, 1)

        unknown = client.request(DELETE, 0, group_id="g", topics=[DeleteShareGroupStateRequest.DeleteStateData(
            topic_id=bytes(16), partitions=[DeleteShareGroupStateRequest.PartitionData(partition=0)])])
        assert unknown.results[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        deleted = client.request(DELETE, 0, group_id="g", topics=[DeleteShareGroupStateRequest.DeleteStateData(
            topic_id=topic_id, partitions=[DeleteShareGroupStateRequest.PartitionData(partition=0)])])
        assert deleted.results[0].partitions[0].error_code == ErrorCode.NONE
        assert _uninitialized(_read(client, topic_id))

    broker.kill()  # what was written is read back from __share_group_state after a restart
    broker.start()
    with RawClient(broker.bootstrap) as client:
        assert _uninitialized(_read(client, topic_id))


def test_share_apis_are_authorized_as_kafka_authorizes_them(broker_factory):
    """With an authorizer and no ACLs, an anonymous client may neither join, fetch, describe nor touch the state."""
    broker = broker_factory(**{"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                               "allow.everyone.if.no.acl.found": "false"})
    with RawClient(broker.bootstrap) as client:
        joined = client.request(76, 1, group_id="g", member_id="m", member_epoch=0, subscribed_topic_names=["t"])
        assert joined.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        fetched = client.request(78, 1, group_id="g", member_id="m", share_session_epoch=0, max_wait_ms=0,
                                 min_bytes=1, max_bytes=1000, max_records=10, batch_size=10, topics=[],
                                 forgotten_topics_data=[])
        assert fetched.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        described = client.request(77, 1, group_ids=["g"])
        assert described.groups[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
        read = _read(client, bytes(16))
        assert read.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_group_configs_are_set_and_described(broker_factory):
    """share.* group configs through IncrementalAlterConfigs and DescribeConfigs on the GROUP resource (32)."""
    broker = broker_factory(**{"group.share.record.lock.duration.ms": "20000"})
    group_resource = 32
    with RawClient(broker.bootstrap) as client:
        def alter(key: str, value: str) -> int:
            resource = IncrementalAlterConfigsRequest.AlterConfigsResource(
                resource_type=group_resource, resource_name="configured", configs=[
                    IncrementalAlterConfigsRequest.AlterableConfig(name=key, config_operation=0, value=value)])
            return client.request(44, 1, resources=[resource], validate_only=False).responses[0].error_code

        assert alter("share.auto.offset.reset", "earliest") == ErrorCode.NONE
        assert alter("share.auto.offset.reset", "sometimes") == ErrorCode.INVALID_CONFIG
        assert alter("share.unknown.key", "1") == ErrorCode.INVALID_CONFIG
        described = client.request(32, 4, resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=group_resource, resource_name="configured", configuration_keys=None)],
            include_synonyms=False, include_documentation=False).results[0]
        configs = {c.name: (c.value, c.config_source) for c in described.configs}
        assert configs["share.auto.offset.reset"] == ("earliest", 8)  # DYNAMIC_GROUP_CONFIG
        assert configs["share.record.lock.duration.ms"] == ("20000", 5)  # the broker's, DEFAULT_CONFIG


def test_find_coordinator_names_the_share_coordinator_of_a_share_partition_key(broker_factory):
    broker = broker_factory(**{"share.coordinator.state.topic.num.partitions": "1"})
    with RawClient(broker.bootstrap) as client:
        found = client.request(10, 6, key_type=2, coordinator_keys=["g:AAECAwQFBgcICQoLDA0ODw:0", "g:bad"])
        good, bad = found.coordinators
        assert (good.error_code, good.node_id, good.port) == (ErrorCode.NONE, 0, broker.port)
        assert bad.error_code == ErrorCode.INVALID_REQUEST
