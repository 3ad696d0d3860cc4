"""Offsets: commit, fetch, delete, expiry, and the __consumer_offsets records they leave (reloaded by a new
coordinator from the same bytes)."""

from __future__ import annotations

from wirebroker.coordinator import internal_records
from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.offset_metadata_manager import PartitionCommit
from wirebroker.protocol.errors import ErrorCode


def commit(c, group, offsets, generation=-1, member="", version=8, metadata="m"):
    return c.commit_offsets(group, member, None, generation, -1,
                            [PartitionCommit(t, p, o, 3, metadata) for (t, p), o in offsets.items()], version)


def test_offset_commit_record_bytes_are_kafkas():
    record = internal_records.offset_commit("g", "t", 3, 42, 5, "meta", 1000, None)
    # key: type 1, group "g", topic "t", partition 3; value: version 3, offset, leader epoch, metadata, timestamp
    assert internal_records.encode_key(record).hex() == "0001" "0001" "67" "0001" "74" "00000003"
    assert internal_records.encode_value(record).hex() == (
        "0003" "000000000000002a" "00000005" "0004" "6d657461" "00000000000003e8")
    assert internal_records.decode(internal_records.encode_key(record), None).value is None


def test_partition_for_matches_kafkas_hash():
    # Java: Math.abs("my-group".hashCode() % ...) as Utils.abs: "my-group".hashCode() == -1906497762
    assert partition_for("my-group", 50) == (-1906497762 & 0x7FFFFFFF) % 50


def test_commit_fetch_and_reload(coordinator, make_coordinator):
    codes = commit(coordinator, "simple", {("t", 0): 10, ("t", 5): 7, ("nope", 0): 1, ("t", 6): 1})
    assert codes == {("t", 0): ErrorCode.NONE, ("t", 5): ErrorCode.NONE,
                     ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ("t", 6): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    reloaded = make_coordinator()
    for c in (coordinator, reloaded):
        code, topics = c.fetch_offsets("simple", [("t", [0, 1, 5])])
        assert code == ErrorCode.NONE
        assert [(o.partition, o.offset, o.leader_epoch, o.metadata) for o in topics[0][1]] == [
            (0, 10, 3, "m"), (1, -1, -1, ""), (5, 7, 3, "m")]
        _, everything = c.fetch_offsets("simple", None)
        assert [(t, [o.partition for o in offsets]) for t, offsets in everything] == [("t", [0, 5])]
        assert [g.group_id for g in c.list_groups([], [])[1]] == ["simple"]


def test_commit_errors(coordinator, timer):
    assert commit(coordinator, "g", {("t", 0): 1}, generation=3, version=8)[("t", 0)] == ErrorCode.ILLEGAL_GENERATION
    assert commit(coordinator, "g", {("t", 0): 1}, generation=3, version=9)[("t", 0)] == ErrorCode.GROUP_ID_NOT_FOUND
    big = commit(coordinator, "g", {("t", 0): 1}, metadata="x" * 5000)
    assert big[("t", 0)] == ErrorCode.OFFSET_METADATA_TOO_LARGE
    coordinator.record_log.fail_with = None


def test_delete_offsets_and_groups(coordinator, make_coordinator):
    commit(coordinator, "g", {("t", 0): 1, ("u", 1): 2})
    code, codes = coordinator.delete_offsets("g", [("u", 1)])
    assert (code, codes) == (ErrorCode.NONE, {("u", 1): ErrorCode.NONE})
    assert coordinator.delete_offsets("missing", [("t", 0)])[0] == ErrorCode.GROUP_ID_NOT_FOUND
    assert coordinator.delete_groups(["g"]) == [("g", ErrorCode.NONE)]
    assert coordinator.delete_groups(["g"]) == [("g", ErrorCode.GROUP_ID_NOT_FOUND)]
    reloaded = make_coordinator()
    assert "g" not in reloaded.groups and reloaded.fetch_offsets("g", None) == (ErrorCode.NONE, [])


def test_offsets_of_an_empty_group_expire_after_retention(coordinator, timer):
    commit(coordinator, "g", {("t", 0): 1})
    timer.advance(59_000)
    assert coordinator.expire_offsets() == 0
    timer.advance(1_000)
    assert coordinator.expire_offsets() == 1
    assert "g" not in coordinator.groups
    assert any(r.value is None and r.record_type == internal_records.OFFSET_COMMIT
               for r in coordinator.record_log.decoded())
