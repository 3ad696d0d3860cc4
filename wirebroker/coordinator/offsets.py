"""Committed offsets (Kafka's OffsetMetadataManager): what each group committed for each partition, and expiry.

State is changed only by replaying OffsetCommit records (a commit and a load take the same path): a value sets the
partition's offset, a tombstone deletes it. Expiry (`offsets.retention.minutes`, KIP-211): a group's offsets are
kept while it has members; once it is empty they expire `retention` after the later of the commit and the moment
the group became empty (groups that never used group management count from the commit alone). An offset committed
with an explicit expire timestamp (OffsetCommit v1) expires then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from wirebroker.coordinator import internal_records as records
from wirebroker.protocol.messages.offset_commit_value import OffsetCommitValue

NO_OFFSET = -1
NO_LEADER_EPOCH = -1


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    committed_offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    expire_timestamp_ms: int | None = None

    @classmethod
    def from_record_value(cls, value: OffsetCommitValue, version: int) -> OffsetAndMetadata:
        expire = value.expire_timestamp if version == records.OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY else -1
        return cls(value.offset, value.leader_epoch, value.metadata, value.commit_timestamp,
                   expire if expire >= 0 else None)


TopicPartition = tuple[str, int]


class OffsetStore:
    def __init__(self) -> None:
        self._offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}

    def replay(self, record: records.CoordinatorRecord) -> None:
        key = record.key
        if record.value is None:
            partitions = self._offsets.get(key.group)
            if partitions is not None:
                partitions.pop((key.topic, key.partition), None)
                if not partitions:
                    del self._offsets[key.group]
            return
        self._offsets.setdefault(key.group, {})[(key.topic, key.partition)] = OffsetAndMetadata.from_record_value(
            record.value, record.value_version)

    def get(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        return self._offsets.get(group_id, {}).get((topic, partition))

    def of_group(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return dict(self._offsets.get(group_id, {}))

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    def group_ids(self) -> Iterator[str]:
        return iter(list(self._offsets))

    def tombstones(self, group_id: str, partitions: list[TopicPartition] | None = None
                   ) -> list[records.CoordinatorRecord]:
        """Tombstones for the given partitions' offsets (all of the group's when None) that exist."""
        held = self._offsets.get(group_id, {})
        chosen = list(held) if partitions is None else [tp for tp in partitions if tp in held]
        return [records.offset_commit_tombstone(group_id, topic, partition) for topic, partition in chosen]

    def expired(self, group_id: str, now_ms: int, retention_ms: int, empty_since_ms: int | None
                ) -> list[TopicPartition]:
        """The partitions whose offsets have expired; `empty_since_ms` is when the group became empty, None for
        a group that never had members (a "simple" group that only commits)."""
        expired = []
        for tp, offset in self._offsets.get(group_id, {}).items():
            if offset.expire_timestamp_ms is not None:
                if now_ms >= offset.expire_timestamp_ms:
                    expired.append(tp)
                continue
            base = offset.commit_timestamp_ms if empty_since_ms is None else max(empty_since_ms,
                                                                                 offset.commit_timestamp_ms)
            if now_ms >= base + retention_ms:
                expired.append(tp)
        return expired
