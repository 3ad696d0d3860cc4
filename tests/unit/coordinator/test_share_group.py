"""Share groups (KIP-932) in the group coordinator: joins, the simple assignment (partitions shared when members
outnumber them) of the share-partitions the group has initialised, epochs, leaving, session expiry, reload from
the records, and what other group kinds see."""

from __future__ import annotations

import pytest

from tests.unit.coordinator.test_classic_group import join
from tests.unit.coordinator.test_consumer_group import hb
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.coordinator.internal_records import SHARE_GROUP_STATE_PARTITION_METADATA
from wirebroker.coordinator.share_group import ShareGroup, simple_assignment
from wirebroker.coordinator.share_state_initialization import (
    INITIALIZE_RETRY_INTERVAL_MS,
    InitializeShareState,
)
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


@pytest.fixture
def started(coordinator) -> list[InitializeShareState]:
    """The initialisations the coordinator starts, each done at once (what the share services' persister does)."""
    calls: list[InitializeShareState] = []

    def start(initialization: InitializeShareState) -> None:
        calls.append(initialization)
        coordinator.share_state_initialized(initialization.group_id, sorted(initialization.start_offsets))

    coordinator.use_share_state_initializer(start)
    return calls


def test_members_split_the_partitions_and_share_them_when_they_outnumber_them():
    members = ["a", "b", "c"]
    assert simple_assignment(members, [(b"t", 0), (b"t", 1)]) == {
        "a": {b"t": frozenset({0})}, "b": {b"t": frozenset({1})}, "c": {b"t": frozenset({0})}}
    assert simple_assignment(["a"], [(b"t", 0), (b"t", 1)]) == {"a": {b"t": frozenset({0, 1})}}


def test_a_member_is_assigned_the_partitions_once_their_state_is_initialised(coordinator, started):
    first = share_hb(coordinator, "a")
    assert (first.error_code, first.member_epoch, assigned(first)) == (ErrorCode.NONE, 1, 0)  # none initialised yet
    # the heartbeat initialised the six at the group epoch, start -1 (share.auto.offset.reset at the first fetch)
    assert [(i.group_id, i.state_epoch, sorted(set(i.start_offsets.values())), len(i.start_offsets))
            for i in started] == [("s", 1, [-1], 6)]
    group = coordinator.groups["s"]
    assert (len(group.initialized_partitions()), group.initializing, group.group_epoch) == (6, {}, 2)
    took = share_hb(coordinator, "a", epoch=1)  # the bumped epoch assigns the initialised partitions
    assert (took.member_epoch, assigned(took)) == (2, 6)
    second = share_hb(coordinator, "b")
    assert (second.member_epoch, assigned(second)) == (3, 3)
    again = share_hb(coordinator, "a", epoch=2)  # behind: takes the new assignment and epoch
    assert (again.member_epoch, assigned(again)) == (3, 3)
    assert len(started) == 1  # nothing more to initialise
    assert share_hb(coordinator, "a", epoch=5).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert share_hb(coordinator, "z", epoch=2).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    group = coordinator.groups["s"]
    assert isinstance(group, ShareGroup) and group.state_name == "Stable"


def test_an_initialisation_that_failed_is_tried_again_after_the_retry_interval(coordinator, timer):
    calls: list[InitializeShareState] = []
    coordinator.use_share_state_initializer(calls.append)
    share_hb(coordinator, "a")
    coordinator.share_state_not_initialized("s", sorted(calls[0].start_offsets), "COORDINATOR_NOT_AVAILABLE")
    group = coordinator.groups["s"]
    assert len(group.partitions_with_state()) == 6 and group.initialized == {}  # still initialising
    share_hb(coordinator, "a", epoch=1)
    assert len(calls) == 1  # not yet
    timer.advance(INITIALIZE_RETRY_INTERVAL_MS)
    share_hb(coordinator, "a", epoch=1)
    assert len(calls) == 2 and calls[1].start_offsets == calls[0].start_offsets


def test_leaving_and_an_expired_session_give_the_partitions_back(coordinator, timer, started):
    share_hb(coordinator, "a")
    share_hb(coordinator, "a", epoch=1)
    share_hb(coordinator, "b")
    left = share_hb(coordinator, "b", epoch=-1)
    assert (left.error_code, left.member_epoch) == (ErrorCode.NONE, -1)
    back = share_hb(coordinator, "a", epoch=2)  # at its epoch from before b joined
    assert back.member_epoch == 4 and back.assignment is None  # all six still its own: nothing new to tell
    timer.advance(SESSION_MS + 1)
    assert coordinator.groups["s"].state_name == "Empty"


def test_a_share_group_is_reloaded_from_its_records(coordinator, started):
    share_hb(coordinator, "a")
    share_hb(coordinator, "b")
    kinds = [r.record_type for r in coordinator.record_log.decoded()]
    assert kinds.count(SHARE_GROUP_STATE_PARTITION_METADATA) == 2  # initialising, then initialised
    reloaded = GroupCoordinator(coordinator.config, coordinator.record_log, coordinator.timer, coordinator.topics)
    reloaded.start(load_in_background=False)
    group = reloaded.groups["s"]
    assert isinstance(group, ShareGroup) and set(group.members) == {"a", "b"} and group.group_epoch == 3
    assert len(group.initialized_partitions()) == 6 and group.initializing == {}
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
