"""Which share-partitions a share group's coordinator initialises, and the record of them (KIP-932 as Kafka 4.3.1
runs it: GroupMetadataManager.maybeCreateInitializeShareGroupStateRequest, initializeShareGroupState,
uninitializeShareGroupState; the ShareGroupStatePartitionMetadata record, type 15 in `__consumer_offsets`).

- At a heartbeat, every partition of the group's subscribed topics that is neither initialised nor initialising
  (or initialising for longer than INITIALIZE_RETRY_INTERVAL_MS: its call failed or its coordinator moved) is
  written as initialising, then its state is initialised through the persister, off the group coordinator's lock
  (InitializeShareGroupState at the group epoch; start offset -1, which the share-partition's leader resolves
  with `share.auto.offset.reset` at its first fetch, or 0 for a new partition of a topic the group already has, so
  that nothing produced to it before is skipped).
- Done, the partitions are written as initialised and the group epoch is bumped: the next heartbeat assigns them
  (a share group assigns only initialised partitions, so no member fetches a share-partition without a state).
- A failed call leaves them initialising; the next heartbeat past the retry interval tries again, and so does a
  heartbeat after the group's coordinator moved (the time of a loaded initialisation is unknown).
- The admin APIs read the record: DescribeShareGroupOffsets describes the initialised partitions,
  DeleteShareGroupOffsets and DeleteGroups delete the state of the initialised (and initialising) ones,
  AlterShareGroupOffsets writes the partitions it sets as initialised.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wirebroker.coordinator.share_group import Assignment, ShareGroup

INITIALIZE_RETRY_INTERVAL_MS = 30_000  # Kafka's group.share.initialize.retry.interval.ms default
UNINITIALIZED_START_OFFSET = -1  # Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET
EARLIEST_START_OFFSET = 0  # a new partition of a topic the group has: from its beginning

TopicPartition = tuple[bytes, int]


@dataclass(frozen=True)
class InitializeShareState:
    """The persister calls of one initialisation: (topic id, partition) -> start offset, all at `state_epoch`."""
    group_id: str
    state_epoch: int
    start_offsets: dict[TopicPartition, int]


def with_partitions(assignment: Assignment, partitions: Iterable[TopicPartition]) -> Assignment:
    merged = {topic_id: set(ps) for topic_id, ps in assignment.items()}
    for topic_id, index in partitions:
        merged.setdefault(topic_id, set()).add(index)
    return {topic_id: frozenset(ps) for topic_id, ps in merged.items() if ps}


def without_partitions(assignment: Assignment, partitions: Iterable[TopicPartition]) -> Assignment:
    removed = set(partitions)
    return {topic_id: kept for topic_id, ps in assignment.items()
            if (kept := frozenset(p for p in ps if (topic_id, p) not in removed))}


def without_topics(assignment: Assignment, topic_ids: Iterable[bytes]) -> Assignment:
    removed = set(topic_ids)
    return {topic_id: ps for topic_id, ps in assignment.items() if topic_id not in removed}


def contains(assignment: Assignment, topic_id: bytes, index: int) -> bool:
    return index in assignment.get(topic_id, ())


def to_initialize(group: ShareGroup, subscribed: list[TopicPartition], now_ms: int,
                  started_ms: dict[TopicPartition, int]) -> InitializeShareState | None:
    """The subscribed partitions to initialise now (`started_ms`: when this coordinator started initialising
    each, those it never started being retried at once), or None."""
    wanted = [(topic_id, index) for topic_id, index in subscribed
              if not contains(group.initialized, topic_id, index) and (
                  not contains(group.initializing, topic_id, index)
                  or now_ms - started_ms.get((topic_id, index), -INITIALIZE_RETRY_INTERVAL_MS)
                  >= INITIALIZE_RETRY_INTERVAL_MS)]
    if not wanted:
        return None
    return InitializeShareState(group.group_id, group.group_epoch, {
        (topic_id, index): EARLIEST_START_OFFSET if topic_id in group.initialized else UNINITIALIZED_START_OFFSET
        for topic_id, index in wanted})
