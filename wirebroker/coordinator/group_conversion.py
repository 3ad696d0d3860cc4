"""Turning a classic group into a consumer group and back, online (Kafka's migration policy `bidirectional`).

Upgrade: the first KIP-848 member to join a classic group that speaks the consumer protocol converts it. Every
classic member carries over with its subscription, its current assignment (which also becomes the target), and
member epoch = the classic generation; the group epoch is that generation too. The JoinGroup/SyncGroup requests
parked in the classic group learn REBALANCE_IN_PROGRESS. The joining member then bumps the epoch, so the classic
members are told to rejoin on their next heartbeat and are served through classic_in_consumer_group.py.

Downgrade: when the last member of the consumer protocol leaves and only classic members remain, the group
becomes a classic group again: generation = the group epoch, each member keeps its protocols and gets its current
assignment as ConsumerProtocolAssignment bytes; the group then rebalances under the classic protocol.

Either way the old group's records are tombstoned and the new group's written in one batch, so a reload sees one
kind or the other, never both. The new group's timers (sessions, the classic rebalance) are started by its manager.
"""

from __future__ import annotations

import logging

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import (
    ClassicGroup,
    ClassicGroupState,
    ClassicMember,
)
from wirebroker.coordinator.classic_group_manager import join_error, sync_error
from wirebroker.coordinator.consumer_group import (
    Assignment,
    ConsumerGroup,
    ConsumerMember,
)
from wirebroker.coordinator.consumer_protocol import (
    parse_assignment,
    parse_subscription,
    read_version,
    serialize_assignment,
)
from wirebroker.coordinator.group import CONSUMER_PROTOCOL_TYPE, GroupConfig
from wirebroker.coordinator.group_runtime import GroupRuntime, TopicImage
from wirebroker.coordinator.subscribed_topics import subscription_metadata
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.primitives import DecodeError

log = logging.getLogger(__name__)


def can_upgrade(config: GroupConfig, group: ClassicGroup) -> bool:
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE or group.protocol_name is None or group.is_in(
            ClassicGroupState.DEAD):
        return False
    if len(group.members) >= config.max_size:
        return False
    return group.subscribed_topics() is not None


def upgrade(runtime: GroupRuntime, classic: ClassicGroup) -> ConsumerGroup:
    for member in classic.members.values():
        if member.awaiting_join is not None:
            member.awaiting_join(join_error(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id))
        if member.awaiting_sync is not None:
            member.awaiting_sync(sync_error(ErrorCode.REBALANCE_IN_PROGRESS))
        member.awaiting_join = member.awaiting_sync = None
        runtime.cancel(("heartbeat", classic.group_id, member.member_id))
    runtime.cancel(("join", classic.group_id))
    runtime.cancel(("sync", classic.group_id))
    group = ConsumerGroup(classic.group_id, state_timestamp_ms=runtime.now_ms())
    generation = classic.generation_id
    out = [records.group_metadata_tombstone(classic.group_id)]
    members = [_consumer_member(runtime.topics, m, classic.protocol_name, generation)
               for m in classic.members.values()]
    for member in members:
        out += [member.subscription_record(group.group_id),
                group.target_member_record(member.member_id, member.assigned),
                member.assignment_record(group.group_id)]
    out.append(group.epoch_record(generation))
    runtime.groups[group.group_id] = group
    runtime.write_consumer_group(group, out)
    metadata = subscription_metadata(group, runtime.topics)
    runtime.write_consumer_group(group, [group.subscription_metadata_record(metadata),
                                         group.target_epoch_record(generation)])
    log.info("classic group %s (generation %d, %d members) upgraded to a consumer group", group.group_id,
             generation, len(members))
    return group


def _consumer_member(topics: TopicImage, member: ClassicMember, protocol: str, generation: int) -> ConsumerMember:
    subscription = parse_subscription(member.metadata(protocol))
    try:
        by_name = parse_assignment(member.assignment)
    except DecodeError:
        by_name = {}
    return ConsumerMember(
        member_id=member.member_id, instance_id=member.group_instance_id, rack_id=subscription.rack_id,
        client_id=member.client_id, client_host=member.client_host,
        subscribed_topic_names=tuple(sorted(subscription.topics)), rebalance_timeout_ms=member.rebalance_timeout_ms,
        member_epoch=generation, previous_member_epoch=generation, assigned=by_topic_id(topics, by_name),
        classic_session_timeout_ms=member.session_timeout_ms, classic_protocols=tuple(member.protocols))


def by_topic_id(topics: TopicImage, by_name: dict[str, set[int]]) -> Assignment:
    assignment = {}
    for name, partitions in by_name.items():
        topic = topics.topic(name)
        if topic is not None and partitions:
            assignment[topic.topic_id] = frozenset(partitions)
    return assignment


def by_topic_name(topics: TopicImage, assignment: Assignment) -> dict[str, set[int]]:
    names = {}
    for topic_id, partitions in assignment.items():
        topic = topics.topic_by_id(topic_id)
        if topic is not None:
            names[topic.name] = set(partitions)
    return names


def should_downgrade(config: GroupConfig, group: ConsumerGroup, leaving_member_id: str) -> bool:
    remaining = [m for member_id, m in group.members.items() if member_id != leaving_member_id]
    return (bool(remaining) and all(m.uses_classic_protocol for m in remaining)
            and not group.members[leaving_member_id].uses_classic_protocol and len(remaining) <= config.max_size)


def downgrade(runtime: GroupRuntime, group: ConsumerGroup, leaving_member_id: str) -> ClassicGroup:
    out = []
    for member_id in group.members:
        for key in ("consumer-session", "consumer-revocation", "consumer-sync", "consumer-join"):
            runtime.cancel((key, group.group_id, member_id))
        out += group.member_tombstones(member_id)
    out += group.group_tombstones()
    classic = ClassicGroup(group.group_id, state=ClassicGroupState.STABLE, state_timestamp_ms=runtime.now_ms(),
                           generation_id=group.group_epoch, protocol_type=CONSUMER_PROTOCOL_TYPE)
    for member in group.members.values():
        if member.member_id == leaving_member_id:
            continue
        protocols = list(member.classic_protocols)
        classic.add(ClassicMember(
            member.member_id, member.instance_id, member.client_id, member.client_host, member.rebalance_timeout_ms,
            member.classic_session_timeout_ms, CONSUMER_PROTOCOL_TYPE, protocols,
            assignment=serialize_assignment(by_topic_name(runtime.topics, member.assigned),
                                            read_version(protocols[0][1]))))
    classic.protocol_name = classic.select_protocol()
    out.append(records.group_metadata(classic.group_id, classic.to_record_value()))
    group.deleted = True
    runtime.groups[group.group_id] = classic
    runtime.write(group.group_id, out)
    log.info("consumer group %s downgraded to a classic group (generation %d, %d members)", group.group_id,
             classic.generation_id, len(classic.members))
    return classic
