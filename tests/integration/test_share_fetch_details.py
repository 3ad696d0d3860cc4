"""Three share-group details over the wire, as Kafka 4.3.1 behaves: a ShareFetch answer of a session lists every
partition when the session opens, later only the partitions with records, acknowledgements or errors; a broker holds at most `group.share.max.share.sessions` share sessions, a new one past that
being SHARE_SESSION_LIMIT_REACHED, with no eviction (a member's own new session replaces its old one; a closed
session frees its place); and AlterShareGroupOffsets on a group that does not exist creates an empty share group.

Each runs on wirebroker; WIREBROKER_RELIABILITY=full runs the session limit and the group creation on Apache Kafka
4.3.1 too (one broker for the module: each test has its own topic and group)."""

from __future__ import annotations

import base64
import os
import time
import uuid

import pytest

from compat_tests.reference_kafka import ReferenceKafka
from tests.integration.group_clients import create_topic, produce
from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
)
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.share_fetch import ShareFetchRequest

FULL = os.environ.get("WIREBROKER_RELIABILITY") == "full"
SHARE_FETCH, ALTER_SHARE_GROUP_OFFSETS, SHARE_GROUP_DESCRIBE, SHARE_GROUP_HEARTBEAT = 78, 91, 77, 76
METADATA, FIND_COORDINATOR, INCREMENTAL_ALTER_CONFIGS = 3, 10, 44
GROUP_RESOURCE, SET = 32, 0
FINAL_EPOCH = -1
ACCEPT = 1
# One share session per broker (Kafka refuses a session limit under the group size limit: both are 1), and
# internal topics of one partition and one replica.
SETTINGS = {"group.share.max.share.sessions": "1", "group.share.max.size": "1", "offsets.topic.num.partitions": "1",
            "offsets.topic.replication.factor": "1", "share.coordinator.state.topic.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1", "share.coordinator.state.topic.min.isr": "1"}

ON_KAFKA = pytest.param("kafka-4.3.1", marks=pytest.mark.skipif(
    not FULL, reason="the same scenario on Apache Kafka 4.3.1: WIREBROKER_RELIABILITY=full"))


@pytest.fixture(scope="module")
def module_kafka(tmp_path_factory):
    with ReferenceKafka(tmp_path_factory.mktemp("kafka"), settings=SETTINGS) as reference:
        yield reference


@pytest.fixture(params=["wirebroker", ON_KAFKA])
def broker(request, broker_factory):
    if request.param == "wirebroker":
        return broker_factory(**SETTINGS)
    return request.getfixturevalue("module_kafka")


