"""The internal-topic partitions a coordinator leads, and their loading (what Kafka's group and transaction
coordinators share of onElection / onResignation and their loader thread).

A partition won (`elect`) is owned at once, and loaded by the coordinator's `load(partition, owned)` on one loader
thread, in the order partitions are won (Kafka's group-metadata-manager and transaction-log-manager schedulers),
or inline when the coordinator loads in the foreground (tests). Until the load marks it `loaded`, keys of the
partition are COORDINATOR_LOAD_IN_PROGRESS; keys of a partition not owned are NOT_COORDINATOR (`check`). A load
finishes only if the partition is still owned by the same election (`is_current`): one given up meanwhile is not
loaded. Every method is called under the coordinator's lock, except `elect`, which takes it.

When the last of the partitions won together (at start-up, every one of them) has loaded, one line says how many
loaded and how long it took, with the coordinator's `describe()` of what it now holds (groups and offsets, say).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

log = logging.getLogger(__name__)

from wirebroker.protocol.errors import (
    CoordinatorLoadInProgressError,
    NotCoordinatorError,
)


@dataclass(slots=True, eq=False)
class OwnedPartition:
    """A partition this broker leads: its keys are served once loaded."""

    leader_epoch: int  # the coordinator epoch (the transaction coordinator's markers carry it)
    loaded: bool = False


class PartitionOwnership:
    def __init__(self, topic: str, lock: threading.RLock, load: Callable[[int, OwnedPartition], None],
                 loader_name: str, describe: Callable[[], str] | None = None) -> None:
        self.topic = topic
        self.load_in_background = True
        self._lock = lock
        self._load = load
        self._describe = describe
        self._owned: dict[int, OwnedPartition] = {}
        self._loader = ThreadPoolExecutor(max_workers=1, thread_name_prefix=loader_name)
        # The loads under way: how many partitions are left, how many were won together, since when.
        self._round_lock = threading.Lock()
        self._pending = self._round_size = 0
        self._round_started = 0.0

    def shutdown(self) -> None:
        self._loader.shutdown(wait=False, cancel_futures=True)

    def elect(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads `partition`: owned, and loaded. A partition owned already keeps its state (a new
        leader epoch on the same leader)."""
        with self._lock:
            owned = self._owned.get(partition)
            if owned is not None:
                owned.leader_epoch = max(owned.leader_epoch, leader_epoch)
                return
            load = self._owned[partition] = OwnedPartition(leader_epoch)
        with self._round_lock:
            if self._pending == 0:
                self._round_size, self._round_started = 0, time.monotonic()
            self._pending += 1
            self._round_size += 1
        if self.load_in_background:
            self._loader.submit(self._load_counted, partition, load)
        else:
            self._load_counted(partition, load)

    @contextmanager
    def electing(self) -> Iterator[None]:
        """Partitions won inside the block are one round: its line comes once all of them have loaded, not when
        the loader catches up with the first ones."""
        with self._round_lock:
            if self._pending == 0:
                self._round_size, self._round_started = 0, time.monotonic()
            self._pending += 1
        try:
            yield
        finally:
            self._finished()

    def _load_counted(self, partition: int, load: OwnedPartition) -> None:
        try:
            self._load(partition, load)
        finally:
            self._finished()

    def _finished(self) -> None:
        with self._round_lock:
            self._pending -= 1
            done = self._pending == 0
        if done and self._round_size > 1:  # one partition's load has a line of its own
            held = self._describe() if self._describe is not None else ""
            log.info("Loaded %d partitions of %s in %d ms%s", self._round_size, self.topic,
                     round((time.monotonic() - self._round_started) * 1000), f": {held}" if held else "")

    def resign(self, partition: int, leader_epoch: int | None) -> bool:
        """This broker no longer leads `partition` (unless the resignation is older than the election): whether it
        was given up, so that the coordinator drops its keys."""
        owned = self._owned.get(partition)
        if owned is None or (leader_epoch is not None and leader_epoch < owned.leader_epoch):
            return False
        del self._owned[partition]
        return True

    def get(self, partition: int) -> OwnedPartition | None:
        return self._owned.get(partition)

    def is_current(self, partition: int, load: OwnedPartition) -> bool:
        return self._owned.get(partition) is load

    def is_loaded(self, partition: int) -> bool:
        owned = self._owned.get(partition)
        return owned is not None and owned.loaded

    def all_loaded(self) -> bool:
        return all(owned.loaded for owned in self._owned.values())

    def check(self, partition: int, key: str) -> OwnedPartition:
        """The partition, loaded; else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS naming `key`."""
        owned = self._owned.get(partition)
        if owned is None:
            raise NotCoordinatorError(f"this broker does not lead {self.topic}-{partition} ({key})")
        if not owned.loaded:
            raise CoordinatorLoadInProgressError(f"{self.topic}-{partition} ({key}) is loading")
        return owned
