"""Server-side partition assignors for consumer groups (KIP-848): `uniform` (the default) and `range`.

Both take the members' subscriptions, the subscribed topics' partition counts and the current target assignment,
and return the new target assignment, member id -> {topic id: partitions}.

- uniform (Kafka's UniformAssignor): every member subscribed to a topic may get its partitions; members end up with
  as equal a number of partitions as their subscriptions allow (when all members subscribe to the same topics,
  the counts differ by at most one). It is sticky: a partition stays with its member while that member is still
  subscribed and not over its share, so a membership change moves as few partitions as it can.
- range (Kafka's RangeAssignor): per topic, the subscribed members sorted by id share the partitions in
  contiguous ranges, the first `partitions % members` of them one partition more; co-partitioned topics end up
  with the same partition numbers on the same member. It is computed afresh each time (not sticky).
"""

from __future__ import annotations

from collections.abc import Mapping

from wirebroker.coordinator.consumer_group import Assignment
from wirebroker.protocol.errors import UnsupportedAssignorError

# member id -> subscribed topic ids
Subscriptions = Mapping[str, frozenset[bytes]]


def uniform(subscriptions: Subscriptions, partition_counts: Mapping[bytes, int],
            current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    members = sorted(subscriptions)
    owned: dict[str, set[tuple[bytes, int]]] = {m: set() for m in members}
    all_partitions = sorted((t, p) for t, n in partition_counts.items() for p in range(n)
                            if any(t in subscriptions[m] for m in members))
    eligible = {tp: [m for m in members if tp[0] in subscriptions[m]] for tp in all_partitions}
    quota = -(-len(all_partitions) // len(members)) if members else 0  # ceil: nobody keeps more than this
    taken: set[tuple[bytes, int]] = set()
    for member in members:
        for topic_id, partitions in sorted(current.get(member, {}).items()):
            for p in sorted(partitions):
                tp = (topic_id, p)
                if tp in eligible and member in eligible[tp] and tp not in taken and len(owned[member]) < quota:
                    owned[member].add(tp)
                    taken.add(tp)
    # Hand the rest out most-constrained first, each to its least-loaded eligible member.
    for tp in sorted((tp for tp in all_partitions if tp not in taken), key=lambda tp: (len(eligible[tp]), tp)):
        chosen = min(eligible[tp], key=lambda m: (len(owned[m]), m))
        owned[chosen].add(tp)
    _rebalance_overloaded(owned, eligible)
    return {m: _as_assignment(owned[m]) for m in members}


def _rebalance_overloaded(owned: dict[str, set[tuple[bytes, int]]],
                          eligible: dict[tuple[bytes, int], list[str]]) -> None:
    """Move partitions from a member holding two or more above another eligible member until none does."""
    moved = True
    while moved:
        moved = False
        for member in sorted(owned, key=lambda m: -len(owned[m])):
            for tp in sorted(owned[member]):
                target = min(eligible[tp], key=lambda m: (len(owned[m]), m))
                if len(owned[target]) + 1 < len(owned[member]):
                    owned[member].discard(tp)
                    owned[target].add(tp)
                    moved = True
                    break
            if moved:
                break


def range_(subscriptions: Subscriptions, partition_counts: Mapping[bytes, int],
           current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    owned: dict[str, set[tuple[bytes, int]]] = {m: set() for m in subscriptions}
    for topic_id, count in sorted(partition_counts.items()):
        subscribers = sorted(m for m, topics in subscriptions.items() if topic_id in topics)
        if not subscribers:
            continue
        base, extra = divmod(count, len(subscribers))
        start = 0
        for i, member in enumerate(subscribers):
            size = base + (1 if i < extra else 0)
            owned[member].update((topic_id, p) for p in range(start, start + size))
            start += size
    return {m: _as_assignment(tps) for m, tps in owned.items()}


def _as_assignment(tps: set[tuple[bytes, int]]) -> Assignment:
    assignment: dict[bytes, set[int]] = {}
    for topic_id, p in tps:
        assignment.setdefault(topic_id, set()).add(p)
    return {t: frozenset(ps) for t, ps in assignment.items()}


ASSIGNORS = {"uniform": uniform, "range": range_}


def assignor(name: str, configured: tuple[str, ...]):
    """The assignor named `name` among `group.consumer.assignors`; UNSUPPORTED_ASSIGNOR for any other."""
    if name not in configured or name not in ASSIGNORS:
        raise UnsupportedAssignorError(f"assignor {name} is not one of group.consumer.assignors {list(configured)}")
    return ASSIGNORS[name]
