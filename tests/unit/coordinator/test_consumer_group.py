"""KIP-848 consumer groups: joins, target assignments, revocation before reassignment, fencing, reload."""

from __future__ import annotations

from tests.unit.coordinator.test_classic_group import heartbeat, join, sync
from wirebroker.coordinator import assignors
from wirebroker.coordinator.classic_group import ClassicGroup, ClassicGroupState
from wirebroker.coordinator.consumer_group import ConsumerGroup
from wirebroker.coordinator.consumer_protocol import parse_assignment
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
)
from wirebroker.protocol.messages.consumer_protocol_assignment import (
    ConsumerProtocolAssignment,
)
from wirebroker.protocol.messages.consumer_protocol_subscription import (
    ConsumerProtocolSubscription,
)

TP = ConsumerGroupHeartbeatRequest.TopicPartitions


def hb(c, member_id="", epoch=0, topics=("t",), owned=(), group="g", instance=None, assignor=None, regex=None):
    joining = epoch == 0
    request = ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance,
        rebalance_timeout_ms=5000 if joining else -1, subscribed_topic_regex=regex,
        subscribed_topic_names=list(topics) if joining else None, server_assignor=assignor,
        topic_partitions=[TP(topic_id=t, partitions=sorted(p)) for t, p in owned] if owned is not None else None)
    return c.consumer_group_heartbeat(request, "client", "/127.0.0.1")


def make_reloaded(c) -> GroupCoordinator:
    reloaded = GroupCoordinator(c.config, c.record_log, c.timer, c.topics)
    reloaded.start(load_in_background=False)
    return reloaded


def owned_of(response):
    return [(tp.topic_id, tp.partitions) for tp in response.assignment.topic_partitions]


def partitions(response):
    return sum(len(tp.partitions) for tp in response.assignment.topic_partitions)


def test_join_gets_everything_then_shares_after_revocation(coordinator, metadata):
    a = hb(coordinator)
    assert a.error_code == ErrorCode.NONE and a.member_epoch == 1 and partitions(a) == 6
    a_id = a.member_id
    b = hb(coordinator)
    b_id = b.member_id
    assert b.member_epoch == 2 and partitions(b) == 0  # its partitions are still a's
    a2 = hb(coordinator, a_id, 1, owned=owned_of(a))
    assert a2.member_epoch == 1 and partitions(a2) == 3  # a keeps 3 and must revoke 3
    group = coordinator.groups["g"]
    assert group.state_name == "Reconciling"
    a3 = hb(coordinator, a_id, 1, owned=owned_of(a2))  # revoked
    assert a3.member_epoch == 2 and a3.assignment is None  # unchanged since a2: not sent again
    b2 = hb(coordinator, b_id, 2, owned=[])
    assert partitions(b2) == 3
    mine = {p for _, ps in owned_of(a2) for p in ps}
    theirs = {p for _, ps in owned_of(b2) for p in ps}
    assert mine | theirs == set(range(6)) and not mine & theirs
    assert group.state_name == "Stable"


def test_regular_expression_subscriptions(coordinator, metadata):
    metadata.create_topic("logs-a", 2, {})
    metadata.create_topic("logs-b", 1, {})
    member = hb(coordinator, topics=(), regex="logs-.*")
    assert member.error_code == ErrorCode.NONE and partitions(member) == 3
    assert hb(coordinator, topics=(), regex="(").error_code == ErrorCode.INVALID_REGULAR_EXPRESSION


def test_stale_epochs_and_unknown_members(coordinator):
    a = hb(coordinator)
    assert hb(coordinator, a.member_id, 5, owned=[]).error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert hb(coordinator, "ghost", 1, owned=[]).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert hb(coordinator, assignor="bogus").error_code == ErrorCode.UNSUPPORTED_ASSIGNOR
    assert hb(coordinator, group="").error_code == ErrorCode.INVALID_REQUEST


def test_session_timeout_fences_and_others_take_over(coordinator, timer):
    a = hb(coordinator)
    b = hb(coordinator)
    a = hb(coordinator, a.member_id, 1, owned=owned_of(a))
    a = hb(coordinator, a.member_id, 1, owned=owned_of(a))
    for _ in range(3):
        timer.advance(4000)
        a = hb(coordinator, a.member_id, a.member_epoch, owned=owned_of(a) if a.assignment else None)
    assert b.member_id not in coordinator.groups["g"].members
    assert sum(len(ps) for ps in coordinator.groups["g"].members[a.member_id].assigned.values()) == 6


