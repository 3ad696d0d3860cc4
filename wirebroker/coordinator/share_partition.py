"""The state of one share-partition (KIP-932; Kafka's SharePartition): which records of a topic partition a share
group has delivered, to whom, how often, and which are done.

Offsets below the share-partition start offset (SPSO) are done; offsets from the end offset (SPEO) on have never
been fetched. Between them every offset is in flight, in one of Kafka's RecordState:

- AVAILABLE: may be acquired by the next ShareFetch of any member;
- ACQUIRED: delivered to one member under an acquisition lock (`group.share.record.lock.duration.ms`); the lock
  expiring makes it AVAILABLE again;
- ACKNOWLEDGED (ACCEPT) and ARCHIVED (REJECT, a GAP, or a record past `group.share.delivery.count.limit`): done.

Each acquisition counts a delivery; a record released (RELEASE, an expired lock, its member's session closed) whose
delivery count has reached the limit is ARCHIVED instead of AVAILABLE, so a poison record stops coming back. The
start offset moves past every leading done record. Acquisition is by whole batches of the log, as Kafka's
batch-optimised mode: offsets with no record (a compacted gap, a control batch) are acquired with their batch and
the client acknowledges them as GAP. The share-partition holds at most `group.share.partition.max.record.locks`
offsets in flight.

Nothing here does I/O or keeps time: the share-partition manager reads the log, runs the lock timers and persists
`state_batches()` through the share coordinator (ACQUIRED is persisted as AVAILABLE, as Kafka persists it).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from wirebroker.protocol.errors import InvalidRecordStateError, InvalidRequestError


class RecordState(enum.IntEnum):
    """Kafka's RecordState ids (the DeliveryState of ShareSnapshot/ShareUpdate records)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    """The AcknowledgeTypes of ShareFetch and ShareAcknowledge (KIP-932; RENEW is v2, KIP-1222)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


DONE = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


