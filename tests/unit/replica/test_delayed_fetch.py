"""A parked fetch completes when a follower's high watermark falls behind the leader's (Fetch v18, KIP-1166), on a
real partition leader."""

from __future__ import annotations

from tests.unit.replica.test_partition import append, clock, leader  # noqa: F401  (fixtures)
from wirebroker.replica.delayed import DelayedFetch, FetchPartitionStatus

READ_UNCOMMITTED = 0


def parked_fetch(partition, replica_high_watermark: int | None) -> tuple[DelayedFetch, list[bool]]:
    completed: list[bool] = []
    status = (FetchPartitionStatus(partition, partition.log_end_offset) if replica_high_watermark is None
              else FetchPartitionStatus(partition, partition.log_end_offset, replica_high_watermark))
    return DelayedFetch(60_000, 1, READ_UNCOMMITTED, [status], lambda: completed.append(True)), completed


def test_a_follower_fetch_completes_once_the_high_watermark_passes_the_followers(leader):  # noqa: F811
    append(leader)
    follower_behind, completed_behind = parked_fetch(leader, replica_high_watermark=0)
    consumer, completed_consumer = parked_fetch(leader, replica_high_watermark=None)
    assert not follower_behind.try_complete() and not consumer.try_complete()  # high watermark 0: nothing new
    leader.update_follower_fetch_state(2, 1)
    leader.update_follower_fetch_state(3, 1)
    assert leader.high_watermark == 1
    assert follower_behind.try_complete() and completed_behind == [True]
    assert not consumer.try_complete() and completed_consumer == []  # no bytes past its offset yet
