"""Share-partition states initialised by the share group's coordinator (KIP-932 as Kafka 4.3.1 runs it), over the
wire with a raw client: a member's first heartbeat is answered with no partitions, its group coordinator
initialises the states of the subscribed topics' partitions (InitializeShareGroupState through the persister) and
records them in `__consumer_offsets` (ShareGroupStatePartitionMetadata), and a later heartbeat assigns them.
DescribeShareGroupOffsets lists those partitions before any fetch (start offset -1 until a leader resolves
share.auto.offset.reset, as kafka-share-groups.sh shows them), and only those; a fetch of a partition the group
never initialised is UNKNOWN_SERVER_ERROR; DeleteShareGroupOffsets and DeleteGroups delete the states the group
initialised, and the group no longer has them (a member joining again has them initialised again).

On one broker (and on Apache Kafka 4.3.1 with WIREBROKER_RELIABILITY=full), and in a three-broker ZooKeeper cluster
where the group's coordinator is killed (-9): the broker taking over loads the record and describes the same
partitions, and DeleteGroups there deletes their states at their share coordinators."""

from __future__ import annotations

import base64

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.cluster_process import ClusterProcess
from tests.integration.group_clients import create_topic
from tests.integration.raw_client import RawClient
from tests.integration.test_share_fetch_details import (
    ON_KAFKA,
    SETTINGS,
    _fetch,
    _member_id,
    _partitions,
    _topic_id,
    _until,
)
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
)
from wirebroker.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
)

FIND_COORDINATOR, GROUP_KEY, SHARE_KEY = 10, 0, 2
SHARE_GROUP_HEARTBEAT, DESCRIBE_SHARE_GROUP_OFFSETS, DELETE_SHARE_GROUP_OFFSETS = 76, 90, 92
DELETE_GROUPS, READ_SHARE_GROUP_STATE = 42, 84
UNINITIALIZED = -1


@pytest.fixture(scope="module")
def module_kafka(tmp_path_factory):
    from compat_tests.reference_kafka import ReferenceKafka

    with ReferenceKafka(tmp_path_factory.mktemp("kafka"), settings=dict(SETTINGS, **{
            "group.share.max.size": "5", "group.share.max.share.sessions": "5"})) as reference:
        yield reference


@pytest.fixture(params=["wirebroker", ON_KAFKA])
def broker(request, broker_factory):
    if request.param == "wirebroker":
        return broker_factory(**dict(SETTINGS, **{"group.share.max.size": "5", "group.share.max.share.sessions": "5"}))
    return request.getfixturevalue("module_kafka")


def _heartbeat(client: RawClient, group: str, member: str, epoch: int, topics: list[str] | None = None):
    response = client.request(SHARE_GROUP_HEARTBEAT, 1, group_id=group, member_id=member, member_epoch=epoch,
                              subscribed_topic_names=topics)
    assert response.error_code == ErrorCode.NONE, response
    return response


def _described(client: RawClient, group: str, topics: dict[str, list[int]] | None = None
               ) -> tuple[int, dict[tuple[str, int], int]]:
    """(group error, (topic, partition) -> start offset) as DescribeShareGroupOffsets answers."""
    asked = None if topics is None else [
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic(topic_name=name, partitions=indexes)
        for name, indexes in topics.items()]
    answered = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 1, groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=asked)]).groups[0]
    return answered.error_code, {(t.topic_name, p.partition_index): p.start_offset
                                 for t in answered.topics for p in t.partitions}


def _read_state(client: RawClient, group: str, topic_id: bytes, partition: int) -> tuple[int, int | None]:
    """(error, start offset) of the share-partition's state as its share coordinator reads it
    (ReadShareGroupState: INVALID_REQUEST when it has none)."""
    result = client.request(READ_SHARE_GROUP_STATE, 0, group_id=group, topics=[
        ReadShareGroupStateRequest.ReadStateData(topic_id=topic_id, partitions=[
            ReadShareGroupStateRequest.PartitionData(partition=partition, leader_epoch=0)])]).results[0].partitions[0]
    return result.error_code, result.start_offset if result.error_code == ErrorCode.NONE else None


