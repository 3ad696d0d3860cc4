"""The topic purgatory's delayed operation (apis/delayed_topic_change.py) against a real metadata cache and purgatory:
creations complete once every partition has a leader, deletions once the topic is gone, and the rest expire with
the topics not done."""

from __future__ import annotations

import queue

import pytest

from wirebroker.apis.delayed_topic_change import DELETED, DelayedTopicChange, TopicChange
from wirebroker.cluster.metadata_cache import LEADER_DURING_DELETE, MetadataCache, PartitionMetadata
from wirebroker.replica.purgatory import DelayedOperationPurgatory

TOPIC_ID = bytes(range(16))
LONG_MS = 60_000


@pytest.fixture
def purgatory():
    topics = DelayedOperationPurgatory("topic")
    yield topics
    topics.shutdown()


def state(topic: str, index: int, leader: int) -> PartitionMetadata:
    return PartitionMetadata(topic, TOPIC_ID, index, leader, 0, (1, 2), 0, (1, 2))


def show(cache: MetadataCache, purgatory: DelayedOperationPurgatory, *states: PartitionMetadata) -> None:
    """What apis/update_metadata.py does: update the cache, then check the topics the update names."""
    cache.update(1, [], states)
    for topic in {s.topic for s in states}:
        purgatory.check_and_complete(topic)


def park(purgatory: DelayedOperationPurgatory, cache: MetadataCache, delay_ms: int,
         *changes: TopicChange) -> queue.Queue:
    answers: queue.Queue = queue.Queue()
    operation = DelayedTopicChange(delay_ms, cache, list(changes), answers.put)
    purgatory.try_complete_else_watch(operation, {c.topic for c in changes})
    return answers


def test_a_creation_completes_when_every_partition_has_a_leader(purgatory):
    cache = MetadataCache(1)
    answers = park(purgatory, cache, LONG_MS, TopicChange("orders", 2), TopicChange("audit", 1))
    show(cache, purgatory, state("orders", 0, 1), state("audit", 0, 2))
    show(cache, purgatory, state("orders", 1, -1))  # known, but no leader elected yet
    assert answers.empty() and purgatory.watched() == 1
    show(cache, purgatory, state("orders", 1, 3))
    assert answers.get(timeout=1) == set()
    assert purgatory.watched() == 0


def test_a_change_already_in_the_cache_is_answered_at_once(purgatory):
    cache = MetadataCache(1)
    cache.update(1, [], [state("orders", 0, 1)])
    assert park(purgatory, cache, LONG_MS, TopicChange("orders", 1)).get_nowait() == set()
    assert park(purgatory, cache, LONG_MS, TopicChange("gone", DELETED)).get_nowait() == set()
    assert purgatory.watched() == 0


def test_added_partitions_complete_when_the_new_ones_have_leaders(purgatory):
    cache = MetadataCache(1)
    cache.update(1, [], [state("orders", 0, 1)])
    answers = park(purgatory, cache, LONG_MS, TopicChange("orders", 3))
    show(cache, purgatory, state("orders", 1, 2))
    assert answers.empty()
    show(cache, purgatory, state("orders", 2, 3))
    assert answers.get(timeout=1) == set()


def test_a_deletion_completes_when_the_topic_is_gone(purgatory):
    cache = MetadataCache(1)
    cache.update(1, [], [state("orders", 0, 1), state("orders", 1, 2)])
    answers = park(purgatory, cache, LONG_MS, TopicChange("orders", DELETED))
    show(cache, purgatory, state("orders", 0, LEADER_DURING_DELETE))
    assert answers.empty()
    show(cache, purgatory, state("orders", 1, LEADER_DURING_DELETE))
    assert answers.get(timeout=1) == set()


def test_expiry_names_the_topics_not_done(purgatory, caplog):
    cache = MetadataCache(1)
    answers = park(purgatory, cache, 100, TopicChange("orders", 1), TopicChange("audit", 1))
    show(cache, purgatory, state("audit", 0, 2))
    assert answers.get(timeout=5) == {"orders"}
    assert purgatory.watched() == 0
    assert "orders" in caplog.text and "REQUEST_TIMED_OUT" in caplog.text
    show(cache, purgatory, state("orders", 0, 1))  # late: the operation answered once, and no more
    assert answers.empty()
