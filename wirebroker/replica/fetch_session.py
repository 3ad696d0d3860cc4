"""Incremental fetch sessions (KIP-227; Kafka's FetchSession.scala): the broker remembers what a consumer fetches.

A fetch names a session id and epoch:
- id 0, epoch -1: a sessionless full fetch; id 0, epoch 0: a full fetch that opens a session (the response carries
  its id, unless the cache is full); id N, epoch -1: close session N, sessionless full fetch; id N, epoch 0: close
  session N and open a new one.
- id N, epoch E > 0: an incremental fetch. The request lists only partitions that are new or changed and names
  forgotten ones; the broker merges them into the session and answers only for partitions with something new
  (records, an error, a moved high watermark, last stable offset or log start offset). Unknown N:
  FETCH_SESSION_ID_NOT_FOUND; E not the session's next epoch: INVALID_FETCH_SESSION_EPOCH.
Sessions are keyed by (topic id, partition) from Fetch v13 and by (topic name, partition) before. The cache keeps
`max.incremental.fetch.session.cache.slots` sessions and evicts the least recently used.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from wirebroker.protocol.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
SESSION_ID_NONE = 0


@dataclass(slots=True)
class CachedPartition:
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def changed_by(self, error_code: int, has_records: bool, high_watermark: int, last_stable_offset: int,
                   log_start_offset: int) -> bool:
        """Whether an incremental response must mention this partition; remembers what it sends."""
        changed = (error_code != ErrorCode.NONE or has_records or high_watermark != self.high_watermark
                   or last_stable_offset != self.last_stable_offset or log_start_offset != self.log_start_offset)
        self.high_watermark = high_watermark
        self.last_stable_offset = last_stable_offset
        self.log_start_offset = log_start_offset
        return changed


class FetchSession:
    def __init__(self, session_id: int, partitions: OrderedDict[Hashable, CachedPartition]) -> None:
        self.id = session_id
        self.partitions = partitions
        self.next_epoch = 1
        self.last_used = time.monotonic()
        self.lock = threading.Lock()


@dataclass(slots=True)
class FetchContext:
    """What to fetch and how to answer: `partitions` in response order; `session` None for sessionless fetches."""

    partitions: list[tuple[Hashable, CachedPartition]]
    session: FetchSession | None = None
    incremental: bool = False
    error_code: int = ErrorCode.NONE

    @property
    def session_id(self) -> int:
        return self.session.id if self.session else SESSION_ID_NONE


class FetchSessionCache:
    def __init__(self, max_slots: int = 1000) -> None:
        self.max_slots = max_slots
        self._sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def new_context(
        self,
        session_id: int,
        epoch: int,
        requested: list[tuple[Hashable, CachedPartition]],
        forgotten: list[Hashable],
    ) -> FetchContext:
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != SESSION_ID_NONE:
                self._remove(session_id)
            if epoch == FINAL_EPOCH:
                return FetchContext(requested)
            return FetchContext(requested, self._create(requested))
        with self._lock:
            session = self._sessions.get(session_id)
            if session is not None:
                self._sessions.move_to_end(session_id)
        if session is None:
            return FetchContext([], error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        with session.lock:
            if epoch != session.next_epoch:
                return FetchContext([], error_code=ErrorCode.INVALID_FETCH_SESSION_EPOCH)
            for key in forgotten:
                session.partitions.pop(key, None)
            for key, wanted in requested:
                cached = session.partitions.get(key)
                if cached is None:
                    session.partitions[key] = wanted
                else:
                    cached.fetch_offset = wanted.fetch_offset
                    cached.max_bytes = wanted.max_bytes
                    cached.current_leader_epoch = wanted.current_leader_epoch
            session.next_epoch = session.next_epoch + 1 if session.next_epoch < 2**31 - 1 else 1
            session.last_used = time.monotonic()
            return FetchContext(list(session.partitions.items()), session, incremental=True)

    def round_robin(self, session: FetchSession, keys_with_records: list[Hashable]) -> None:
        """Move partitions that returned data to the end, so that the others get their turn (Kafka does this)."""
        with session.lock:
            for key in keys_with_records:
                if key in session.partitions:
                    session.partitions.move_to_end(key)

    def _create(self, requested: list[tuple[Hashable, CachedPartition]]) -> FetchSession | None:
        with self._lock:
            if len(self._sessions) >= self.max_slots:
                if not self._sessions:
                    return None
                self._sessions.popitem(last=False)  # the least recently used session makes room
            session_id = random.randint(1, 2**31 - 1)
            while session_id in self._sessions:
                session_id = random.randint(1, 2**31 - 1)
            session = FetchSession(session_id, OrderedDict(requested))
            self._sessions[session_id] = session
            return session

    def _remove(self, session_id: int) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
