"""The share coordinator (KIP-932; Kafka's ShareCoordinatorService and ShareCoordinatorShard): the durable state of
every share-partition, kept in the internal topic `__share_group_state`.

A share-partition is keyed `group:topic id:partition` (Kafka's SharePartitionKey, the topic id in Kafka's base64
form), which picks its partition of the topic as a group id picks one of `__consumer_offsets`. Its state is the
share-partition start offset, the state epoch (bumped when an admin resets the offsets), and the runs of in-flight
offsets with their delivery state and count. The records are Kafka's (schemas/share-coordinator/), framed as
`__consumer_offsets`' records are (an int16 type before the key, an int16 version before the value):

| type | key                                   | value                                                      |
|------|---------------------------------------|------------------------------------------------------------|
| 0    | ShareSnapshotKey (group, topic id, p) | ShareSnapshotValue v0: the whole state                     |
| 1    | ShareUpdateKey (group, topic id, p)   | ShareUpdateValue v0: runs that change the last snapshot    |

Every write here is a ShareSnapshot (the whole state: a share-partition holds at most
`group.share.partition.max.record.locks` offsets in flight, so it stays small), appended with acks=all before the
write returns, as WriteShareGroupState answers once its records are committed; the topic is compacted, which keeps
the latest snapshot of each key (Kafka deletes what newer snapshots replace instead). A ShareUpdate (Kafka writes them
between snapshots) is applied on load: its runs replace those offsets, its start offset moves the start. Deleting a
share-partition's state (DeleteShareGroupState) writes tombstones for both keys.

Leader epochs fence a share-partition leader that lost its topic partition (Kafka's ShareCoordinatorShard leader
map): a read by a leader at a newer leader epoch records that epoch (a snapshot is written), and a write from an
older one is FENCED_LEADER_EPOCH, so a stale leader cannot overwrite what its successor has taken over.

Which partitions it serves (partition_ownership.py, as the group coordinator): a single broker owns every partition
of the topic and reads them back at the first use after a start (`load`), the latest snapshot of each key winning.
In a cluster it follows the topic's leadership (`on_election`, `on_resignation`, Kafka's onElection and
onResignation): a partition won is read back on the loader thread, and a key of a partition not owned is
NOT_COORDINATOR, of one still loading COORDINATOR_LOAD_IN_PROGRESS, so that the share-partition leaders' persister
(share_persister_remote.py) finds the coordinator again and retries. A partition given up drops its keys.
"""

from __future__ import annotations

import logging
import struct
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from wirebroker.coordinator.internal_topic import InternalTopic, InternalTopicSpec
from wirebroker.coordinator.partition_ownership import (
    OwnedPartition,
    PartitionOwnership,
)
from wirebroker.coordinator.share_partition import StateBatch
from wirebroker.coordinator.timer import wall_clock_ms
from wirebroker.log.metadata_files import uuid_to_kafka_string
from wirebroker.protocol.errors import FencedLeaderEpochError, FencedStateEpochError
from wirebroker.protocol.messages.share_snapshot_key import ShareSnapshotKey
from wirebroker.protocol.messages.share_snapshot_value import ShareSnapshotValue
from wirebroker.protocol.messages.share_update_key import ShareUpdateKey
from wirebroker.protocol.messages.share_update_value import ShareUpdateValue
from wirebroker.protocol.primitives import DecodeError

log = logging.getLogger(__name__)

SHARE_STATE_TOPIC = "__share_group_state"
SHARE_SNAPSHOT = 0
SHARE_UPDATE = 1
_TYPE = struct.Struct(">h")
RECORD_VERSION = 0
NO_LEADER_EPOCH = -1

# (group id, topic id, partition)
ShareKey = tuple[str, bytes, int]


def coordinator_key(key: ShareKey) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey: the string that picks the key's `__share_group_state` partition."""
    group_id, topic_id, partition = key
    return f"{group_id}:{uuid_to_kafka_string(uuid.UUID(bytes=topic_id))}:{partition}"


