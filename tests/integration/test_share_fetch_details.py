"""Three share-group details over the wire, as Kafka 4.3.1 behaves: a ShareFetch answer lists only the partitions
with records or errors (and once more a partition whose last answer was an error); a broker holds at most
`group.share.max.share.sessions` share sessions, a new one past that being SHARE_SESSION_LIMIT_REACHED, with no
eviction (a member's own new session replaces its old one; a closed session frees its place); and
AlterShareGroupOffsets on a group that does not exist creates an empty share group."""

from __future__ import annotations

from tests.integration.group_clients import create_topic, produce
from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.metadata import MetadataRequest
from wirebroker.protocol.messages.share_fetch import ShareFetchRequest

SHARE_FETCH, ALTER_SHARE_GROUP_OFFSETS, SHARE_GROUP_DESCRIBE, METADATA = 78, 91, 77, 3
FINAL_EPOCH = -1


def _topic_id(client: RawClient, topic: str) -> bytes:
    return client.request(METADATA, 12, topics=[MetadataRequest.MetadataRequestTopic(name=topic)]).topics[0].topic_id


def _fetch(client: RawClient, member: str, epoch: int, topics: list[ShareFetchRequest.FetchTopic] | None = None,
           max_wait_ms: int = 0):
    return client.request(SHARE_FETCH, 1, group_id="g", member_id=member, share_session_epoch=epoch,
                          max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20, max_records=100, batch_size=100,
                          topics=topics or [], forgotten_topics_data=[])


def _partitions(topic_id: bytes, *indexes: int) -> list[ShareFetchRequest.FetchTopic]:
    return [ShareFetchRequest.FetchTopic(topic_id=topic_id, partitions=[
        ShareFetchRequest.FetchPartition(partition_index=i, acknowledgement_batches=[]) for i in indexes])]


def _listed(response) -> list[tuple[int, int]]:
    """(partition, records acquired) of each partition the answer lists."""
    return [(p.partition_index, sum(a.last_offset - a.first_offset + 1 for a in p.acquired_records))
            for t in response.responses for p in t.partitions]


def test_a_share_fetch_answer_lists_only_partitions_with_records_or_errors(broker_factory):
    broker = broker_factory(**{"offsets.topic.num.partitions": "1",
                               "share.coordinator.state.topic.num.partitions": "1"})
    create_topic(broker.bootstrap, "sparse", 2)
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic_id(client, "sparse")
        opened = _fetch(client, "m", 0, _partitions(topic_id, 0, 1))  # both share-partitions start at latest: 0
        assert opened.error_code == ErrorCode.NONE and _listed(opened) == []
        produce(broker.bootstrap, "sparse", 3, 1)  # records in partition 0 only
        fetched = _fetch(client, "m", 1, max_wait_ms=2000)
        assert _listed(fetched) == [(0, 3)]
        assert _listed(_fetch(client, "m", 2)) == []  # nothing new anywhere: nothing listed
        unknown = _fetch(client, "m", 3, _partitions(bytes(range(16)), 0))  # an unknown topic id: an error
        assert [(p.partition_index, p.error_code) for t in unknown.responses for p in t.partitions] == [
            (0, ErrorCode.UNKNOWN_TOPIC_ID)]


def test_share_sessions_past_the_limit_are_refused_and_none_is_evicted(broker_factory):
    # Kafka refuses a session limit under the group size limit (group.share.max.size): both are 1 here
    broker = broker_factory(**{"group.share.max.share.sessions": "1", "group.share.max.size": "1",
                               "offsets.topic.num.partitions": "1", "share.coordinator.state.topic.num.partitions": "1"})
    create_topic(broker.bootstrap, "few", 1)
    with RawClient(broker.bootstrap) as client:
        topics = _partitions(_topic_id(client, "few"), 0)
        assert _fetch(client, "first", 0, topics).error_code == ErrorCode.NONE
        refused = _fetch(client, "second", 0, topics)
        assert refused.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
        assert _fetch(client, "first", 0, topics).error_code == ErrorCode.NONE  # its own session is replaced
        assert _fetch(client, "first", 1).error_code == ErrorCode.NONE  # the first member's session lives on
        assert _fetch(client, "first", FINAL_EPOCH).error_code == ErrorCode.NONE  # closed: its place is free
        assert _fetch(client, "second", 0, topics).error_code == ErrorCode.NONE


def test_alter_share_group_offsets_creates_a_group_that_does_not_exist(broker_factory):
    broker = broker_factory(**{"offsets.topic.num.partitions": "1",
                               "share.coordinator.state.topic.num.partitions": "1"})
    create_topic(broker.bootstrap, "preset", 1)
    produce(broker.bootstrap, "preset", 5, 1)
    with RawClient(broker.bootstrap) as client:
        altered = client.request(ALTER_SHARE_GROUP_OFFSETS, 0, group_id="newcomer", topics=[
            AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic(topic_name="preset", partitions=[
                AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition(partition_index=0,
                                                                                     start_offset=2)])])
        assert altered.error_code == ErrorCode.NONE
        assert [p.error_code for t in altered.responses for p in t.partitions] == [ErrorCode.NONE]
        described = client.request(SHARE_GROUP_DESCRIBE, 1, group_ids=["newcomer"]).groups[0]
        # as Kafka 4.3.1 describes a group its AlterShareGroupOffsets created
        assert (described.error_code, described.group_state, described.group_epoch, described.members) == (
            ErrorCode.NONE, "Empty", 1, [])
        fetched = client.request(SHARE_FETCH, 1, group_id="newcomer", member_id="m", share_session_epoch=0,
                                 max_wait_ms=2000, min_bytes=1, max_bytes=1 << 20, max_records=100, batch_size=100,
                                 topics=_partitions(_topic_id(client, "preset"), 0), forgotten_topics_data=[])
        acquired = [(a.first_offset, a.last_offset) for t in fetched.responses for p in t.partitions
                    for a in p.acquired_records]
        assert acquired and acquired[0][0] == 2  # the share-partition starts where the offsets were set
