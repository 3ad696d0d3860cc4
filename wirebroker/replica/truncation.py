"""Where a follower truncates its log after a leader change (KIP-101, KIP-279; Kafka's
AbstractFetcherThread.getOffsetTruncationState).

The follower asks the leader (OffsetForLeaderEpoch) for the end offset of the follower's latest epoch. The answer
is the leader's (epoch, end offset) for the largest epoch it has at or below the one asked:
- no end offset (the leader knows no such epoch): keep what is committed, truncate to the high watermark;
- the same epoch the follower has: both logs agree up to the smaller of the two end offsets of that epoch;
- an older epoch the follower does not have as such: truncate to the end of the follower's own largest epoch below
  it, and ask again with the follower's new latest epoch (not done yet);
- a follower without epochs before that: the leader's end offset is safe.
Never beyond the follower's log end offset. The next fetch starts at the log end after truncation, so no divergent
tail survives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class TruncationState(NamedTuple):
    offset: int
    completed: bool  # False: truncate there, then ask the leader again


def offset_truncation_state(leader_epoch: int, leader_end_offset: int,
                            follower_end_offset_for: Callable[[int], tuple[int, int] | None],
                            log_end_offset: int, high_watermark: int) -> TruncationState:
    """`follower_end_offset_for(epoch)` is the follower's (end offset, epoch) for the largest epoch <= `epoch`."""
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        return TruncationState(min(high_watermark, log_end_offset), True)
    if leader_epoch == UNDEFINED_EPOCH:
        return TruncationState(min(leader_end_offset, log_end_offset), True)
    found = follower_end_offset_for(leader_epoch)
    if found is None:
        return TruncationState(min(leader_end_offset, log_end_offset), True)
    follower_end_offset, follower_epoch = found
    if follower_epoch != leader_epoch:
        return TruncationState(min(follower_end_offset, log_end_offset), False)
    return TruncationState(min(follower_end_offset, leader_end_offset, log_end_offset), True)