def _member_id() -> str:
    """A member id as Kafka's clients make them (a UUID in Kafka's base64 form)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _topic_id(client: RawClient, topic: str) -> bytes | None:
    """The topic's id once this broker's metadata knows it."""
    found = client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(name=topic)]).topics[0]
    return found.topic_id if found.error_code == ErrorCode.NONE and any(found.topic_id) else None


def _earliest(client: RawClient, group: str) -> None:
    """share.auto.offset.reset=earliest for the group: its share-partitions start at the log start, however late
    they are initialised."""
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource(
        resource_type=GROUP_RESOURCE, resource_name=group, configs=[IncrementalAlterConfigsRequest.AlterableConfig(
            name="share.auto.offset.reset", config_operation=SET, value="earliest")])
    assert client.request(INCREMENTAL_ALTER_CONFIGS, 1, resources=[resource],
                          validate_only=False).responses[0].error_code == ErrorCode.NONE


def _fetch(client: RawClient, group: str, member: str, epoch: int,
           topics: list[ShareFetchRequest.FetchTopic] | None = None, max_wait_ms: int = 0):
    return client.request(SHARE_FETCH, 1, group_id=group, member_id=member, share_session_epoch=epoch,
                          max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, max_records=100, batch_size=100,
                          topics=topics or [], forgotten_topics_data=[])


def _partitions(topic_id: bytes, *indexes: int) -> list[ShareFetchRequest.FetchTopic]:
    return [ShareFetchRequest.FetchTopic(topic_id=topic_id, partitions=[
        ShareFetchRequest.FetchPartition(partition_index=i, acknowledgement_batches=[]) for i in indexes])]


def _listed(response) -> list[tuple[int, int, int]]:
    """(partition, error, records acquired) of each partition the answer lists."""
    return [(p.partition_index, p.error_code, sum(a.last_offset - a.first_offset + 1 for a in p.acquired_records))
            for t in response.responses for p in t.partitions]


def _until(condition, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, what
        time.sleep(0.3)
    return result


def _join(client: RawClient, group: str, member: str, topic: str) -> None:
    """Join the share group (its coordinator found first) and wait until its share-partitions can be fetched: the
    group coordinator initialises them (InitializeShareGroupState) after the first heartbeat, and a later heartbeat
    assigns them, as Kafka 4.3.1 does."""
    _until(lambda: client.request(FIND_COORDINATOR, 6, key_type=0, coordinator_keys=[group]).coordinators[0]
           .error_code == ErrorCode.NONE, "the group coordinator")
    joined = _until(lambda: (r := client.request(SHARE_GROUP_HEARTBEAT, 1, group_id=group, member_id=member,
                                                 member_epoch=0, subscribed_topic_names=[topic])).error_code
                    == ErrorCode.NONE and r, "joined")
    epoch = joined.member_epoch

    def assigned() -> bool:
        nonlocal epoch
        response = client.request(SHARE_GROUP_HEARTBEAT, 1, group_id=group, member_id=member, member_epoch=epoch)
        assert response.error_code == ErrorCode.NONE
        epoch = response.member_epoch
        return response.assignment is not None and bool(response.assignment.topic_partitions)

    if not joined.assignment.topic_partitions:
        _until(assigned, "the share-partitions initialised and assigned")


def test_a_share_fetch_answer_lists_only_partitions_with_records_acknowledgements_or_errors(broker_factory):
    """On wirebroker only (Kafka 4.3.1 initialises share-partitions asynchronously after the assignment: a raw client
    cannot tell when they are ready); the same exchange by hand against Kafka 4.3.1 gave these answers."""
    broker = broker_factory(**SETTINGS)
    create_topic(broker.bootstrap, "sparse", 2)
    member, group = _member_id(), "sparse-readers"
    with RawClient(broker.bootstrap) as client:
        topic_id = _until(lambda: _topic_id(client, "sparse"), "the topic")
        _earliest(client, group)
        _join(client, group, member, "sparse")
        opened = _fetch(client, group, member, 0, _partitions(topic_id, 0, 1))
        assert sorted(_listed(opened)) == [(0, ErrorCode.NONE, 0), (1, ErrorCode.NONE, 0)]  # a new session: all
        produce(broker.bootstrap, "sparse", 3, 1)  # records in partition 0 only
        fetched = _fetch(client, group, member, 1, max_wait_ms=3000)
        assert _listed(fetched) == [(0, ErrorCode.NONE, 3)]
        acquired = fetched.responses[0].partitions[0].acquired_records[0]
        acknowledged = client.request(SHARE_FETCH, 1, group_id=group, member_id=member, share_session_epoch=2,
                                      max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, max_records=100, batch_size=100,
                                      topics=[ShareFetchRequest.FetchTopic(topic_id=topic_id, partitions=[
                                          ShareFetchRequest.FetchPartition(partition_index=0, acknowledgement_batches=[
                                              ShareFetchRequest.AcknowledgementBatch(
                                                  first_offset=acquired.first_offset, last_offset=acquired.last_offset,
                                                  acknowledge_types=[ACCEPT])])])],
                                      forgotten_topics_data=[])
        assert [(p.partition_index, p.acknowledge_error_code) for t in acknowledged.responses for p in t.partitions] == [
            (0, ErrorCode.NONE)]  # the acknowledged partition is listed, with its acknowledgement's outcome
        assert _listed(_fetch(client, group, member, 3)) == []  # nothing new, nothing acknowledged: nothing listed


def test_share_sessions_past_the_limit_are_refused_and_none_is_evicted(broker):
    create_topic(broker.bootstrap, "few", 1)
    first, second = _member_id(), _member_id()
    with RawClient(broker.bootstrap) as client:
        topics = _partitions(_until(lambda: _topic_id(client, "few"), "the topic"), 0)
        assert _fetch(client, "few-readers", first, 0, topics).error_code == ErrorCode.NONE
        refused = _fetch(client, "few-readers", second, 0, topics)
        assert refused.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
        assert _fetch(client, "few-readers", first, 0, topics).error_code == ErrorCode.NONE  # its own, replaced
        assert _fetch(client, "few-readers", first, 1).error_code == ErrorCode.NONE  # and it lives on
        assert _fetch(client, "few-readers", first, FINAL_EPOCH).error_code == ErrorCode.NONE  # closed: room again
        assert _fetch(client, "few-readers", second, 0, topics).error_code == ErrorCode.NONE
        assert _fetch(client, "few-readers", second, FINAL_EPOCH).error_code == ErrorCode.NONE


def test_alter_share_group_offsets_creates_a_group_that_does_not_exist(broker):
    create_topic(broker.bootstrap, "preset", 1)
    with RawClient(broker.bootstrap) as client:
        _until(lambda: _topic_id(client, "preset"), "the topic")
        _until(lambda: client.request(FIND_COORDINATOR, 6, key_type=0, coordinator_keys=["newcomer"]).coordinators[0]
               .error_code == ErrorCode.NONE, "the group coordinator")

        def alter():
            return client.request(ALTER_SHARE_GROUP_OFFSETS, 0, group_id="newcomer", topics=[
                AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic(topic_name="preset", partitions=[
                    AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition(partition_index=0,
                                                                                         start_offset=2)])])

        # Kafka's group coordinator learns of a new topic from its own metadata image, a moment later.
        altered = _until(lambda: (r := alter()).responses[0].partitions[0].error_code
                         != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and r, "the topic known to the group coordinator")
        assert altered.error_code == ErrorCode.NONE
        assert [(p.error_code, p.error_message) for t in altered.responses for p in t.partitions] == [
            (ErrorCode.NONE, None)]
        described = client.request(SHARE_GROUP_DESCRIBE, 1, group_ids=["newcomer"]).groups[0]
        assert (described.error_code, described.group_state, described.group_epoch, described.members) == (
            ErrorCode.NONE, "Empty", 1, [])