@dataclass(frozen=True, slots=True)
class StateBatch:
    """A run of offsets in one state with one delivery count (the StateBatches of the share-state records)."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True, slots=True)
class AcquiredRecords:
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(slots=True)
class _InFlight:
    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None
    lock_id: int = 0


_lock_ids = itertools.count(1)


class SharePartition:
    def __init__(self, start_offset: int, delivery_count_limit: int, max_record_locks: int,
                 batches: Iterable[StateBatch] = (), state_epoch: int = 0) -> None:
        self.start_offset = start_offset
        self.state_epoch = state_epoch  # of the persisted state it was made from: its writes carry it
        self.leader_epoch = -1  # of the topic partition led when it was made: its writes carry it too
        self.end_offset = start_offset
        self.delivery_count_limit = delivery_count_limit
        self.max_record_locks = max_record_locks
        self._records: dict[int, _InFlight] = {}
        for batch in batches:
            for offset in range(max(batch.first_offset, start_offset), batch.last_offset + 1):
                state = RecordState(batch.delivery_state)
                self._records[offset] = _InFlight(RecordState.AVAILABLE if state is RecordState.ACQUIRED else state,
                                                  batch.delivery_count)
            self.end_offset = max(self.end_offset, batch.last_offset + 1)
        for offset in range(start_offset, self.end_offset):  # a gap in what was persisted was never done
            self._records.setdefault(offset, _InFlight())
        self._advance_start()

    # ---- fetching ------------------------------------------------------------------------------------------------

    def next_fetch_offset(self) -> int | None:
        """Where the next read of the log should start: the first AVAILABLE offset in flight, else the end offset;
        None when the in-flight window is full and nothing in it is available."""
        available = next((o for o in range(self.start_offset, self.end_offset)
                          if self._records[o].state is RecordState.AVAILABLE), None)
        if available is not None:
            return available
        if self.end_offset - self.start_offset >= self.max_record_locks:
            return None
        return self.end_offset

    def acquire(self, member_id: str, batches: Iterable[tuple[int, int]], max_records: int,
                log_start_offset: int = 0, record_limit: bool = False,
                aborted: frozenset[tuple[int, int]] = frozenset()) -> tuple[list[AcquiredRecords], int]:
        """Acquire for `member_id` what is AVAILABLE among the batches read from the log ((base offset, last
        offset) each, in order), at most `max_records` offsets: whole batches past the end offset, as Kafka's
        batch-optimised mode, unless `record_limit` (ShareAcquireMode record_limit, KIP-1206) splits them. The
        `aborted` batches (of aborted transactions, read_committed) are archived, never delivered.
        Returns the acquired runs and the lock id their acquisition lock expires by."""
        self.move_start_to(log_start_offset)
        lock_id = next(_lock_ids)
        acquired: list[int] = []
        for base, last in batches:
            if len(acquired) >= max_records:
                break
            if (base, last) in aborted:
                self._archive_batch(base, last)
                continue
            if last >= self.end_offset:
                for offset in range(self.end_offset, min(base, self.start_offset + self.max_record_locks)):
                    self._records[offset] = _InFlight(RecordState.ARCHIVED)  # no record in the log there
                    self.end_offset = offset + 1
            for offset in range(max(base, self.start_offset), last + 1):
                if offset >= self.end_offset:
                    if offset >= self.start_offset + self.max_record_locks or (
                            record_limit and len(acquired) >= max_records):
                        break
                    self._records[offset] = _InFlight()
                    self.end_offset = offset + 1
                elif len(acquired) >= max_records:
                    break
                record = self._records[offset]
                if record.state is RecordState.AVAILABLE:
                    record.state = RecordState.ACQUIRED
                    record.delivery_count += 1
                    record.member_id = member_id
                    record.lock_id = lock_id
                    acquired.append(offset)
        self._advance_start()
        return self._runs(acquired), lock_id

    def _archive_batch(self, base: int, last: int) -> None:
        for offset in range(max(base, self.start_offset), last + 1):
            if offset >= self.end_offset:
                if offset >= self.start_offset + self.max_record_locks:
                    return
                for gap in range(self.end_offset, offset + 1):
                    self._records[gap] = _InFlight(RecordState.ARCHIVED)
                self.end_offset = offset + 1
            elif self._records[offset].state is RecordState.AVAILABLE:
                self._records[offset].state = RecordState.ARCHIVED

    def _runs(self, offsets: list[int]) -> list[AcquiredRecords]:
        runs: list[AcquiredRecords] = []
        for offset in offsets:
            count = self._records[offset].delivery_count
            if runs and runs[-1].last_offset == offset - 1 and runs[-1].delivery_count == count:
                runs[-1] = AcquiredRecords(runs[-1].first_offset, offset, count)
            else:
                runs.append(AcquiredRecords(offset, offset, count))
        return runs

    # ---- acknowledging and releasing -----------------------------------------------------------------------------

    def acknowledge(self, member_id: str, batches: Iterable[tuple[int, int, list[int]]]) -> list[int]:
        """Apply a member's acknowledgements ((first offset, last offset, types) each: one type for the whole
        range or one per offset). All or nothing: a record not ACQUIRED by this member is INVALID_RECORD_STATE.
        Returns the offsets renewed (RENEW), which need a new acquisition lock."""
        changes: list[tuple[int, AcknowledgeType]] = []
        for first, last, types in batches:
            if last < first or (len(types) != 1 and len(types) != last - first + 1) or not types:
                raise InvalidRequestError(f"invalid acknowledgement batch {first}-{last} with {len(types)} types")
            for i, offset in enumerate(range(first, last + 1)):
                try:
                    kind = AcknowledgeType(types[0] if len(types) == 1 else types[i])
                except ValueError:
                    raise InvalidRequestError(f"unknown acknowledge type {types}") from None
                record = self._records.get(offset)
                if record is None or record.state is not RecordState.ACQUIRED or record.member_id != member_id:
                    raise InvalidRecordStateError(f"offset {offset} is not acquired by member {member_id}")
                changes.append((offset, kind))
        renewed = []
        for offset, kind in changes:
            record = self._records[offset]
            if kind is AcknowledgeType.ACCEPT:
                self._finish(record, RecordState.ACKNOWLEDGED)
            elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                self._finish(record, RecordState.ARCHIVED)
            elif kind is AcknowledgeType.RELEASE:
                self._release(record)
            else:
                renewed.append(offset)
        self._advance_start()
        return renewed

    def renew_lock(self, offsets: Iterable[int]) -> int:
        """Put the offsets (still ACQUIRED) under a new acquisition lock; its id."""
        lock_id = next(_lock_ids)
        for offset in offsets:
            self._records[offset].lock_id = lock_id
        return lock_id

    def expire_lock(self, lock_id: int) -> bool:
        """The acquisition lock `lock_id` ran out: what it still holds is released. Whether anything changed."""
        return self._release_where(lambda r: r.lock_id == lock_id)

    def release_member(self, member_id: str) -> bool:
        """A member's share session closed: everything it holds is released. Whether anything changed."""
        return self._release_where(lambda r: r.member_id == member_id)

    def _release_where(self, held: object) -> bool:
        released = [r for r in self._records.values() if r.state is RecordState.ACQUIRED and held(r)]  # type: ignore[operator]
        for record in released:
            self._release(record)
        self._advance_start()
        return bool(released)

    def _release(self, record: _InFlight) -> None:
        self._finish(record, RecordState.ARCHIVED if record.delivery_count >= self.delivery_count_limit
                     else RecordState.AVAILABLE)

    @staticmethod
    def _finish(record: _InFlight, state: RecordState) -> None:
        record.state = state
        record.member_id = None
        record.lock_id = 0

    def move_start_to(self, offset: int) -> None:
        """Records below `offset` left the log (retention, DeleteRecords): they are done."""
        while self.start_offset < offset:
            self._records.pop(self.start_offset, None)
            self.start_offset += 1
        self.end_offset = max(self.end_offset, self.start_offset)

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset and self._records[self.start_offset].state in DONE:
            del self._records[self.start_offset]
            self.start_offset += 1

    # ---- what is persisted and described -------------------------------------------------------------------------

    def state_batches(self) -> list[StateBatch]:
        """The in-flight offsets as runs of (persisted state, delivery count): ACQUIRED is persisted AVAILABLE."""
        return list(self._state_runs())

    def _state_runs(self) -> Iterator[StateBatch]:
        run: StateBatch | None = None
        for offset in range(self.start_offset, self.end_offset):
            record = self._records[offset]
            state = RecordState.AVAILABLE if record.state is RecordState.ACQUIRED else record.state
            if run is not None and run.delivery_state == state and run.delivery_count == record.delivery_count:
                run = StateBatch(run.first_offset, offset, state, record.delivery_count)
                continue
            if run is not None:
                yield run
            run = StateBatch(offset, offset, state, record.delivery_count)
        if run is not None:
            yield run

    def state_of(self, offset: int) -> tuple[RecordState, int]:
        """(state, delivery count) of an offset: done below the start offset, AVAILABLE from the end offset."""
        if offset < self.start_offset:
            return RecordState.ACKNOWLEDGED, 0
        record = self._records.get(offset)
        return (record.state, record.delivery_count) if record is not None else (RecordState.AVAILABLE, 0)

    def delivery_complete_count(self) -> int:
        """Offsets in flight that are done (the DeliveryCompleteCount of the share-state records)."""
        return sum(1 for r in self._records.values() if r.state in DONE)
