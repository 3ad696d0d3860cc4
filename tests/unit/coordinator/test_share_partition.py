"""The share-partition state machine (KIP-932): acquisition, acknowledgement, release, locks, the delivery count
limit, the start offset, and what is persisted."""

from __future__ import annotations

import pytest

from wirebroker.coordinator.share_partition import (
    AcknowledgeType,
    AcquiredRecords,
    RecordState,
    SharePartition,
    StateBatch,
)
from wirebroker.protocol.errors import InvalidRecordStateError, InvalidRequestError

ACCEPT, RELEASE, REJECT, GAP = (int(t) for t in (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE,
                                                  AcknowledgeType.REJECT, AcknowledgeType.GAP))


def partition(start: int = 0, limit: int = 3, locks: int = 100) -> SharePartition:
    return SharePartition(start, limit, locks)


def test_batches_are_acquired_once_and_accepted_records_move_the_start_offset():
    sp = partition()
    acquired, _ = sp.acquire("a", [(0, 4), (5, 9)], 100)
    assert acquired == [AcquiredRecords(0, 9, 1)]
    assert sp.acquire("b", [(0, 9)], 100)[0] == []  # held by a
    sp.acknowledge("a", [(0, 3, [ACCEPT])])
    assert (sp.start_offset, sp.end_offset) == (4, 10)
    assert sp.next_fetch_offset() == 10


def test_released_records_go_to_the_next_member_with_their_delivery_count():
    sp = partition()
    sp.acquire("a", [(0, 4)], 100)
    sp.acknowledge("a", [(0, 4, [ACCEPT, RELEASE, ACCEPT, RELEASE, ACCEPT])])
    assert sp.next_fetch_offset() == 1
    acquired, _ = sp.acquire("b", [(0, 4)], 100)
    assert acquired == [AcquiredRecords(1, 1, 2), AcquiredRecords(3, 3, 2)]


def test_rejected_and_gap_records_are_archived_never_delivered_again():
    sp = partition()
    sp.acquire("a", [(0, 2)], 100)
    sp.acknowledge("a", [(0, 0, [REJECT]), (1, 1, [GAP]), (2, 2, [ACCEPT])])
    assert sp.start_offset == 3 and sp.acquire("b", [(0, 2)], 100)[0] == []


def test_the_delivery_count_limit_archives_a_poison_record():
    sp = partition(limit=2)
    for delivery in (1, 2):
        acquired, _ = sp.acquire("a", [(0, 0)], 100)
        assert acquired == [AcquiredRecords(0, 0, delivery)]
        sp.acknowledge("a", [(0, 0, [RELEASE])])
    assert sp.state_of(0)[0] in (RecordState.ARCHIVED, RecordState.ACKNOWLEDGED) and sp.start_offset == 1


def test_an_expired_lock_releases_only_what_it_still_holds():
    sp = partition()
    _, lock = sp.acquire("a", [(0, 3)], 100)
    sp.acknowledge("a", [(0, 1, [ACCEPT])])
    assert sp.expire_lock(lock)
    assert sp.state_of(2) == (RecordState.AVAILABLE, 1) and sp.start_offset == 2
    assert not sp.expire_lock(lock)


def test_a_closed_session_releases_the_member_s_records():
    sp = partition()
    sp.acquire("a", [(0, 1)], 100)
    sp.acquire("b", [(2, 3)], 100)
    assert sp.release_member("a")
    assert sp.state_of(0)[0] is RecordState.AVAILABLE and sp.state_of(2)[0] is RecordState.ACQUIRED


def test_acknowledging_a_record_not_held_fails_whole():
    sp = partition()
    sp.acquire("a", [(0, 1)], 100)
    with pytest.raises(InvalidRecordStateError):
        sp.acknowledge("b", [(0, 0, [ACCEPT])])
    with pytest.raises(InvalidRecordStateError):
        sp.acknowledge("a", [(0, 0, [ACCEPT]), (5, 5, [ACCEPT])])
    assert sp.state_of(0)[0] is RecordState.ACQUIRED  # nothing applied
    with pytest.raises(InvalidRequestError):
        sp.acknowledge("a", [(0, 1, [ACCEPT, ACCEPT, ACCEPT])])


def test_max_records_and_the_record_lock_limit_bound_an_acquisition():
    sp = partition(locks=5)
    acquired, _ = sp.acquire("a", [(0, 1), (2, 3), (4, 9)], 2)  # whole batches: the first reaches max_records
    assert acquired == [AcquiredRecords(0, 1, 1)]
    acquired, _ = sp.acquire("b", [(0, 1), (2, 3), (4, 9)], 100)
    assert acquired == [AcquiredRecords(2, 4, 1)]  # five offsets in flight at most
    assert sp.next_fetch_offset() is None
    sp.acknowledge("a", [(0, 1, [ACCEPT])])
    acquired, _ = sp.acquire("a", [(4, 9)], 100)
    assert acquired == [AcquiredRecords(5, 6, 1)]  # the start moved: two more


def test_offsets_missing_from_the_log_are_archived():
    sp = partition()
    acquired, _ = sp.acquire("a", [(3, 4)], 100)  # 0-2 compacted away
    assert acquired == [AcquiredRecords(3, 4, 1)] and sp.start_offset == 3


def test_the_persisted_state_restores_the_share_partition():
    sp = partition(start=10)
    sp.acquire("a", [(10, 14)], 100)
    sp.acknowledge("a", [(10, 14, [RELEASE, ACCEPT, REJECT, ACCEPT, ACCEPT])])
    sp.acquire("a", [(15, 16)], 100)  # acquired: persisted as AVAILABLE
    batches = sp.state_batches()
    assert batches == [StateBatch(10, 10, RecordState.AVAILABLE, 1), StateBatch(11, 11, RecordState.ACKNOWLEDGED, 1),
                       StateBatch(12, 12, RecordState.ARCHIVED, 1), StateBatch(13, 14, RecordState.ACKNOWLEDGED, 1),
                       StateBatch(15, 16, RecordState.AVAILABLE, 1)]
    restored = SharePartition(sp.start_offset, 3, 100, batches)
    assert (restored.start_offset, restored.end_offset) == (10, 17)
    assert restored.acquire("b", [(10, 16)], 100)[0] == [AcquiredRecords(10, 10, 2), AcquiredRecords(15, 16, 2)]


def test_the_record_limit_mode_splits_a_batch_at_max_records():
    sp = partition()
    acquired, _ = sp.acquire("a", [(0, 9)], 4, record_limit=True)
    assert acquired == [AcquiredRecords(0, 3, 1)] and sp.end_offset == 4
    acquired, _ = sp.acquire("b", [(0, 9)], 100, record_limit=True)
    assert acquired == [AcquiredRecords(4, 9, 1)]


def test_batches_of_aborted_transactions_are_archived_never_delivered():
    sp = partition()
    acquired, _ = sp.acquire("a", [(0, 1), (2, 4), (5, 5), (6, 7)], 100, aborted=frozenset({(2, 4)}))
    assert acquired == [AcquiredRecords(0, 1, 1), AcquiredRecords(5, 7, 1)]
    assert sp.state_of(3)[0] is RecordState.ARCHIVED
    sp.acknowledge("a", [(0, 1, [ACCEPT])])
    assert sp.start_offset == 5