@dataclass(frozen=True)
class ShareState:
    """What is persisted of a share-partition (Kafka's ShareGroupOffset)."""

    start_offset: int
    state_epoch: int = 0
    batches: tuple[StateBatch, ...] = ()
    snapshot_epoch: int = 0
    create_timestamp: int = -1
    delivery_complete_count: int = -1
    leader_epoch: int = NO_LEADER_EPOCH  # of the share-partition leader that last read or wrote it


class ShareStateTopic(InternalTopic):
    def __init__(self, broker: Any, config: Any) -> None:
        super().__init__(broker, InternalTopicSpec(
            SHARE_STATE_TOPIC, config["share.coordinator.state.topic.num.partitions"],
            config["share.coordinator.state.topic.replication.factor"],
            config["share.coordinator.write.timeout.ms"],
            # Kafka keeps the topic with cleanup.policy=delete and prunes, with DeleteRecords, what a newer snapshot
            # of every key replaces. Here every write is a whole snapshot, so the latest record of each key is its
            # state and compaction bounds the topic the same way.
            {"cleanup.policy": "compact", "compression.type": "producer",
             "min.insync.replicas": str(config["share.coordinator.state.topic.min.isr"]),
             "segment.bytes": str(config["share.coordinator.state.topic.segment.bytes"])},
            "share coordinator"))


def _batches(value_batches: Iterable[Any]) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in value_batches)


def _apply_update(state: ShareState, start_offset: int, batches: tuple[StateBatch, ...]) -> ShareState:
    """An update on top of the state (Kafka's PersisterStateBatchCombiner): the start offset moves (-1: stays),
    the update's runs replace those offsets, runs below the start go."""
    start = state.start_offset if start_offset < 0 else start_offset
    per_offset = {o: (b.delivery_state, b.delivery_count) for b in state.batches
                  for o in range(max(b.first_offset, start), b.last_offset + 1)}
    per_offset.update({o: (b.delivery_state, b.delivery_count) for b in batches
                       for o in range(max(b.first_offset, start), b.last_offset + 1)})
    merged: list[StateBatch] = []
    for offset, (delivery_state, count) in sorted(per_offset.items()):
        last = merged[-1] if merged else None
        if last is not None and last.last_offset == offset - 1 and (last.delivery_state, last.delivery_count) == (
                delivery_state, count):
            merged[-1] = replace(last, last_offset=offset)
        else:
            merged.append(StateBatch(offset, offset, delivery_state, count))
    return replace(state, start_offset=start, batches=tuple(merged))


