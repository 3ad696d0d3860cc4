"""What AlterShareGroupOffsets, DeleteShareGroupOffsets and DeleteGroups share for share groups: the group must be
a share group (GROUP_ID_NOT_FOUND otherwise; AlterShareGroupOffsets creates one that does not exist, as Kafka does)
with no members (NON_EMPTY_GROUP: its offsets change only while no one consumes), and its share-partition states
are changed through the share-partition manager."""

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


def delete_share_states(ctx: RequestContext, deleted: Iterable[str]) -> None:
    """The share-partition states of deleted share groups go too (Kafka's DeleteShareGroupState)."""
    for group_id in deleted:
        share_services(ctx.broker).partitions.delete_state(group_id)
