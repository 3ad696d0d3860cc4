"""Share groups (KIP-932) in the group coordinator: joins, the simple assignment (partitions shared when members
outnumber them), epochs, leaving, session expiry, reload from the records, and what other group kinds see."""

from __future__ import annotations

from tests.unit.coordinator.test_classic_group import join
from tests.unit.coordinator.test_consumer_group import hb
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.coordinator.share_group import ShareGroup, simple_assignment
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
)

SESSION_MS = 45_000  # group.share.session.timeout.ms


def share_hb(c, member_id, epoch=0, topics=("t",), group="s"):
    return c.share_group_heartbeat(ShareGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=epoch,
        subscribed_topic_names=list(topics) if epoch == 0 else None), "client", "/127.0.0.1")


def assigned(response) -> int:
    return sum(len(tp.partitions) for tp in response.assignment.topic_partitions)


def test_members_split_the_partitions_and_share_them_when_they_outnumber_them():
    members = ["a", "b", "c"]
    assert simple_assignment(members, [(b"t", 0), (b"t", 1)]) == {
        "a": {b"t": frozenset({0})}, "b": {b"t": frozenset({1})}, "c": {b"t": frozenset({0})}}
    assert simple_assignment(["a"], [(b"t", 0), (b"t", 1)]) == {"a": {b"t": frozenset({0, 1})}}


def test_a_member_joins_takes_its_partitions_at_once_and_heartbeats_at_its_epoch(coordinator):
    first = share_hb(coordinator, "a")
    assert (first.error_code, first.member_epoch, assigned(first)) == (ErrorCode.NONE, 1, 6)
    second = share_hb(coordinator, "b")
    assert (second.member_epoch, assigned(second)) == (2, 3)
    again = share_hb(coordinator, "a", epoch=1)  # behind: takes the new assignment and epoch
    assert (again.member_epoch, assigned(again)) == (2, 3)
    assert share_hb(coordinator, "a", epoch=5).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert share_hb(coordinator, "z", epoch=2).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    group = coordinator.groups["s"]
    assert isinstance(group, ShareGroup) and group.state_name == "Stable"


def test_leaving_and_an_expired_session_give_the_partitions_back(coordinator, timer):
    share_hb(coordinator, "a")
    share_hb(coordinator, "b")
    left = share_hb(coordinator, "b", epoch=-1)
    assert (left.error_code, left.member_epoch) == (ErrorCode.NONE, -1)
    back = share_hb(coordinator, "a", epoch=1)  # at its epoch from before b joined
    assert back.member_epoch == 3 and back.assignment is None  # all six still its own: nothing new to tell
    timer.advance(SESSION_MS + 1)
    assert coordinator.groups["s"].state_name == "Empty"


def test_a_share_group_is_reloaded_from_its_records(coordinator):
    share_hb(coordinator, "a")
    share_hb(coordinator, "b")
    reloaded = GroupCoordinator(coordinator.config, coordinator.record_log, coordinator.timer, coordinator.topics)
    reloaded.start(load_in_background=False)
    group = reloaded.groups["s"]
    assert isinstance(group, ShareGroup) and set(group.members) == {"a", "b"} and group.group_epoch == 2
    assert share_hb(reloaded, "a", epoch=1).error_code == ErrorCode.NONE  # its epoch before the reload


def test_group_ids_of_other_kinds_are_not_share_groups(coordinator):
    hb(coordinator, member_id="m", group="consumers")
    refused = share_hb(coordinator, "a", group="consumers")
    assert refused.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    share_hb(coordinator, "a", group="shared")
    code, listed = coordinator.list_groups([], ["share"])
    assert code == ErrorCode.NONE and [(g.group_id, g.group_type, g.protocol_type) for g in listed] == [
        ("shared", "share", "share")]
    assert share_hb(coordinator, "", group="shared").error_code == ErrorCode.INVALID_REQUEST


def test_a_share_group_id_is_no_classic_or_consumer_group(coordinator):
    share_hb(coordinator, "a", group="shared")
    assert hb(coordinator, member_id="m", group="shared").error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert join(coordinator, group="shared").last.error_code == ErrorCode.GROUP_ID_NOT_FOUND
