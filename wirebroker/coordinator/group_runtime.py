"""What the group managers share, and all they see of the coordinator (Kafka hands its GroupMetadataManager and
OffsetMetadataManager the same few things: the config, the metadata image, a timer and the records they write).

- `config` (GroupConfig) and `topics`, the topics that exist (the metadata store);
- the clock and timers: a timer's callback runs under the coordinator's lock, as every request does, so the
  managers never lock anything themselves; a group's timers are keyed `(kind, group_id, ...)`, so a group's
  timers can all be cancelled when its partition is unloaded;
- record writes to `__consumer_offsets`: appended to the group's partition before anything is answered; a consumer
  or share group's records are then replayed into it (its state only ever changes that way);
- `groups`, every group by id: the managers look groups up, add and remove them here.

The coordinator (group_coordinator.py) builds one and gives it to each manager; the managers never see the
coordinator itself, so no coordinator module imports it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Protocol

from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.group import Group, GroupConfig, partition_for
from wirebroker.coordinator.internal_topic import LoadedBatch


class RecordLog(Protocol):
    """Where the coordinator's records go: `__consumer_offsets` (offsets_topic.py) or, in tests, memory."""

    @property
    def num_partitions(self) -> int: ...

    def append(self, partition: int, records: list[records.CoordinatorRecord], producer_id: int = -1,
               producer_epoch: int = -1) -> None:
        """Write the records, replicated (acks=all), or raise the Kafka error the client should see; with a
        producer id, as part of that producer's transaction (TxnOffsetCommit)."""
        ...

    def append_end_txn_marker(self, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                              commit: bool) -> None:
        """Write a transaction's COMMIT (else ABORT) marker, replicated, or raise the Kafka error."""
        ...

    def read_batches(self, partition: int) -> Iterator[LoadedBatch]:
        """Every batch of a partition this broker leads (nothing for a partition not hosted here)."""
        ...


class ReplayedGroup(Protocol):
    """A group whose state only changes by replaying its records: a consumer group or a share group."""

    group_id: str
    deleted: bool

    def replay(self, record: records.CoordinatorRecord) -> None: ...


class Timer(Protocol):
    def now_ms(self) -> int: ...

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None: ...

    def cancel(self, key: Hashable) -> None: ...

    def cancel_where(self, matches: Callable[[Hashable], bool]) -> None: ...

    def is_scheduled(self, key: Hashable) -> bool: ...

    def start(self) -> None: ...

    def shutdown(self) -> None: ...


class TopicImage(Protocol):
    """The topics that exist (the metadata store)."""

    def topic(self, name: str) -> TopicMetadata | None: ...

    def topic_by_id(self, topic_id: bytes) -> TopicMetadata | None: ...

    def topics(self) -> Iterable[TopicMetadata]: ...


class GroupRuntime:
    def __init__(self, config: GroupConfig, record_log: RecordLog, timer: Timer, topics: TopicImage,
                 lock: threading.RLock) -> None:
        self.config = config
        self.topics = topics
        self.groups: dict[str, Group] = {}
        self._record_log = record_log
        self._timer = timer
        self._lock = lock

    # ---- the clock and timers ------------------------------------------------------------------------------------

    def now_ms(self) -> int:
        return self._timer.now_ms()

    def schedule(self, key: Hashable, delay_ms: int, fn: Callable[[], None]) -> None:
        """Run `fn` under the coordinator's lock in `delay_ms`, replacing any timer scheduled under `key`."""
        def locked() -> None:
            with self._lock:
                fn()

        self._timer.schedule(key, delay_ms, locked)

    def cancel(self, key: Hashable) -> None:
        self._timer.cancel(key)

    def cancel_group_timers(self, group_id: str) -> None:
        """Cancel every timer of a group (its keys are `(kind, group_id, ...)`)."""
        self._timer.cancel_where(lambda key: isinstance(key, tuple) and len(key) > 1 and key[1] == group_id)

    def partition_of(self, group_id: str) -> int:
        """The `__consumer_offsets` partition holding the group."""
        return partition_for(group_id, self._record_log.num_partitions)

    def is_scheduled(self, key: Hashable) -> bool:
        return self._timer.is_scheduled(key)

    # ---- record writes -------------------------------------------------------------------------------------------

    def write(self, group_id: str, out: list[records.CoordinatorRecord], producer_id: int = -1,
              producer_epoch: int = -1) -> None:
        """Append records to `group_id`'s partition of `__consumer_offsets` (in a producer's transaction when a
        producer id is given)."""
        if out:
            self._record_log.append(self.partition_of(group_id), out, producer_id, producer_epoch)

    def write_consumer_group(self, group: ReplayedGroup, out: list[records.CoordinatorRecord]) -> None:
        """Append a consumer or share group's records, then replay them into it; a deleted group goes from
        `groups`."""
        if not out:
            return
        self.write(group.group_id, out)
        for record in out:
            group.replay(record)
        if group.deleted and self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]
