"""The metadata cache a controller fills with UpdateMetadata (Kafka's ZkMetadataCache)."""

from __future__ import annotations

from wirebroker.cluster.cluster_view import NO_LEADER
from wirebroker.cluster.metadata_cache import (
    LEADER_DURING_DELETE,
    LiveBroker,
    MetadataCache,
    PartitionMetadata,
)

TOPIC_ID = bytes(range(16))


def state(index: int, leader: int, isr=(1, 2), epoch: int = 0) -> PartitionMetadata:
    return PartitionMetadata("t", TOPIC_ID, index, leader, epoch, isr, 0, (1, 2, 3))


def brokers(*ids: int) -> list[LiveBroker]:
    return [LiveBroker(i, {"PLAINTEXT": ("h", 9000 + i), "INTERNAL": ("h", 9100 + i)}, f"rack{i}") for i in ids]


def test_brokers_are_replaced_and_partitions_merged():
    cache = MetadataCache(1)
    cache.update(2, brokers(1, 2, 3), [state(0, 1), state(1, 2)])
    cache.update(3, brokers(1, 2), [state(1, 3, (3,), epoch=1)])
    assert cache.controller_id == 3 and cache.alive_broker_ids() == [1, 2]
    assert cache.endpoint(2, "INTERNAL") == ("h", 9102) and cache.endpoint(3, "INTERNAL") is None
    topic = cache.topic("t")
    assert topic.topic_id == TOPIC_ID and cache.topic_by_id(TOPIC_ID) == topic
    first, second = topic.partitions
    assert (first.leader, first.isr) == (1, (1, 2))
    assert (second.leader, second.leader_epoch) == (NO_LEADER, 1)  # broker 3 is not alive
    assert [(b.node_id, b.port, b.rack) for b in cache.alive_brokers("PLAINTEXT")] == [(1, 9001, "rack1"),
                                                                                       (2, 9002, "rack2")]
    assert cache.alive_brokers("SSL") == []


def test_leader_during_delete_removes_partitions_and_then_the_topic():
    cache = MetadataCache(1)
    cache.update(1, brokers(1), [state(0, 1), state(1, 1)])
    assert cache.update(1, brokers(1), [state(0, LEADER_DURING_DELETE)]) == [("t", 0)]
    assert [p.index for p in cache.topic("t").partitions] == [1]
    cache.update(1, brokers(1), [state(1, LEADER_DURING_DELETE)])
    assert cache.topic("t") is None and cache.topic_names() == [] and cache.topic_by_id(TOPIC_ID) is None


def test_callbacks_wait_for_the_first_update_metadata_and_run_once():
    cache = MetadataCache(1)
    calls = []
    assert cache.when_initialized(lambda: calls.append(cache.controller_id)) is False
    assert calls == []
    cache.update(2, brokers(1, 2), [])
    cache.update(3, brokers(1, 2), [])
    assert calls == [2]  # after the first update was applied, and only then
    assert cache.when_initialized(lambda: calls.append("late")) is True
    assert calls == [2]  # an initialized cache keeps no callback: the caller answers at once
