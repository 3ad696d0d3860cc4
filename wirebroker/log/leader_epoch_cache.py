"""The leader epoch cache of a partition (Kafka's LeaderEpochFileCache), kept in <partition dir>/leader-epoch-checkpoint.

It maps each leader epoch to the first offset written in it, in increasing order of both. Followers and consumers ask
it for the end offset of an epoch (OffsetForLeaderEpoch) to detect a diverging log; ListOffsets asks it for the epoch
of an offset. The file format is in checkpoints.py. As in Kafka, a new epoch is written to the file at once; a
truncation rewrites it too, except the loader's (`write=False`, Kafka's truncateFromEndAsyncFlush, KAFKA-15046): the
entries it removes are found again by the next load in any case, and two fsyncs per partition made start-up with many
partitions slow. The next change of the cache writes the file whole, unless it restores what the file holds (a
leader re-assigning the epoch the loader truncated from an empty log).
"""

from __future__ import annotations

import logging
import os
import threading

from wirebroker.log.checkpoints import (
    CorruptCheckpointError,
    EpochEntry,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)
from wirebroker.log.files import LEADER_EPOCH_CHECKPOINT_FILE

log = logging.getLogger(__name__)

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochFileCache:
    def __init__(self, partition_dir: str, name: str = "") -> None:
        self.path = os.path.join(partition_dir, LEADER_EPOCH_CHECKPOINT_FILE)
        self._name = name or os.path.basename(partition_dir)
        self._lock = threading.RLock()
        self._epochs: list[EpochEntry] = []
        try:
            entries = read_leader_epoch_checkpoint(self.path)
        except CorruptCheckpointError as exc:
            log.warning("Ignoring the leader epoch checkpoint of %s, it will be rebuilt from the log: %s",
                        self._name, exc)
            entries = []
        for entry in entries:
            self._assign(entry)
        self._on_disk = entries  # what the file holds: a change that restores it writes nothing

    # --- queries ---

    def epoch_entries(self) -> list[EpochEntry]:
        return list(self._epochs)

    def latest_entry(self) -> EpochEntry | None:
        epochs = self._epochs
        return epochs[-1] if epochs else None

    def earliest_entry(self) -> EpochEntry | None:
        epochs = self._epochs
        return epochs[0] if epochs else None

    @property
    def latest_epoch(self) -> int | None:
        entry = self.latest_entry()
        return None if entry is None else entry.epoch

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch that was current when `offset` was written, or None if it predates every entry."""
        previous = None
        for entry in self._epochs:
            if entry.start_offset == offset:
                return entry.epoch
            if entry.start_offset > offset:
                return previous
            previous = entry.epoch
        return previous

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch: the largest epoch <= requested and the start of the next."""
        with self._lock:
            epochs = self._epochs
            if requested_epoch == UNDEFINED_EPOCH or not epochs:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            if epochs[-1].epoch == requested_epoch:
                return requested_epoch, log_end_offset
            higher = next((e for e in epochs if e.epoch > requested_epoch), None)
            if higher is None:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            floor = next((e for e in reversed(epochs) if e.epoch <= requested_epoch), None)
            if floor is None:
                # Older than anything cached: the data is gone, the next epoch's start is the safe answer.
                return requested_epoch, higher.start_offset
            return floor.epoch, higher.start_offset

    # --- updates ---

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` began at `start_offset`; entries that contradict it are dropped."""
        with self._lock:
            epochs = self._epochs
            # Nearly every append: its epoch is already the latest, begun at or before it (no entry built).
            if epochs and epochs[-1].epoch == epoch and start_offset >= epochs[-1].start_offset:
                return
            if self._assign(EpochEntry(epoch, start_offset)):
                self._write()

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        latest = self.latest_entry()
        if latest is not None and entry.epoch == latest.epoch and entry.start_offset >= latest.start_offset:
            return False
        kept = list(self._epochs)
        removed = []
        while kept and (kept[-1].epoch >= entry.epoch or kept[-1].start_offset >= entry.start_offset):
            removed.append(kept.pop())
        if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
            log.warning("New epoch entry %s caused truncation of conflicting entries %s in the leader epoch cache "
                        "of %s", entry, removed, self._name)
        kept.append(entry)
        self._epochs = kept
        return True

    def truncate_from_end(self, end_offset: int, *, write: bool = True) -> None:
        """Remove the entries starting at or after `end_offset` (the log was truncated to it)."""
        with self._lock:
            kept = [e for e in self._epochs if e.start_offset < end_offset]
            if end_offset >= 0 and len(kept) != len(self._epochs):
                self._epochs = kept
                if write:
                    self._write()

    def truncate_from_start(self, start_offset: int, *, write: bool = True) -> None:
        """Drop entries before `start_offset`, keeping the epoch current at it (now starting there)."""
        with self._lock:
            before = [e for e in self._epochs if e.start_offset <= start_offset]
            if not before:
                return
            epochs = [EpochEntry(before[-1].epoch, start_offset), *self._epochs[len(before):]]
            if epochs != self._epochs:
                self._epochs = epochs
                if write:
                    self._write()

    def clear_and_flush(self) -> None:
        with self._lock:
            self._epochs = []
            self._write()

    def _write(self) -> None:
        if self._epochs != self._on_disk and os.path.isdir(os.path.dirname(self.path)):
            write_leader_epoch_checkpoint(self.path, self._epochs)
            self._on_disk = self._epochs

    def update_dir(self, partition_dir: str) -> None:
        """Follow a renamed partition directory."""
        self.path = os.path.join(partition_dir, LEADER_EPOCH_CHECKPOINT_FILE)
