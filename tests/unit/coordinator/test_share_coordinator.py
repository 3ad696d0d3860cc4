"""The share coordinator's state in __share_group_state: snapshots written and read back, updates merged (as
Kafka's ShareUpdate records are on load), state epochs fenced, deletes as tombstones."""

from __future__ import annotations

import struct

import pytest

from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.share_coordinator import ShareCoordinator, coordinator_key
from wirebroker.coordinator.share_partition import RecordState, StateBatch
from wirebroker.protocol.errors import (
    FencedLeaderEpochError,
    FencedStateEpochError,
    NotCoordinatorError,
)
from wirebroker.protocol.messages.share_update_key import ShareUpdateKey
from wirebroker.protocol.messages.share_update_value import ShareUpdateValue

TOPIC_ID = bytes(range(16))
KEY = ("g", TOPIC_ID, 0)
AVAILABLE, ACKNOWLEDGED = RecordState.AVAILABLE, RecordState.ACKNOWLEDGED


class MemoryTopic:
    """__share_group_state in memory: (key, value) records per partition."""

    def __init__(self, num_partitions: int = 3) -> None:
        self.num_partitions = num_partitions
        self.records: list[list[tuple[bytes, bytes | None]]] = [[] for _ in range(num_partitions)]

    def exists(self) -> bool:
        return True

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.num_partitions)

    def append_records(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> None:
        self.records[partition].extend(records)

    def read_all(self, partition: int):
        return iter(self.records[partition])


def test_the_key_and_its_partition_are_kafka_s():
    assert coordinator_key(KEY) == "g:AAECAwQFBgcICQoLDA0ODw:0"  # the topic id in Kafka's base64 form


def test_snapshots_are_read_back_after_a_restart():
    topic = MemoryTopic()
    first = ShareCoordinator(topic)
    first.write(KEY, 5, [StateBatch(5, 7, AVAILABLE, 1), StateBatch(8, 8, ACKNOWLEDGED, 2)], 1)
    first.write(KEY, 6, [StateBatch(6, 7, AVAILABLE, 1), StateBatch(8, 8, ACKNOWLEDGED, 2)], 1)
    assert sum(map(len, topic.records)) == 2 and len(topic.records[topic.partition_for(coordinator_key(KEY))]) == 2
    state = ShareCoordinator(topic).read(KEY)
    assert (state.start_offset, state.snapshot_epoch, state.delivery_complete_count) == (6, 1, 1)
    assert state.batches == (StateBatch(6, 7, AVAILABLE, 1), StateBatch(8, 8, ACKNOWLEDGED, 2))


def test_a_kafka_share_update_is_merged_on_load():
    topic = MemoryTopic()
    ShareCoordinator(topic).write(KEY, 0, [StateBatch(0, 9, AVAILABLE, 1)])
    update = ShareUpdateValue(snapshot_epoch=0, leader_epoch=-1, start_offset=2, state_batches=[
        ShareUpdateValue.StateBatch(first_offset=3, last_offset=4, delivery_state=ACKNOWLEDGED, delivery_count=1)])
    topic.append_records(topic.partition_for(coordinator_key(KEY)), [(
        struct.pack(">h", 1) + ShareUpdateKey(group_id="g", topic_id=TOPIC_ID, partition=0).encode(0),
        struct.pack(">h", 0) + update.encode(0))])
    state = ShareCoordinator(topic).read(KEY)
    assert state.start_offset == 2
    assert state.batches == (StateBatch(2, 2, AVAILABLE, 1), StateBatch(3, 4, ACKNOWLEDGED, 1),
                             StateBatch(5, 9, AVAILABLE, 1))


def test_writes_merge_and_stale_state_epochs_are_fenced():
    coordinator = ShareCoordinator(MemoryTopic())
    coordinator.initialize(KEY, 2, 10)
    coordinator.update(KEY, 2, -1, [StateBatch(10, 12, AVAILABLE, 1)])
    coordinator.update(KEY, 2, 11, [StateBatch(12, 12, ACKNOWLEDGED, 1)])
    assert coordinator.read(KEY).batches == (StateBatch(11, 11, AVAILABLE, 1), StateBatch(12, 12, ACKNOWLEDGED, 1))
    with pytest.raises(FencedStateEpochError):
        coordinator.update(KEY, 1, 11, [])
    with pytest.raises(FencedStateEpochError):
        coordinator.initialize(KEY, 1, 0)


def test_a_deleted_state_stays_deleted_after_a_restart():
    topic = MemoryTopic()
    coordinator = ShareCoordinator(topic)
    coordinator.write(KEY, 3, [])
    coordinator.delete([KEY])
    assert coordinator.read(KEY) is None and coordinator.summaries("g", [KEY[1:]]) == {}
    assert [value for _, value in topic.records[topic.partition_for(coordinator_key(KEY))]][-2:] == [None, None]
    assert ShareCoordinator(topic).read(KEY) is None


def test_in_a_cluster_only_the_partitions_led_here_are_served_and_a_lost_one_is_dropped():
    topic = MemoryTopic()
    ShareCoordinator(topic).write(KEY, 4, [StateBatch(4, 5, AVAILABLE, 1)])
    partition = topic.partition_for(coordinator_key(KEY))
    coordinator = ShareCoordinator(topic, follow_leadership=True)
    coordinator._owned.load_in_background = False  # the loader thread's work, done inline
    with pytest.raises(NotCoordinatorError):
        coordinator.read(KEY)
    coordinator.on_election(partition, 3)
    assert coordinator.read(KEY).start_offset == 4  # loaded from the log when won
    coordinator.on_resignation(partition, 2)  # an older resignation than the election: ignored
    assert coordinator.read(KEY).start_offset == 4
    coordinator.on_resignation(partition, 3)
    with pytest.raises(NotCoordinatorError):
        coordinator.write(KEY, 6, [])
    coordinator.on_election(partition, 4)
    assert coordinator.read(KEY).start_offset == 4



def test_a_newer_leader_s_read_fences_the_older_leader_s_writes():
    topic = MemoryTopic()
    coordinator = ShareCoordinator(topic)
    coordinator.initialize(KEY, 0, 0)
    coordinator.update(KEY, 0, -1, [StateBatch(0, 1, AVAILABLE, 1)], leader_epoch=3)
    assert coordinator.read(KEY, 4).leader_epoch == 4  # the new leader's read records its epoch, durably
    with pytest.raises(FencedLeaderEpochError):
        coordinator.update(KEY, 0, 2, [], leader_epoch=3)  # the old leader, still writing
    coordinator.update(KEY, 0, 2, [], leader_epoch=4)
    state = ShareCoordinator(topic).read(KEY)
    assert (state.start_offset, state.leader_epoch) == (2, 4)
