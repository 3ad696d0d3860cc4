"""What AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups share for share groups: the group must be
a share group (GROUP_ID_NOT_FOUND otherwise; AlterShareGroupOffsets creates one that does not exist, as Kafka does)
with no members (NON_EMPTY_GROUP: its offsets change only while no one consumes), and its share-partition states
are changed through the share-partition manager: only those of the share-partitions its group coordinator
initialised (the group's ShareGroupStatePartitionMetadata record, coordinator/share_state_initialization.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from wirebroker.apis.context import RequestContext
from wirebroker.apis.share_services import share_services
from wirebroker.coordinator.group import GroupType
from wirebroker.protocol.errors import KafkaError, NonEmptyGroupError

T = TypeVar("T")


def on_empty_share_group(ctx: RequestContext, group_id: str, operation: Callable[[], T],
                         answer_error: Callable[[KafkaError], T], create: bool = False) -> T:
    """Run `operation` under the group coordinator's lock once `group_id` is an empty share group (made first if
    `create` and there is no group of that id)."""
    coordinator = ctx.broker.group_coordinator
    share_services(ctx.broker)  # made before the lock is taken: making them takes it too, for their initialiser

    def checked() -> T:
        if not coordinator.share_group(group_id, create).is_empty():
            raise NonEmptyGroupError(f"Share group {group_id} has members: its offsets can be changed only when it "
                                     "is empty.")
        return operation()

    return coordinator.serve_share(group_id, checked, answer_error)


def share_group_ids(ctx: RequestContext, group_ids: Iterable[str]) -> set[str]:
    """Which of the groups are share groups (DeleteGroups deletes their share-partition states too)."""
    groups = ctx.broker.group_coordinator.groups
    return {g for g in group_ids if (group := groups.get(g)) is not None and group.type is GroupType.SHARE}


def delete_share_states(ctx: RequestContext, group_ids: Iterable[str]) -> dict[str, int]:
    """Before DeleteGroups deletes share groups, their share-partition states go (Kafka's deleteShareGroups:
    DeleteShareGroupState of the partitions the group initialised or is initialising). A group with members keeps
    them (DeleteGroups answers NON_EMPTY_GROUP); the error code of each group whose states could not be deleted,
    which is then not deleted either."""
    coordinator = ctx.broker.group_coordinator
    failed: dict[str, int] = {}
    for group_id in group_ids:
        def partitions(group_id: str = group_id) -> list[tuple[bytes, int]]:
            group = coordinator.share_group(group_id)
            return group.partitions_with_state() if group.is_empty() else []
        try:
            share_services(ctx.broker).partitions.delete_state(
                group_id, coordinator.serve_share(group_id, partitions, lambda exc: []))
        except KafkaError as exc:
            failed[group_id] = exc.code
    return failed
