"""Group APIs at the wire level, on our own codecs: exact error codes and version-specific shapes."""

from __future__ import annotations

from tests.integration.raw_client import RawClient
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.join_group import JoinGroupRequest
from wirebroker.protocol.messages.leave_group import LeaveGroupRequest
from wirebroker.protocol.messages.offset_commit import OffsetCommitRequest
from wirebroker.protocol.messages.offset_fetch import OffsetFetchRequest

FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, JOIN_GROUP, LEAVE_GROUP = 10, 8, 9, 11, 13
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE, CREATE_TOPICS = 15, 16, 42, 47, 19


def create_topic(client: RawClient, name: str, partitions: int) -> None:
    from wirebroker.protocol.messages.create_topics import CreateTopicsRequest
    topic = CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)
    assert client.request(CREATE_TOPICS, 7, topics=[topic], timeout_ms=10_000).topics[0].error_code == 0


def commit(client: RawClient, group: str, topic: str, offsets: dict[int, int], version: int = 8):
    return client.request(OFFSET_COMMIT, version, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                          topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[
                              OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=p, committed_offset=o)
                              for p, o in offsets.items()])])


def test_find_coordinator_single_and_batched(broker):
    with RawClient(broker.bootstrap) as client:
        single = client.request(FIND_COORDINATOR, 3, key="g", key_type=0)
        assert (single.error_code, single.node_id, single.port) == (0, 0, broker.port)
        batched = client.request(FIND_COORDINATOR, 4, key_type=0, coordinator_keys=["a", "b"])
        assert [(c.key, c.error_code, c.port) for c in batched.coordinators] == [("a", 0, broker.port),
                                                                                  ("b", 0, broker.port)]
        bad = client.request(FIND_COORDINATOR, 4, key_type=7, coordinator_keys=["a"])
        assert bad.coordinators[0].error_code == ErrorCode.INVALID_REQUEST


def test_join_requires_a_member_id_from_v4_and_leave_is_batched(broker):
    protocols = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")]
    join = {"group_id": "jg", "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000,
            "protocol_type": "consumer", "protocols": protocols}
    with RawClient(broker.bootstrap) as client:
        first = client.request(JOIN_GROUP, 4, member_id="", **join)
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id.startswith("raw-test-client-")
        joined = client.request(JOIN_GROUP, 4, member_id=first.member_id, **join)
        assert (joined.error_code, joined.generation_id, joined.leader) == (0, 1, first.member_id)
        leave = client.request(LEAVE_GROUP, 3, group_id="jg", members=[
            LeaveGroupRequest.MemberIdentity(member_id=first.member_id),
            LeaveGroupRequest.MemberIdentity(member_id="ghost")])
        assert [m.error_code for m in leave.members] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
        described = client.request(DESCRIBE_GROUPS, 5, groups=["jg", "nobody"]).groups
        assert [(g.group_state, g.protocol_type) for g in described] == [("Empty", "consumer"), ("Dead", "")]
        old = client.request(LEAVE_GROUP, 1, group_id="jg", member_id="ghost")
        assert old.error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_offsets_of_several_groups_list_filter_and_delete(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "ot", 2)
        assert [p.error_code for p in commit(client, "ga", "ot", {0: 5, 1: 6}).topics[0].partitions] == [0, 0]
        commit(client, "gb", "ot", {1: 9})
        unknown = commit(client, "gb", "missing", {0: 1})
        assert unknown.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        all_of_ga = OffsetFetchRequest.OffsetFetchRequestGroup(group_id="ga")
        all_of_ga.topics = None  # null: every partition the group committed
        fetched = client.request(OFFSET_FETCH, 8, groups=[
            all_of_ga,
            OffsetFetchRequest.OffsetFetchRequestGroup(group_id="gb", topics=[
                OffsetFetchRequest.OffsetFetchRequestTopics(name="ot", partition_indexes=[0, 1])])])
        assert [[(p.partition_index, p.committed_offset) for t in g.topics for p in t.partitions]
                for g in fetched.groups] == [[(0, 5), (1, 6)], [(0, -1), (1, 9)]]
        listed = client.request(LIST_GROUPS, 4, states_filter=["empty"]).groups
        assert sorted(g.group_id for g in listed) == ["ga", "gb"]
        assert client.request(LIST_GROUPS, 4, states_filter=["Stable"]).groups == []
        deleted = client.request(OFFSET_DELETE, 0, group_id="ga", topics=[
            _offset_delete_topic("ot", [0])])
        assert deleted.error_code == 0 and deleted.topics[0].partitions[0].error_code == 0
        results = client.request(DELETE_GROUPS, 2, groups_names=["gb", "nobody"]).results
        assert [(r.group_id, r.error_code) for r in results] == [("gb", 0), ("nobody", ErrorCode.GROUP_ID_NOT_FOUND)]
        assert client.request(OFFSET_FETCH, 7, group_id="ga").topics == []  # an empty list names no topic
        remaining = client.request(OFFSET_FETCH, 8, groups=[all_of_ga]).groups[0]
        assert [(p.partition_index, p.committed_offset) for t in remaining.topics for p in t.partitions] == [(1, 6)]


def _offset_delete_topic(name: str, partitions: list[int]):
    from wirebroker.protocol.messages.offset_delete import OffsetDeleteRequest
    return OffsetDeleteRequest.OffsetDeleteRequestTopic(name=name, partitions=[
        OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=p) for p in partitions])
