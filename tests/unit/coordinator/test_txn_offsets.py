"""Transactional offsets (TxnOffsetCommit): pending until the producer's marker, committed or dropped by it, seen as
UNSTABLE_OFFSET_COMMIT by a require_stable fetch, and replayed the same way from the log by a new coordinator."""

from __future__ import annotations

from tests.unit.coordinator.test_classic_group import stable_pair
from tests.unit.coordinator.test_consumer_group import hb
from tests.unit.coordinator.test_offsets_and_records import commit
from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.offset_metadata_manager import PartitionCommit
from wirebroker.protocol.errors import ErrorCode


def txn_commit(c, group, offsets, producer_id=7, producer_epoch=0, generation=-1, member="", instance=None,
               version=3):
    return c.commit_transactional_offsets(group, producer_id, producer_epoch, member, instance, generation,
                                          [PartitionCommit(t, p, o, 3, "txn") for (t, p), o in offsets.items()],
                                          version)


def fetched(c, group, partitions, require_stable=False):
    code, topics = c.fetch_offsets(group, [("t", partitions)], require_stable=require_stable)
    assert code == ErrorCode.NONE
    return [(o.offset, o.error_code) for o in topics[0][1]]


def end(c, group, producer_id, commit_):
    return c.complete_transaction(partition_for(group, c.record_log.num_partitions), producer_id, 0, 0, commit_)


def test_pending_until_commit(coordinator, make_coordinator):
    commit(coordinator, "g", {("t", 0): 5})
    assert txn_commit(coordinator, "g", {("t", 0): 10, ("t", 1): 11}) == {("t", 0): ErrorCode.NONE,
                                                                          ("t", 1): ErrorCode.NONE}
    assert fetched(coordinator, "g", [0, 1]) == [(5, 0), (-1, 0)]  # pending offsets are invisible
    assert fetched(coordinator, "g", [0, 1, 2], require_stable=True) == [
        (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), (-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), (-1, 0)]
    assert make_coordinator().fetch_offsets("g", [("t", [0])], require_stable=True)[1][0][1][0].error_code == \
        ErrorCode.UNSTABLE_OFFSET_COMMIT  # a reload keeps them pending
    assert end(coordinator, "g", 7, True) == ErrorCode.NONE
    for c in (coordinator, make_coordinator()):
        assert fetched(c, "g", [0, 1], require_stable=True) == [(10, 0), (11, 0)]


def test_abort_drops_them(coordinator, make_coordinator):
    commit(coordinator, "g", {("t", 0): 5})
    txn_commit(coordinator, "g", {("t", 0): 10})
    assert end(coordinator, "g", 7, False) == ErrorCode.NONE
    for c in (coordinator, make_coordinator()):
        assert fetched(c, "g", [0], require_stable=True) == [(5, 0)]


def test_a_later_plain_commit_wins_over_the_transaction(coordinator, make_coordinator):
    txn_commit(coordinator, "g", {("t", 0): 10})
    commit(coordinator, "g", {("t", 0): 20})
    end(coordinator, "g", 7, True)
    for c in (coordinator, make_coordinator()):
        assert fetched(c, "g", [0]) == [(20, 0)]


def test_markers_of_other_producers_leave_them_pending(coordinator):
    txn_commit(coordinator, "g", {("t", 0): 10}, producer_id=1)
    txn_commit(coordinator, "g", {("t", 0): 30}, producer_id=2)
    end(coordinator, "g", 1, True)
    assert fetched(coordinator, "g", [0], require_stable=True) == [(-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)]
    assert fetched(coordinator, "g", [0]) == [(10, 0)]
    end(coordinator, "g", 2, True)
    assert fetched(coordinator, "g", [0], require_stable=True) == [(30, 0)]


def test_the_records_are_a_transactional_batch_and_the_marker_follows(coordinator, record_log):
    txn_commit(coordinator, "g", {("t", 0): 10}, producer_id=9)
    end(coordinator, "g", 9, True)
    batches = record_log.partitions[partition_for("g", record_log.num_partitions)]
    assert [(b.producer_id, len(b.records), b.commit) for b in batches] == [(9, 1, None), (9, 0, True)]


def test_generation_and_member_checks(coordinator):
    assert txn_commit(coordinator, "nope", {("t", 0): 1}, generation=2) == {("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert txn_commit(coordinator, "", {("t", 0): 1}) == {("t", 0): ErrorCode.INVALID_GROUP_ID}
    assert txn_commit(coordinator, "g", {("t", 0): 1, ("x", 0): 1}) == {
        ("t", 0): ErrorCode.NONE, ("x", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}  # a simple group
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=1, member="m") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}


def test_a_member_of_a_classic_group_commits_with_its_generation(coordinator, timer):
    _, follower, generation = stable_pair(coordinator, timer)
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=generation, member=follower) == {
        ("t", 0): ErrorCode.NONE}
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=generation + 1, member=follower) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION}
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=generation, member="stranger") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    # Before v3 the request names no member: accepted while the group has members (Kafka checks what is named).
    assert txn_commit(coordinator, "g", {("t", 0): 2}, version=2) == {("t", 0): ErrorCode.NONE}


def test_a_marker_ends_the_transaction_on_its_partition_only(coordinator, record_log):
    groups = [f"g{i}" for i in range(20)]
    here = groups[0]
    there = next(g for g in groups if partition_for(g, record_log.num_partitions) !=
                 partition_for(here, record_log.num_partitions))
    txn_commit(coordinator, here, {("t", 0): 1})
    txn_commit(coordinator, there, {("t", 0): 2})
    end(coordinator, here, 7, True)
    assert fetched(coordinator, here, [0], require_stable=True) == [(1, 0)]
    assert fetched(coordinator, there, [0], require_stable=True) == [(-1, ErrorCode.UNSTABLE_OFFSET_COMMIT)]
    end(coordinator, there, 7, False)
    assert fetched(coordinator, there, [0], require_stable=True) == [(-1, 0)]


def test_pending_offsets_keep_the_partition_and_the_group_from_expiring(coordinator, timer):
    commit(coordinator, "g", {("t", 0): 1, ("t", 1): 1})
    txn_commit(coordinator, "g", {("t", 0): 2})
    timer.advance(60_000)  # the test config's offsets retention
    assert coordinator.expire_offsets() == 1  # ("t", 1) only
    assert "g" in coordinator.groups
    end(coordinator, "g", 7, True)
    assert fetched(coordinator, "g", [0, 1]) == [(2, 0), (-1, 0)]


def test_deleting_the_group_drops_its_pending_offsets(coordinator):
    txn_commit(coordinator, "g", {("t", 0): 2})
    assert coordinator.delete_groups(["g"]) == [("g", ErrorCode.NONE)]
    end(coordinator, "g", 7, True)
    assert fetched(coordinator, "g", [0], require_stable=True) == [(-1, 0)]


def test_a_member_of_a_consumer_group_commits_with_its_member_epoch(coordinator):
    member = hb(coordinator)
    epoch = member.member_epoch
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=epoch, member=member.member_id) == {
        ("t", 0): ErrorCode.NONE}  # TxnOffsetCommit v3 is fine here (OffsetCommit needs v9 for such members)
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=epoch + 1, member=member.member_id) == {
        ("t", 0): ErrorCode.ILLEGAL_GENERATION}  # a stale member epoch, as Kafka answers it here
    assert txn_commit(coordinator, "g", {("t", 0): 1}, generation=epoch, member="ghost") == {
        ("t", 0): ErrorCode.UNKNOWN_MEMBER_ID}
