"""Moving one consumer-group member towards its target assignment (Kafka's CurrentAssignmentBuilder, KIP-848).

A member never holds a partition another member still holds. From its current assignment and the target:
- partitions it holds that the target takes away must be revoked first: the member keeps its epoch, its assigned
  set shrinks to what it keeps, and it waits in UNREVOKED_PARTITIONS until a heartbeat shows it no longer owns
  them (or its rebalance timeout fences it);
- otherwise it moves to the target epoch at once and gets the new partitions that are free; those another member
  still holds are withheld (UNRELEASED_PARTITIONS) and handed over on a later heartbeat once released.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from wirebroker.coordinator.consumer_group import (
    Assignment,
    ConsumerMember,
    MemberState,
)


def next_member_state(member: ConsumerMember, target_epoch: int, target: Assignment,
                      owned: Assignment | None, owners: Mapping[tuple[bytes, int], str]) -> ConsumerMember:
    """The member after this heartbeat. `owned` is what the member says it owns (None when the heartbeat did not
    say, in which case revocations are assumed not done yet); `owners` maps partitions to their holders."""
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owned is None or _owns_any(owned, member.pending_revocation):
            return member
        # Revoked: on to the next epoch, then towards whatever the target is now.
        return _compute(member, min(member.member_epoch + 1, target_epoch), target_epoch, target, owned, owners)
    if member.state is MemberState.STABLE and member.member_epoch == target_epoch:
        return member
    return _compute(member, member.member_epoch, target_epoch, target, owned, owners)


def _owns_any(owned: Assignment, partitions: Assignment) -> bool:
    return any(owned.get(topic_id, frozenset()) & ps for topic_id, ps in partitions.items())


def _compute(member: ConsumerMember, member_epoch: int, target_epoch: int, target: Assignment,
             owned: Assignment | None, owners: Mapping[tuple[bytes, int], str]) -> ConsumerMember:
    keep: dict[bytes, frozenset[int]] = {}
    revoke: dict[bytes, frozenset[int]] = {}
    new: dict[bytes, frozenset[int]] = {}
    unreleased = False
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, frozenset())
        held = member.assigned.get(topic_id, frozenset())
        if wanted & held:
            keep[topic_id] = wanted & held
        if held - wanted:
            revoke[topic_id] = held - wanted
        free = frozenset(p for p in wanted - held if owners.get((topic_id, p), member.member_id) == member.member_id)
        if free:
            new[topic_id] = free
        if len(free) < len(wanted - held):
            unreleased = True
    if revoke and (owned is None or _owns_any(owned, revoke)):
        return replace(member, member_epoch=member_epoch, state=MemberState.UNREVOKED_PARTITIONS, assigned=keep,
                       pending_revocation=revoke)
    assigned = {t: keep.get(t, frozenset()) | new.get(t, frozenset()) for t in set(keep) | set(new)}
    previous = member.member_epoch if target_epoch != member.member_epoch else member.previous_member_epoch
    return replace(member, previous_member_epoch=previous, member_epoch=target_epoch,
                   state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
                   assigned=assigned, pending_revocation={})
