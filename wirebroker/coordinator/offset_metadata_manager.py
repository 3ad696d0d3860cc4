"""Committed offsets (Kafka's OffsetMetadataManager): what each group committed for each partition, the requests
that commit, fetch and delete them, and their expiry.

State is changed only by replaying OffsetCommit records (a commit and a load take the same path): a value sets the
partition's offset, a tombstone deletes it. A value for a group this coordinator does not know makes a "simple"
group, as Kafka does on replay.

Commit: the group validates the committer (classic: member, instance id, generation, not while completing a
rebalance; consumer groups: member epoch, KIP-848). With generation -1 and no such group, a "simple" group is made
(the admin client and consumers that assign partitions themselves). From OffsetCommit v9 an unknown group with a
generation is GROUP_ID_NOT_FOUND; before, ILLEGAL_GENERATION. Per partition: UNKNOWN_TOPIC_OR_PARTITION for a
partition that does not exist, OFFSET_METADATA_TOO_LARGE past `offset.metadata.max.bytes`. The accepted offsets are
written as one batch and applied.

Fetch: the committed offset, leader epoch and metadata of each asked partition (-1 and "" when none), or of every
partition the group committed when no topics are named. Delete (OffsetDelete): refused per partition with
GROUP_SUBSCRIBED_TO_TOPIC while the group consumes the topic.

Expiry (`offsets.retention.minutes`, KIP-211): a group's offsets are kept while it has members; once it is empty
they expire `retention` after the later of the commit and the moment the group became empty (groups that never used
group management count from the commit alone). An offset committed with an explicit expire timestamp (OffsetCommit
v1) expires then.

Transactions (TxnOffsetCommit, Kafka's pendingTransactionalOffsets): offsets committed inside a producer's
transaction are written as that producer's transactional batch and held pending, per producer id, invisible to
OffsetFetch. The transaction's marker (WriteTxnMarkers, `replay_end_transaction_marker`) makes them the committed
offsets on COMMIT (unless a later plain commit replaced them meanwhile) or drops them on ABORT; a tombstone drops the
pending offsets of its partition too. OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for a partition
with pending offsets, so a consumer starting after a crash waits for the transaction to finish. Loading replays the
same records and markers in log order.

Group-level failures are raised as Kafka errors; the coordinator turns them into the answer.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from wirebroker.coordinator import internal_records as records
from wirebroker.coordinator.classic_group import ClassicGroup
from wirebroker.coordinator.group_runtime import GroupRuntime
from wirebroker.protocol.errors import (
    ErrorCode,
    GroupIdNotFoundError,
    IllegalGenerationError,
    InvalidGroupIdError,
    KafkaError,
    NonEmptyGroupError,
    StaleMemberEpochError,
)
from wirebroker.protocol.messages.offset_commit_value import OffsetCommitValue

log = logging.getLogger(__name__)

NO_OFFSET = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_LEADER_EPOCH = -1
FIRST_GROUP_ID_NOT_FOUND_COMMIT_VERSION = 9
DEFAULT_RETENTION = -1  # OffsetCommit v2-4 retention_time_ms meaning "the broker's offsets.retention.minutes"
OFFSET_RECORD_TYPES = (records.OFFSET_COMMIT, records.OFFSET_COMMIT_LEGACY)

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    committed_offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None
    record_order: int = 0  # replay order, which is log order (Kafka's recordOffset): the later commit wins

    @classmethod
    def from_record_value(cls, value: OffsetCommitValue, version: int, record_order: int = 0) -> OffsetAndMetadata:
        expire = value.expire_timestamp if version == records.OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY else -1
        return cls(value.offset, value.leader_epoch, value.metadata, value.commit_timestamp,
                   expire if expire >= 0 else None, record_order)


@dataclass(frozen=True, slots=True)
class PartitionCommit:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp_ms: int = -1  # OffsetCommit v1 only


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    partition: int
    offset: int
    leader_epoch: int
    metadata: str
    error_code: int = ErrorCode.NONE


class OffsetMetadataManager:
    def __init__(self, runtime: GroupRuntime) -> None:
        self.runtime = runtime
        self._offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        # Kafka's pendingTransactionalOffsets (producer id -> group -> partition) and openTransactions (group ->
        # partition -> producer ids).
        self._pending: dict[int, dict[str, dict[TopicPartition, OffsetAndMetadata]]] = {}
        self._open: dict[str, dict[TopicPartition, set[int]]] = {}
        self._record_order = itertools.count(1)

    # ---- state: replayed records ---------------------------------------------------------------------------------

    def replay(self, record: records.CoordinatorRecord, producer_id: int = NO_PRODUCER_ID) -> None:
        """An OffsetCommit record, written by a plain commit (NO_PRODUCER_ID) or by a producer's transaction."""
        key = record.key
        tp = (key.topic, key.partition)
        if record.value is None:
            partitions = self._offsets.get(key.group)
            if partitions is not None:
                partitions.pop(tp, None)
                if not partitions:
                    del self._offsets[key.group]
            for open_producer in self._open.get(key.group, {}).get(tp, ()):
                self._pending.get(open_producer, {}).get(key.group, {}).pop(tp, None)
            return
        offset = OffsetAndMetadata.from_record_value(record.value, record.value_version, next(self._record_order))
        if producer_id == NO_PRODUCER_ID:
            self._offsets.setdefault(key.group, {})[tp] = offset
        else:
            self._pending.setdefault(producer_id, {}).setdefault(key.group, {})[tp] = offset
            self._open.setdefault(key.group, {}).setdefault(tp, set()).add(producer_id)
        if key.group not in self.runtime.groups:
            # A group known only by its offsets: a "simple" group, as Kafka makes one on replay.
            self.runtime.groups[key.group] = ClassicGroup(key.group, state_timestamp_ms=self.runtime.now_ms())

    def replay_end_transaction_marker(self, producer_id: int, commit: bool, partition: int) -> None:
        """The producer's transaction ended on `__consumer_offsets` partition `partition`: its pending offsets of
        the groups there become the committed ones, or go (each partition is a shard of its own in Kafka)."""
        pending = self._pending.get(producer_id)
        if pending is None:
            return
        ended = [g for g in pending if self.runtime.partition_of(g) == partition]
        for group_id in ended:
            for tp, offset in pending.pop(group_id).items():
                if commit:
                    committed = self._offsets.setdefault(group_id, {})
                    existing = committed.get(tp)
                    if existing is None or offset.record_order > existing.record_order:
                        committed[tp] = offset
            self._close_transactions(group_id, producer_id)
        if not pending:
            del self._pending[producer_id]
        log.debug("%s the pending offsets of producer %d for groups %s", "Committed" if commit else "Aborted",
                  producer_id, ended)

    def _close_transactions(self, group_id: str, producer_id: int) -> None:
        """The producer has no open transaction on the group's partitions any more (a tombstone may have taken
        some of its pending offsets already)."""
        open_partitions = self._open.get(group_id, {})
        for tp in [tp for tp, producers in open_partitions.items() if producer_id in producers]:
            open_partitions[tp].discard(producer_id)
            if not open_partitions[tp]:
                del open_partitions[tp]
        if not open_partitions:
            self._open.pop(group_id, None)

    def has_pending_transactional_offsets(self, group_id: str, tp: TopicPartition) -> bool:
        return bool(self._open.get(group_id, {}).get(tp))

    def write(self, group_id: str, out: list[records.CoordinatorRecord], producer_id: int = NO_PRODUCER_ID,
              producer_epoch: int = NO_PRODUCER_EPOCH) -> None:
        """Append records for `group_id` (in the producer's transaction when a producer id is given); the offset
        commits among them are applied once written."""
        self.runtime.write(group_id, out, producer_id, producer_epoch)
        for record in out:
            if record.record_type in OFFSET_RECORD_TYPES:
                self.replay(record, producer_id)

    def unload(self, group_id: str) -> None:
        """Forget the group's offsets, pending ones too (its partition is no longer led here; they stay in the
        log)."""
        self._offsets.pop(group_id, None)
        for producers in self._open.pop(group_id, {}).values():
            for producer_id in producers:
                by_group = self._pending.get(producer_id, {})
                by_group.pop(group_id, None)
                if not by_group:
                    self._pending.pop(producer_id, None)

    def has_offsets(self, group_id: str) -> bool:
        """Whether the group has committed offsets, or offsets pending in a transaction."""
        return bool(self._offsets.get(group_id)) or group_id in self._open

    def offset_count(self) -> int:
        """The committed offsets held, over every group."""
        return sum(len(partitions) for partitions in self._offsets.values())

    def group_ids(self) -> Iterator[str]:
        """The groups with committed or pending offsets."""
        return iter(list(dict.fromkeys([*self._offsets, *self._open])))

    def tombstones(self, group_id: str, partitions: list[TopicPartition] | None = None
                   ) -> list[records.CoordinatorRecord]:
        """Tombstones for the given partitions' offsets that exist; when None, for all of the group's, those
        pending in transactions too (deleting a group drops them, as Kafka's deleteAllOffsets does)."""
        held = self._offsets.get(group_id, {})
        chosen = (list(dict.fromkeys([*held, *self._open.get(group_id, {})])) if partitions is None
                  else [tp for tp in partitions if tp in held])
        return [records.offset_commit_tombstone(group_id, topic, partition) for topic, partition in chosen]

    # ---- OffsetCommit --------------------------------------------------------------------------------------------

    def commit(self, group_id: str, member_id: str, group_instance_id: str | None, generation_or_epoch: int,
               retention_ms: int, commits: list[PartitionCommit], api_version: int) -> dict[TopicPartition, int]:
        """Error code per (topic, partition); a group-level failure is raised."""
        if not group_id:
            raise InvalidGroupIdError("the group id is empty")
        self._validate_commit(group_id, member_id, group_instance_id, generation_or_epoch, api_version)
        return self._write_commits(group_id, commits, retention_ms)

    def commit_transactional(self, group_id: str, producer_id: int, producer_epoch: int, member_id: str,
                             group_instance_id: str | None, generation_id: int, commits: list[PartitionCommit],
                             api_version: int) -> dict[TopicPartition, int]:
        """TxnOffsetCommit: error code per (topic, partition); the offsets stay pending until the producer's
        transaction ends. A group-level failure is raised."""
        if not group_id:
            raise InvalidGroupIdError("the group id is empty")
        group = self.runtime.groups.get(group_id)
        if group is None:
            if generation_id >= 0:
                raise IllegalGenerationError(f"group {group_id} does not exist")
            self.runtime.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
        else:
            try:
                group.validate_offset_commit(member_id, group_instance_id, generation_id, api_version,
                                             is_transactional=True)
            except StaleMemberEpochError as exc:
                raise IllegalGenerationError(str(exc)) from None
        return self._write_commits(group_id, commits, DEFAULT_RETENTION, producer_id, producer_epoch)

    def _write_commits(self, group_id: str, commits: list[PartitionCommit], retention_ms: int,
                       producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH
                       ) -> dict[TopicPartition, int]:
        config = self.runtime.config
        now = self.runtime.now_ms()
        codes: dict[TopicPartition, int] = {}
        out = []
        for p in commits:
            code = self._partition_error(p)
            codes[(p.topic, p.partition)] = code
            if code != ErrorCode.NONE:
                continue
            timestamp = p.commit_timestamp_ms if p.commit_timestamp_ms >= 0 else now
            expire = None
            if p.commit_timestamp_ms >= 0:  # v1: Kafka stores an explicit expiry for these
                expire = timestamp + config.offsets_retention_ms
            elif retention_ms != DEFAULT_RETENTION:
                expire = timestamp + retention_ms
            out.append(records.offset_commit(group_id, p.topic, p.partition, p.offset, p.leader_epoch,
                                             p.metadata or "", timestamp, expire))
        try:
            self.write(group_id, out, producer_id, producer_epoch)
        except KafkaError as exc:
            return {tp: exc.code if code == ErrorCode.NONE else code for tp, code in codes.items()}
        return codes

    def _validate_commit(self, group_id: str, member_id: str, group_instance_id: str | None,
                         generation_or_epoch: int, api_version: int) -> None:
        group = self.runtime.groups.get(group_id)
        if group is None:
            if generation_or_epoch >= 0:
                if api_version >= FIRST_GROUP_ID_NOT_FOUND_COMMIT_VERSION:
                    raise GroupIdNotFoundError(f"group {group_id} does not exist")
                raise IllegalGenerationError(f"group {group_id} does not exist")
            self.runtime.groups[group_id] = ClassicGroup(group_id, state_timestamp_ms=self.runtime.now_ms())
            return
        group.validate_offset_commit(member_id, group_instance_id, generation_or_epoch, api_version)

    def _partition_error(self, p: PartitionCommit) -> int:
        topic = self.runtime.topics.topic(p.topic)
        if topic is None or not 0 <= p.partition < topic.partitions:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if p.metadata is not None and len(p.metadata.encode()) > self.runtime.config.offset_metadata_max_bytes:
            return ErrorCode.OFFSET_METADATA_TOO_LARGE
        return ErrorCode.NONE

    # ---- OffsetFetch ---------------------------------------------------------------------------------------------

    def fetch(self, group_id: str, topics: list[tuple[str, list[int]]] | None, member_id: str | None = None,
              member_epoch: int = -1, require_stable: bool = False) -> list[tuple[str, list[FetchedOffset]]]:
        """[(topic, offsets)]; topics None means every partition the group committed. With `require_stable`, a
        partition with offsets pending in a transaction is UNSTABLE_OFFSET_COMMIT. A group-level failure is
        raised."""
        group = self.runtime.groups.get(group_id)
        if group is not None:
            group.validate_offset_fetch(member_id, member_epoch)
        held = self._offsets.get(group_id, {})
        if topics is None:
            topics = [(topic, [p for _, p in partitions])
                      for topic, partitions in itertools.groupby(sorted(held), key=lambda tp: tp[0])]
        return [(topic, [self._fetched(group_id, held, (topic, p), require_stable) for p in partitions])
                for topic, partitions in topics]

    def _fetched(self, group_id: str, held: dict[TopicPartition, OffsetAndMetadata], tp: TopicPartition,
                 require_stable: bool) -> FetchedOffset:
        if require_stable and self.has_pending_transactional_offsets(group_id, tp):
            return FetchedOffset(tp[1], NO_OFFSET, NO_LEADER_EPOCH, "", ErrorCode.UNSTABLE_OFFSET_COMMIT)
        o = held.get(tp)
        if o is None:
            return FetchedOffset(tp[1], NO_OFFSET, NO_LEADER_EPOCH, "")
        return FetchedOffset(tp[1], o.committed_offset, o.leader_epoch, o.metadata)

    # ---- OffsetDelete --------------------------------------------------------------------------------------------

    def delete(self, group_id: str, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The error per partition of an OffsetDelete; a group-level failure is raised."""
        group = self.runtime.groups.get(group_id)
        if group is None:
            raise GroupIdNotFoundError(f"group {group_id} does not exist")
        if isinstance(group, ClassicGroup) and not group.is_empty() and group.subscribed_topics() is None:
            raise NonEmptyGroupError(f"group {group_id} is not empty and its subscriptions are not known")
        codes = {}
        deletable = []
        for topic, partition in partitions:
            if group.is_subscribed_to_topic(topic):
                codes[(topic, partition)] = ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
            else:
                codes[(topic, partition)] = ErrorCode.NONE
                deletable.append((topic, partition))
        self.write(group_id, self.tombstones(group_id, deletable))
        return codes

    # ---- expiry --------------------------------------------------------------------------------------------------

    def expire(self, group_id: str) -> int:
        """Delete the expired offsets of an empty (or unknown) group; returns how many went."""
        group = self.runtime.groups.get(group_id)
        if group is not None and not group.is_empty():
            return 0
        empty_since = None
        if isinstance(group, ClassicGroup) and group.protocol_type is not None:
            empty_since = group.state_timestamp_ms
        expired = self._expired(group_id, self.runtime.now_ms(), self.runtime.config.offsets_retention_ms,
                                empty_since)
        if expired:
            log.info("expiring %d offsets of group %s (offsets.retention.minutes)", len(expired), group_id)
            self.write(group_id, self.tombstones(group_id, expired))
        return len(expired)

    def _expired(self, group_id: str, now_ms: int, retention_ms: int, empty_since_ms: int | None
                 ) -> list[TopicPartition]:
        """The partitions whose offsets have expired; `empty_since_ms` is when the group became empty, None for
        a group that never had members (a "simple" group that only commits). A partition with offsets pending in
        a transaction keeps its offset until the transaction ends, as in Kafka."""
        expired = []
        for tp, offset in self._offsets.get(group_id, {}).items():
            if self.has_pending_transactional_offsets(group_id, tp):
                continue
            if offset.expire_timestamp_ms is not None:
                if now_ms >= offset.expire_timestamp_ms:
                    expired.append(tp)
                continue
            base = offset.commit_timestamp_ms if empty_since_ms is None else max(empty_since_ms,
                                                                                 offset.commit_timestamp_ms)
            if now_ms >= base + retention_ms:
                expired.append(tp)
        return expired