def _assigned(response) -> set[int]:
    return {p for tp in (response.assignment.topic_partitions if response.assignment else []) for p in tp.partitions}


def _until_assigned(client: RawClient, group: str, member: str, epoch: int) -> tuple[int, set[int]]:
    """Heartbeats at the member's epoch until one assigns it partitions: (its epoch then, the partitions)."""
    latest = [epoch]

    def assigned() -> set[int]:
        response = _heartbeat(client, group, member, latest[-1])
        latest.append(response.member_epoch)
        return _assigned(response)

    partitions = _until(assigned, "the initialised partitions assigned")
    return latest[-1], partitions


def test_a_heartbeat_initialises_the_share_partitions_that_describe_lists_and_delete_groups_deletes(broker):
    group, member = "initialised-by-heartbeat", _member_id()
    create_topic(broker.bootstrap, "init-subscribed", 2)
    create_topic(broker.bootstrap, "init-other", 1)
    with RawClient(broker.bootstrap) as client:
        subscribed_id = _until(lambda: _topic_id(client, "init-subscribed"), "the topic")
        other_id = _until(lambda: _topic_id(client, "init-other"), "the other topic")
        _until(lambda: client.request(FIND_COORDINATOR, 6, key_type=GROUP_KEY, coordinator_keys=[group])
               .coordinators[0].error_code == ErrorCode.NONE, "the group coordinator")
        joined = _until(lambda: client.request(SHARE_GROUP_HEARTBEAT, 1, group_id=group, member_id=member,
                                               member_epoch=0, subscribed_topic_names=["init-subscribed"]), "joined")
        assert joined.error_code == ErrorCode.NONE and _assigned(joined) == set()  # nothing initialised yet

        # Before any fetch: the two partitions are initialised, at the start offset a leader resolves later.
        expected = {("init-subscribed", 0): UNINITIALIZED, ("init-subscribed", 1): UNINITIALIZED}
        assert _until(lambda: _described(client, group) == (ErrorCode.NONE, expected) and expected,
                      "the subscribed partitions initialised")
        # Named, a topic the group never initialised is answered -1, as one of its own not yet started.
        assert _described(client, group, {"init-other": [0]}) == (ErrorCode.NONE, {("init-other", 0): UNINITIALIZED})

        # A later heartbeat assigns them (the group epoch moved when they were initialised).
        epoch, assigned = _until_assigned(client, group, member, joined.member_epoch)
        assert assigned == {0, 1} and epoch > joined.member_epoch

        # A fetch of a partition the group never initialised: UNKNOWN_SERVER_ERROR (the share coordinator refuses
        # to read its state), answered once the leader has tried (Kafka: in a later answer of the session).
        session = 0

        def stray_error() -> int | None:
            nonlocal session
            answer = _fetch(client, group, member, session, _partitions(other_id, 0) if session == 0 else None,
                            max_wait_ms=100)
            session += 1
            return next((p.error_code for t in answer.responses for p in t.partitions if p.error_code), None)

        assert _until(stray_error, "the stray fetch refused") == ErrorCode.UNKNOWN_SERVER_ERROR
        _fetch(client, group, member, -1)  # close the share session
        _heartbeat(client, group, member, -1)  # leave
        assert _read_state(client, group, subscribed_id, 0)[0] == ErrorCode.NONE

        # DeleteShareGroupOffsets deletes the topic's states, and the group no longer has them: a member joining
        # again has them initialised again.
        deleted = _until(lambda: (r := client.request(DELETE_SHARE_GROUP_OFFSETS, 0, group_id=group, topics=[
            DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic(topic_name="init-subscribed")])
        ).error_code != ErrorCode.NON_EMPTY_GROUP and r, "the group empty")
        assert (deleted.error_code, [t.error_code for t in deleted.responses]) == (ErrorCode.NONE, [ErrorCode.NONE])
        assert _described(client, group) == (ErrorCode.NONE, {})
        assert {_read_state(client, group, subscribed_id, p) for p in (0, 1)} == {(ErrorCode.INVALID_REQUEST, None)}
        again = _heartbeat(client, group, member, 0, ["init-subscribed"])
        assert _until(lambda: _described(client, group) == (ErrorCode.NONE, expected) and expected,
                      "initialised again")
        _until_assigned(client, group, member, again.member_epoch)
        _heartbeat(client, group, member, -1)

        assert _until(lambda: (r := client.request(DELETE_GROUPS, 2, groups_names=[group]).results[0].error_code)
                      != ErrorCode.NON_EMPTY_GROUP and r == ErrorCode.NONE, "the group deleted") is True
        assert {_read_state(client, group, subscribed_id, p) for p in (0, 1)} == {(ErrorCode.INVALID_REQUEST, None)}


