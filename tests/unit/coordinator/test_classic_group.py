"""The classic group state machine driven through the coordinator, on a manual clock."""

from __future__ import annotations

from wirebroker.coordinator.classic_group import ClassicGroupState
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.heartbeat import HeartbeatRequest
from wirebroker.protocol.messages.join_group import JoinGroupRequest
from wirebroker.protocol.messages.sync_group import SyncGroupRequest

S = ClassicGroupState
SESSION_MS = 3000
REBALANCE_MS = 5000


class Answers:
    def __init__(self) -> None:
        self.items: list = []

    def __call__(self, answer) -> None:
        self.items.append(answer)

    @property
    def last(self):
        return self.items[-1]


def join(c, member_id="", group="g", protocols=(("range", b"m"),), version=5, instance=None, client="c"):
    answers = Answers()
    request = JoinGroupRequest(group_id=group, session_timeout_ms=SESSION_MS, rebalance_timeout_ms=REBALANCE_MS,
                               member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                               protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m)
                                          for n, m in protocols])
    c.join_group(request, version, client, "/127.0.0.1", answers)
    return answers


def sync(c, member_id, generation, assignments=None, group="g", instance=None):
    answers = Answers()
    request = SyncGroupRequest(group_id=group, generation_id=generation, member_id=member_id,
                               group_instance_id=instance,
                               assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=a)
                                            for m, a in (assignments or {}).items()])
    c.sync_group(request, answers)
    return answers


def heartbeat(c, member_id, generation, group="g"):
    return c.heartbeat(HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id))


def stable_pair(c, timer):
    """Two members in a Stable group: (leader id, follower id, generation)."""
    first = join(c, version=3)
    timer.advance(0)
    leader = first.last.member_id
    second = join(c, version=3)
    assert first.items[-1].error_code == ErrorCode.NONE
    # The second join rebalances; the leader rejoins and the join completes with both.
    join(c, member_id=leader, version=3)
    follower = second.last.member_id
    generation = second.last.generation_id
    sync(c, follower, generation)
    sync(c, leader, generation, {leader: b"A", follower: b"B"})
    return leader, follower, generation


def test_member_id_required_round_trip(coordinator, timer):
    first = join(coordinator, version=4)
    assert first.last.error_code == ErrorCode.MEMBER_ID_REQUIRED
    member_id = first.last.member_id
    assert member_id.startswith("c-")
    second = join(coordinator, member_id=member_id, version=4)
    timer.advance(0)
    response = second.last
    assert response.error_code == ErrorCode.NONE
    assert (response.member_id, response.leader, response.generation_id) == (member_id, member_id, 1)
    assert response.protocol_name == "range"
    assert [m.member_id for m in response.members] == [member_id]
    assert coordinator.groups["g"].state is S.COMPLETING_REBALANCE


def test_pending_member_that_never_rejoins_is_dropped(coordinator, timer):
    first = join(coordinator, version=4)
    group = coordinator.groups["g"]
    assert group.pending_members == {first.last.member_id}
    timer.advance(SESSION_MS)
    assert not group.pending_members


def test_two_members_rebalance_sync_and_heartbeat(coordinator, timer):
    leader, follower, generation = stable_pair(coordinator, timer)
    group = coordinator.groups["g"]
    assert group.state is S.STABLE and generation == 2
    assert group.members[leader].assignment == b"A" and group.members[follower].assignment == b"B"
    assert heartbeat(coordinator, follower, generation) == ErrorCode.NONE
    assert heartbeat(coordinator, follower, generation - 1) == ErrorCode.ILLEGAL_GENERATION
    assert heartbeat(coordinator, "nobody", generation) == ErrorCode.UNKNOWN_MEMBER_ID
    # The assignment went to __consumer_offsets before the answer.
    stored = [r for r in coordinator.record_log.decoded() if r.record_type == 2][-1]
    assert stored.value.generation == generation
    assert {m.member_id: m.assignment for m in stored.value.members} == {leader: b"A", follower: b"B"}


def test_follower_sync_waits_for_the_leader(coordinator, timer):
    first = join(coordinator, version=3)
    timer.advance(0)
    leader = first.last.member_id
    second = join(coordinator, version=3)
    join(coordinator, member_id=leader, version=3)
    follower = second.last.member_id
    waiting = sync(coordinator, follower, 2)
    assert waiting.items == []
    sync(coordinator, leader, 2, {leader: b"A", follower: b"B"})
    assert waiting.last.error_code == ErrorCode.NONE and waiting.last.assignment == b"B"


def test_session_expiry_removes_member_and_rebalances(coordinator, timer):
    leader, follower, generation = stable_pair(coordinator, timer)
    timer.advance(SESSION_MS - 500)
    assert heartbeat(coordinator, leader, generation) == ErrorCode.NONE
    timer.advance(1000)  # the follower's session ends; the leader's was renewed
    group = coordinator.groups["g"]
    assert follower not in group.members
    assert group.state is S.PREPARING_REBALANCE
    assert heartbeat(coordinator, leader, generation) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = join(coordinator, member_id=leader, version=3)
    assert rejoin.last.generation_id == generation + 1 and len(rejoin.last.members) == 1