def test_leave_and_reload(coordinator, make_coordinator):
    a = hb(coordinator)
    b = hb(coordinator)
    leave = hb(coordinator, b.member_id, -1, owned=None)
    assert leave.error_code == ErrorCode.NONE and leave.member_epoch == -1
    group = coordinator.groups["g"]
    reloaded = make_coordinator().groups["g"]
    assert reloaded.group_epoch == group.group_epoch and reloaded.assignment_epoch == group.assignment_epoch
    assert set(reloaded.members) == {a.member_id}
    assert reloaded.members[a.member_id] == group.members[a.member_id]
    assert reloaded.target_assignment == group.target_assignment


def subscription(*topics: str) -> bytes:
    return b"\x00\x01" + ConsumerProtocolSubscription(topics=list(topics)).encode(1)


def test_classic_member_in_a_consumer_group_and_downgrade_when_the_last_consumer_member_leaves(coordinator):
    a = hb(coordinator)
    protocols = (("range", subscription("t")),)
    first = join(coordinator, version=5, protocols=protocols)
    assert first.last.error_code == ErrorCode.MEMBER_ID_REQUIRED
    b_id = first.last.member_id
    joined = join(coordinator, member_id=b_id, version=5, protocols=protocols).last
    assert joined.error_code == ErrorCode.NONE and joined.leader == "" and joined.members == []
    assert joined.protocol_name == "range" and joined.generation_id == 2
    assert parse_assignment(sync(coordinator, b_id, 2).last.assignment) == {}  # its partitions are still a's
    a = hb(coordinator, a.member_id, 1, owned=owned_of(a))  # a must give up three
    hb(coordinator, a.member_id, 1, owned=owned_of(a))  # ...and has
    assert heartbeat(coordinator, b_id, 2) == ErrorCode.REBALANCE_IN_PROGRESS  # they are free: rejoin for them
    rejoined = join(coordinator, member_id=b_id, version=5, protocols=protocols).last
    assigned = parse_assignment(sync(coordinator, b_id, rejoined.generation_id).last.assignment)
    assert len(assigned["t"]) == 3
    assert heartbeat(coordinator, b_id, rejoined.generation_id) == ErrorCode.NONE
    hb(coordinator, a.member_id, 2, owned=None)
    assert hb(coordinator, a.member_id, -1, owned=None).error_code == ErrorCode.NONE
    group = coordinator.groups["g"]
    assert isinstance(group, ClassicGroup) and list(group.members) == [b_id]
    assert group.state is ClassicGroupState.PREPARING_REBALANCE
    assert parse_assignment(group.members[b_id].assignment) == assigned


def test_consumer_member_upgrades_a_classic_group(coordinator, timer):
    protocols = (("range", subscription("t")),)
    first = join(coordinator, version=3, protocols=protocols)
    timer.advance(0)
    leader = first.last.member_id
    sync(coordinator, leader, 1, {leader: b"\x00\x00" + ConsumerProtocolAssignment(assigned_partitions=[
        ConsumerProtocolAssignment.TopicPartition(topic="t", partitions=list(range(6)))]).encode(0)})
    newcomer = hb(coordinator)
    assert newcomer.error_code == ErrorCode.NONE
    group = coordinator.groups["g"]
    assert isinstance(group, ConsumerGroup) and set(group.members) == {leader, newcomer.member_id}
    assert group.members[leader].uses_classic_protocol and group.members[leader].member_epoch == 1
    assert heartbeat(coordinator, leader, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = join(coordinator, member_id=leader, version=3, protocols=protocols).last
    assert rejoined.error_code == ErrorCode.NONE and rejoined.generation_id == 2
    kept = parse_assignment(sync(coordinator, leader, 2).last.assignment)
    assert len(kept["t"]) == 3  # the eager member gave everything up and got its share back
    reloaded = make_reloaded(coordinator)
    assert reloaded.groups["g"].members[leader] == group.members[leader]


def test_uniform_assignor_is_balanced_and_sticky():
    t, u = b"t" * 16, b"u" * 16
    subs = {m: frozenset({t, u}) for m in ("a", "b", "c")}
    first = assignors.uniform(subs, {t: 6, u: 3}, {})
    assert sorted(sum(len(ps) for ps in a.values()) for a in first.values()) == [3, 3, 3]
    del subs["c"]
    second = assignors.uniform(subs, {t: 6, u: 3}, first)
    for member in ("a", "b"):
        for topic_id, ps in first[member].items():
            assert ps <= second[member][topic_id]  # nothing moved between the members that stayed
    assert sorted(sum(len(ps) for ps in a.values()) for a in second.values()) == [4, 5]


def test_range_assignor_splits_each_topic():
    t = b"t" * 16
    result = assignors.range_({"a": frozenset({t}), "b": frozenset({t})}, {t: 5}, {})
    assert result == {"a": {t: frozenset({0, 1, 2})}, "b": {t: frozenset({3, 4})}}
