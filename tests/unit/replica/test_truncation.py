"""Where a follower truncates after a leader change (KIP-101/279), and a follower's log after it: the leader's."""

from __future__ import annotations

from tests.unit.log.helpers import batch, small_config
from wirebroker.log.log import Log
from wirebroker.protocol.records import read_header
from wirebroker.replica.truncation import TruncationState, offset_truncation_state


def follower_epochs(entries: dict[int, int], log_end_offset: int):
    """A follower's end_offset_for_epoch: epoch -> start offset, in order."""
    def end_offset_for(epoch: int) -> tuple[int, int] | None:
        floor = [e for e in sorted(entries) if e <= epoch]
        if not floor:
            return None
        later = [entries[e] for e in sorted(entries) if e > floor[-1]]
        return (later[0] if later else log_end_offset), floor[-1]
    return end_offset_for


def test_the_same_epoch_truncates_to_the_smaller_end():
    assert offset_truncation_state(3, 120, follower_epochs({1: 0, 3: 100}, 150), 150, 90) == TruncationState(120, True)
    assert offset_truncation_state(3, 200, follower_epochs({1: 0, 3: 100}, 150), 150, 90) == TruncationState(150, True)


def test_an_epoch_the_follower_lacks_truncates_to_its_own_older_epoch_and_asks_again():
    # The follower has epochs 1 and 3; the leader never had 3, its answer is epoch 2 ending at 80.
    state = offset_truncation_state(2, 80, follower_epochs({1: 0, 3: 60}, 150), 150, 40)
    assert state == TruncationState(60, False)


def test_no_answer_keeps_what_is_committed():
    assert offset_truncation_state(-1, -1, follower_epochs({1: 0}, 150), 150, 90) == TruncationState(90, True)
    assert offset_truncation_state(2, 70, follower_epochs({}, 150), 150, 90) == TruncationState(70, True)


def test_append_as_follower_keeps_the_leaders_bytes_and_epochs(tmp_path):
    leader = Log.open(str(tmp_path / "leader" / "t-0"), small_config())
    follower = Log.open(str(tmp_path / "follower" / "t-0"), small_config())
    try:
        for epoch in (0, 0, 2, 2, 5):
            leader.append_as_leader(batch(n=2), leader_epoch=epoch)
        data = _file_bytes(leader)
        assert follower.append_as_follower(data[:-10]) is not None  # a partial last batch waits
        assert follower.log_end_offset == 8
        follower.append_as_follower(data[_size_of_first_batches(data, 4):])
        assert follower.log_end_offset == leader.log_end_offset == 10
        assert _file_bytes(follower) == _file_bytes(leader)
        assert follower.leader_epoch_cache.epoch_entries() == leader.leader_epoch_cache.epoch_entries()
        assert follower.end_offset_for_epoch(2) == (8, 2)
        follower.truncate_to(4)
        assert follower.latest_epoch == 0 and follower.log_end_offset == 4
    finally:
        leader.close()
        follower.close()


def _file_bytes(log_: Log) -> bytes:
    return b"".join(segment.log.read(0, segment.size) for segment in log_.segments)


def _size_of_first_batches(data: bytes, count: int) -> int:
    position = 0
    for _ in range(count):
        position += read_header(data, position).size
    return position