def test_leave_group_rebalances_and_last_leave_empties(coordinator, timer):
    leader, follower, generation = stable_pair(coordinator, timer)
    code, members = coordinator.leave_group("g", [(follower, None, "closing"), ("ghost", None, None)])
    assert code == ErrorCode.NONE
    assert [m.error_code for m in members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    group = coordinator.groups["g"]
    assert group.state is S.PREPARING_REBALANCE
    coordinator.leave_group("g", [(leader, None, None)])
    assert group.state is S.EMPTY and group.generation_id == generation + 1


def test_rebalance_timeout_drops_members_that_do_not_rejoin(coordinator, timer):
    leader, follower, _ = stable_pair(coordinator, timer)
    rejoin = join(coordinator, member_id=leader, version=3)  # a leader's JoinGroup forces a rebalance
    assert rejoin.items == []
    timer.advance(REBALANCE_MS)
    assert rejoin.last.error_code == ErrorCode.NONE
    assert [m.member_id for m in rejoin.last.members] == [leader]
    assert follower not in coordinator.groups["g"].members


def test_static_member_rejoin_in_stable_group_keeps_assignment_without_rebalance(coordinator, timer):
    a = join(coordinator, version=5, instance="i-a")
    timer.advance(0)
    a_id = a.last.member_id
    b = join(coordinator, version=5, instance="i-b")
    join(coordinator, member_id=a_id, version=5, instance="i-a")
    b_id, generation = b.last.member_id, b.last.generation_id
    sync(coordinator, b_id, generation, instance="i-b")
    sync(coordinator, a_id, generation, {a_id: b"A", b_id: b"B"}, instance="i-a")
    group = coordinator.groups["g"]
    # "i-b" restarts: a new JoinGroup with no member id.
    again = join(coordinator, version=5, instance="i-b")
    response = again.last
    assert response.error_code == ErrorCode.NONE
    assert response.generation_id == generation and group.state is S.STABLE
    new_id = response.member_id
    assert new_id != b_id and group.static_members["i-b"] == new_id
    assert sync(coordinator, new_id, generation, instance="i-b").last.assignment == b"B"
    # The old incarnation is fenced.
    assert heartbeat(coordinator, b_id, generation) == ErrorCode.UNKNOWN_MEMBER_ID
    _, members = coordinator.leave_group("g", [(b_id, "i-b", None)])
    assert members[0].error_code == ErrorCode.FENCED_INSTANCE_ID


def test_protocol_selection_and_inconsistent_protocols(coordinator, timer):
    first = join(coordinator, version=3, protocols=(("roundrobin", b"r"), ("range", b"m")))
    timer.advance(0)
    second = join(coordinator, version=3, protocols=(("range", b"m"), ("roundrobin", b"r")))
    third = join(coordinator, version=3, protocols=(("range", b"m"),))
    bad = join(coordinator, version=3, protocols=(("sticky", b"s"),))
    assert bad.last.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    join(coordinator, member_id=first.last.member_id, version=3, protocols=(("roundrobin", b"r"), ("range", b"m")))
    assert second.last.protocol_name == third.last.protocol_name == "range"


def test_session_timeout_bounds(coordinator):
    request = JoinGroupRequest(group_id="g", session_timeout_ms=10, rebalance_timeout_ms=10, member_id="",
                               protocol_type="consumer",
                               protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")])
    answers = Answers()
    coordinator.join_group(request, 5, "c", "/h", answers)
    assert answers.last.error_code == ErrorCode.INVALID_SESSION_TIMEOUT


def test_initial_rebalance_delay_gathers_members(make_coordinator, timer):
    from dataclasses import replace

    from tests.unit.coordinator.conftest import TEST_CONFIG
    c = make_coordinator(replace(TEST_CONFIG, initial_rebalance_delay_ms=1000))
    a = join(c, version=3)
    timer.advance(600)
    b = join(c, version=3)
    timer.advance(600)  # the first delay ran out, but a member arrived during it: wait another delay
    assert a.items == [] and b.items == []
    timer.advance(1000)
    assert a.last.generation_id == b.last.generation_id == 1
    assert len(a.last.members) + len(b.last.members) == 2


def test_static_leader_rejoin_skips_assignment_from_v9_and_is_a_follower_before(coordinator, timer):
    a = join(coordinator, version=9, instance="i-a")
    timer.advance(0)
    leader = a.last.member_id
    sync(coordinator, leader, 1, {leader: b"A"}, instance="i-a")
    for version, members, skip in ((9, 1, True), (5, 0, False)):
        response = join(coordinator, version=version, instance="i-a").last
        assert response.error_code == ErrorCode.NONE and response.generation_id == 1
        assert response.leader == response.member_id
        assert (len(response.members), response.skip_assignment) == (members, skip)
        assert coordinator.groups["g"].state is S.STABLE