class ShareCoordinator:
    def __init__(self, topic: InternalTopic, follow_leadership: bool = False) -> None:
        self.topic = topic
        self._lock = threading.RLock()
        self._states: dict[ShareKey, ShareState] = {}
        self._owned = PartitionOwnership(SHARE_STATE_TOPIC, self._lock, self._load_partition,
                                         "share-coordinator-loader", self._describe)
        self._owns_every_partition = not follow_leadership
        self._loaded = False

    def load(self) -> None:
        """A single broker: own every partition of `__share_group_state` and read them back, once, now."""
        if not self._owns_every_partition:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            self._owned.load_in_background = False
            with self._owned.electing():
                for partition in range(self.topic.num_partitions):
                    self._owned.elect(partition, 0)

    def shutdown(self) -> None:
        self._owned.shutdown()

    def on_election(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads `partition` of `__share_group_state`: its keys load, then are served."""
        self._owned.elect(partition, leader_epoch)

    def on_resignation(self, partition: int, leader_epoch: int | None = None) -> None:
        """This broker no longer leads `partition`: its keys go from memory (they stay in the log for the new
        leader) and answer NOT_COORDINATOR."""
        with self._lock:
            if not self._owned.resign(partition, leader_epoch):
                return
            gone = [key for key in self._states if self._partition_of(key) == partition]
            for key in gone:
                del self._states[key]
        log.info("Unloaded %d share-partition states of %s-%d: this broker no longer leads it", len(gone),
                 SHARE_STATE_TOPIC, partition)

    def _partition_of(self, key: ShareKey) -> int:
        return self.topic.partition_for(coordinator_key(key))

    def _load_partition(self, partition: int, load: OwnedPartition) -> None:
        """Read the partition (outside the lock: nothing writes to it while it loads), then replay it, unless it
        was given up meanwhile."""
        started = wall_clock_ms()
        try:
            records = list(self.topic.read_all(partition)) if self.topic.exists() else []
        except Exception:
            log.exception("loading %s-%d failed; its share-partitions start empty", SHARE_STATE_TOPIC, partition)
            records = []
        with self._lock:
            if not self._owned.is_current(partition, load):
                return
            for key, value in records:
                try:
                    self._replay(key, value)
                except (DecodeError, ValueError) as exc:
                    log.error("skipping an unreadable record of %s-%d: %s", SHARE_STATE_TOPIC, partition, exc)
            load.loaded = True
        if records:
            log.info("Loaded %s-%d in %d ms: %d records", SHARE_STATE_TOPIC, partition, wall_clock_ms() - started,
                     len(records))

    def _describe(self) -> str:
        with self._lock:
            return f"{len(self._states)} share-partition states"

    def _check(self, key: ShareKey) -> None:
        """NOT_COORDINATOR unless this broker leads the key's partition, COORDINATOR_LOAD_IN_PROGRESS until loaded."""
        self.load()
        self._owned.check(self._partition_of(key), f"share-partition {coordinator_key(key)}")

    def _replay(self, key_bytes: bytes, value_bytes: bytes | None) -> None:
        (record_type,) = _TYPE.unpack_from(key_bytes, 0)
        if record_type not in (SHARE_SNAPSHOT, SHARE_UPDATE):
            raise ValueError(f"unknown share coordinator record type {record_type}")
        key_class = ShareSnapshotKey if record_type == SHARE_SNAPSHOT else ShareUpdateKey
        key = key_class.decode(memoryview(key_bytes)[_TYPE.size:], RECORD_VERSION)
        share_key = (key.group_id, bytes(key.topic_id), key.partition)
        if value_bytes is None:
            self._states.pop(share_key, None)
            return
        (version,) = _TYPE.unpack_from(value_bytes, 0)
        body = memoryview(value_bytes)[_TYPE.size:]
        if record_type == SHARE_SNAPSHOT:
            value = ShareSnapshotValue.decode(body, version)
            self._states[share_key] = ShareState(value.start_offset, value.state_epoch, _batches(value.state_batches),
                                                 value.snapshot_epoch, value.create_timestamp,
                                                 value.delivery_complete_count, value.leader_epoch)
        else:
            update = ShareUpdateValue.decode(body, version)
            state = self._states.get(share_key)
            if state is not None:
                state = replace(state, leader_epoch=max(state.leader_epoch, update.leader_epoch))
                self._states[share_key] = _apply_update(state, update.start_offset, _batches(update.state_batches))

    # ---- Kafka's ReadShareGroupState, WriteShareGroupState, InitializeShareGroupState, DeleteShareGroupState ----

    def read(self, key: ShareKey, leader_epoch: int = NO_LEADER_EPOCH) -> ShareState | None:
        """The key's state; a read from a leader at a newer leader epoch than the state's records that epoch
        (Kafka's readStateAndMaybeUpdateLeaderEpoch), fencing the older leader's writes."""
        with self._lock:
            self._check(key)
            state = self._states.get(key)
            if state is not None and leader_epoch > state.leader_epoch:
                state = self.write(key, state.start_offset, state.batches, state.delivery_complete_count,
                                   leader_epoch=leader_epoch)
            return state

    def summaries(self, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> dict[tuple[bytes, int], ShareState]:
        """The states of the group's share-partitions named that this broker holds, by (topic id, partition)."""
        self.load()
        with self._lock:
            return {tp: state for tp in partitions if (state := self._states.get((group_id, *tp))) is not None}

    def write(self, key: ShareKey, start_offset: int, batches: Iterable[StateBatch], delivery_complete_count: int = -1,
              state_epoch: int | None = None, leader_epoch: int = NO_LEADER_EPOCH) -> ShareState:
        """Persist a share-partition's state as a snapshot (acks=all) and keep it; raises the Kafka error of a
        failed write. `state_epoch` None keeps the current one; the leader epoch kept is the newest seen."""
        with self._lock:
            self._check(key)
            previous = self._states.get(key)
            now = wall_clock_ms()
            state = ShareState(start_offset,
                               state_epoch if state_epoch is not None else previous.state_epoch if previous else 0,
                               tuple(batches), previous.snapshot_epoch + 1 if previous else 0,
                               previous.create_timestamp if previous else now, delivery_complete_count,
                               max(leader_epoch, previous.leader_epoch if previous else NO_LEADER_EPOCH))
            self._append(key, self._snapshot_value(state, now))
            self._states[key] = state
            return state

    def initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> None:
        """InitializeShareGroupState: a fresh state at `start_offset`; FENCED_STATE_EPOCH for an older epoch."""
        with self._lock:
            self._check_state_epoch(key, state_epoch)
            self.write(key, start_offset, [], state_epoch=state_epoch)

    def update(self, key: ShareKey, state_epoch: int, start_offset: int, batches: Iterable[StateBatch],
               delivery_complete_count: int = -1, leader_epoch: int = NO_LEADER_EPOCH) -> None:
        """WriteShareGroupState: the runs given replace those offsets (start offset -1: unchanged), as Kafka's
        share coordinator merges a write into the state; FENCED_STATE_EPOCH for an older state epoch,
        FENCED_LEADER_EPOCH from a leader older than the one the state last heard from."""
        with self._lock:
            previous = self._check_state_epoch(key, state_epoch)
            if previous is not None and leader_epoch != NO_LEADER_EPOCH and leader_epoch < previous.leader_epoch:
                raise FencedLeaderEpochError(f"leader epoch {leader_epoch} is older than {previous.leader_epoch}")
            merged = _apply_update(previous or ShareState(start_offset), start_offset, tuple(batches))
            self.write(key, merged.start_offset, merged.batches, delivery_complete_count, state_epoch, leader_epoch)

    def _check_state_epoch(self, key: ShareKey, state_epoch: int) -> ShareState | None:
        previous = self.read(key)
        if previous is not None and state_epoch < previous.state_epoch:
            raise FencedStateEpochError(f"state epoch {state_epoch} is older than {previous.state_epoch}")
        return previous

    def delete(self, keys: Iterable[ShareKey]) -> None:
        """Tombstones for the keys' snapshots and updates (DeleteShareGroupState)."""
        with self._lock:
            for key in keys:
                self._check(key)
                if key in self._states:
                    self._append(key, None)
                    del self._states[key]

    def _snapshot_value(self, state: ShareState, now: int) -> bytes:
        value = ShareSnapshotValue(
            snapshot_epoch=state.snapshot_epoch, state_epoch=state.state_epoch, leader_epoch=state.leader_epoch,
            start_offset=state.start_offset, delivery_complete_count=state.delivery_complete_count,
            create_timestamp=state.create_timestamp, write_timestamp=now,
            state_batches=[ShareSnapshotValue.StateBatch(first_offset=b.first_offset, last_offset=b.last_offset,
                                                         delivery_state=b.delivery_state,
                                                         delivery_count=b.delivery_count) for b in state.batches])
        return _TYPE.pack(RECORD_VERSION) + value.encode(RECORD_VERSION)

    def _append(self, key: ShareKey, snapshot_value: bytes | None) -> None:
        group_id, topic_id, partition = key
        snapshot_key = _TYPE.pack(SHARE_SNAPSHOT) + ShareSnapshotKey(
            group_id=group_id, topic_id=topic_id, partition=partition).encode(RECORD_VERSION)
        records: list[tuple[bytes, bytes | None]] = [(snapshot_key, snapshot_value)]
        if snapshot_value is None:
            records.append((_TYPE.pack(SHARE_UPDATE) + ShareUpdateKey(
                group_id=group_id, topic_id=topic_id, partition=partition).encode(RECORD_VERSION), None))
        self.topic.append_records(self.topic.partition_for(coordinator_key(key)), records)