# ---- a three-broker cluster: the record survives the group coordinator's kill ---------------------------------

CLUSTER = {"offsets.topic.num.partitions": "3", "share.coordinator.state.topic.num.partitions": "3"}


def _coordinator(cluster: ClusterProcess, key: str, key_type: int) -> int | None:
    for node_id in cluster.alive():
        try:
            with RawClient(cluster.broker(node_id).bootstrap) as client:
                client.sock.settimeout(10)
                found = client.request(FIND_COORDINATOR, 6, key_type=key_type, coordinator_keys=[key]).coordinators[0]
        except OSError:
            continue
        if found.error_code == ErrorCode.NONE and found.node_id in cluster.alive():
            return found.node_id
    return None


def _state(cluster: ClusterProcess, group: str, topic_id: bytes, partition: int) -> tuple[int, int] | None:
    """(error, start offset) of the share-partition's state as its share coordinator reads it
    (ReadShareGroupState: INVALID_REQUEST when it has none)."""
    key = f"{group}:{base64.urlsafe_b64encode(topic_id).rstrip(b'=').decode()}:{partition}"
    node = _coordinator(cluster, key, SHARE_KEY)
    if node is None:
        return None
    with RawClient(cluster.broker(node).bootstrap) as client:
        return _read_state(client, group, topic_id, partition)


def test_the_initialised_partitions_survive_a_kill_of_the_group_coordinator(tmp_path):
    group, member, topic = "initialised-in-a-cluster", _member_id(), "spread"
    with ClusterProcess(tmp_path, brokers=3, overrides=CLUSTER) as cluster:
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        admin.create_topics([NewTopic(topic, 2, 3)])[topic].result(30)
        topic_id = cluster.wait_until(lambda: (t := cluster.metadata([topic]).topics[0].topic_id) and any(t) and t,
                                      30, "the topic id")
        first = cluster.wait_until(lambda: _coordinator(cluster, group, GROUP_KEY), 60, "the group coordinator")
        with RawClient(cluster.broker(first).bootstrap) as client:
            joined = _heartbeat(client, group, member, 0, [topic])
            expected = {(topic, 0): UNINITIALIZED, (topic, 1): UNINITIALIZED}
            cluster.wait_until(lambda: _described(client, group) == (ErrorCode.NONE, expected), 30,
                               "the partitions initialised through the remote persister")
        assert {_state(cluster, group, topic_id, p) for p in range(2)} == {(ErrorCode.NONE, UNINITIALIZED)}

        cluster.kill(first)
        second = cluster.wait_until(lambda: (n := _coordinator(cluster, group, GROUP_KEY)) not in (None, first) and n,
                                    60, "another group coordinator")
        with RawClient(cluster.broker(second).bootstrap) as client:
            # Loaded from the record: described as before, nothing initialised again; the member's next heartbeat
            # is assigned both.
            assert cluster.wait_until(lambda: (d := _described(client, group))[0] == ErrorCode.NONE and d, 30,
                                      "the group loaded") == (ErrorCode.NONE, expected)
            assert _until_assigned(client, group, member, joined.member_epoch)[1] == {0, 1}
            _heartbeat(client, group, member, -1)
            assert client.request(DELETE_GROUPS, 2, groups_names=[group]).results[0].error_code == ErrorCode.NONE
        # The states the group initialised are gone from their share coordinators.
        assert cluster.wait_until(lambda: {_state(cluster, group, topic_id, p) for p in range(2)} == {
            (ErrorCode.INVALID_REQUEST, None)} or None, 30, "the states deleted")
