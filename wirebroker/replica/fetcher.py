"""A follower's fetcher thread for one source broker (Kafka's ReplicaFetcherThread on AbstractFetcherThread).

Each partition this broker follows from the source is in one of two states:
- truncating: after a leader change the follower first asks the leader OffsetForLeaderEpoch (v4, with our replica
  id) for the end of its latest epoch and truncates its log where the two diverge (truncation.py), round after
  round until the leader's answer is one the follower has; a log with no epochs truncates to its high watermark;
- fetching: one Fetch request (v12, replica_id = this broker, sessionless) carries every fetching partition with its
  fetch offset (our log end offset) and the leader epoch we follow; the answer's batches are appended as they are
  (Log.append_as_follower) and the high watermark is the leader's, capped at our log end offset.
The leader holds a caught-up fetch for replica.fetch.wait.max.ms unless replica.fetch.min.bytes arrive. A failed
round trip, or a partition error (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...), delays the partitions
concerned by replica.fetch.backoff.ms. OFFSET_OUT_OF_RANGE asks the leader its log end and start offsets
(ListOffsets with our replica id, Kafka's fetchOffsetAndTruncate): a leader that ends before us is truncated to; a
leader whose log starts after our end (retention, DeleteRecords) makes us start over empty at its start. The fetcher
manager adds and removes partitions from other threads; a response for a partition removed or re-added meanwhile
is dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.protocol.messages.fetch import FetchRequest, FetchResponse
from wirebroker.protocol.messages.list_offsets import ListOffsetsRequest
from wirebroker.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from wirebroker.replica.partition import Partition
from wirebroker.replica.truncation import offset_truncation_state

log = logging.getLogger(__name__)

FETCH_VERSION = 12  # flexible, topics by name, replica_id in the request (v15 moves it into ReplicaState)
OFFSET_FOR_LEADER_EPOCH_VERSION = 4
LIST_OFFSETS_VERSION = 4  # current_leader_epoch (KIP-320)
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
SESSIONLESS = (0, -1)  # session id, FINAL_EPOCH: a full fetch every time
MAX_TRUNCATION_ROUNDS = 16
READ_UNCOMMITTED = 0

PartitionKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class FetcherConfig:
    """The replica.* settings of a follower."""

    node_id: int
    fetch_max_bytes: int = 1024 * 1024  # replica.fetch.max.bytes, per partition
    fetch_response_max_bytes: int = 10 * 1024 * 1024  # replica.fetch.response.max.bytes
    fetch_wait_max_ms: int = 500  # replica.fetch.wait.max.ms
    fetch_min_bytes: int = 1  # replica.fetch.min.bytes
    fetch_backoff_ms: int = 1000  # replica.fetch.backoff.ms
    socket_timeout_ms: int = 30000  # replica.socket.timeout.ms
    security: Any = None  # a ClientSecurity (network/client_security.py) for a secured inter-broker listener


@dataclass(slots=True)
class PartitionFetchState:
    leader_epoch: int
    fetch_offset: int
    truncating: bool = True
    delayed_until: float = 0.0  # time.monotonic()

    def ready(self, now: float) -> bool:
        return self.delayed_until <= now


class ReplicaFetcherThread:
    def __init__(self, name: str, source_id: int, host: str, port: int, config: FetcherConfig,
                 partition_of: Callable[[str, int], Partition | None]) -> None:
        self.name = name
        self.source_id = source_id
        self.endpoint = (host, port)
        self.config = config
        self._partition_of = partition_of
        self._client = BrokerClient(host, port, f"broker-{config.node_id}-fetcher-{name}",
                                    config.socket_timeout_ms / 1000, security=config.security)
        self._states: dict[PartitionKey, PartitionFetchState] = {}
        self._lock = threading.Condition()
        self._running = True
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    # ---- partitions (called by the fetcher manager) --------------------------------------------------------

    def add_partitions(self, states: dict[PartitionKey, PartitionFetchState]) -> None:
        with self._lock:
            self._states.update(states)
            self._lock.notify()

    def remove_partitions(self, keys: list[PartitionKey]) -> None:
        with self._lock:
            for key in keys:
                self._states.pop(key, None)

    def partition_count(self) -> int:
        with self._lock:
            return len(self._states)

    def initiate_shutdown(self) -> None:
        """Stop after the round trip in flight (at most replica.socket.timeout.ms); nothing waits for it."""
        with self._lock:
            self._running = False
            self._lock.notify()

    # ---- the loop ------------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while self._await_work():
                try:
                    self._truncate()
                    self._fetch()
                except Exception:
                    log.exception("fetcher %s: unexpected error; its partitions retry in %d ms", self.name,
                                  self.config.fetch_backoff_ms)
                    self._client.close()
                    self._delay_all()
        finally:
            self._client.close()

    def _delay_all(self) -> None:
        until = time.monotonic() + self.config.fetch_backoff_ms / 1000
        with self._lock:
            for state in self._states.values():
                state.delayed_until = until

    def _await_work(self) -> bool:
        with self._lock:
            while self._running:
                now = time.monotonic()
                if any(state.ready(now) for state in self._states.values()):
                    return True
                delays = [state.delayed_until - now for state in self._states.values()]
                self._lock.wait(min(delays) if delays else None)
            return False

    def _snapshot(self, truncating: bool) -> dict[PartitionKey, PartitionFetchState]:
        now = time.monotonic()
        with self._lock:
            return {key: PartitionFetchState(s.leader_epoch, s.fetch_offset, s.truncating, s.delayed_until)
                    for key, s in self._states.items() if s.truncating == truncating and s.ready(now)}

    def _current(self, key: PartitionKey, seen: PartitionFetchState) -> PartitionFetchState | None:
        """The partition's state if the manager neither replaced nor removed it since `seen` was taken, and the
        thread is running; called with the lock held. The manager removes a partition (under the same lock) before
        this broker leads it, so nothing done while this is not None can touch a leader's log."""
        current = self._states.get(key)
        if not self._running or current is None or current.leader_epoch != seen.leader_epoch \
                or current.truncating != seen.truncating or current.fetch_offset != seen.fetch_offset:
            return None
        return current

    def _update(self, key: PartitionKey, seen: PartitionFetchState, **changes) -> None:
        with self._lock:
            current = self._current(key, seen)
            if current is not None:
                for name, value in changes.items():
                    setattr(current, name, value)

    def _truncate_log(self, key: PartitionKey, seen: PartitionFetchState, truncate: Callable[[], None]) -> bool:
        """Truncate a follower's log (`truncate`) if the partition is still fetched as `seen`."""
        with self._lock:
            if self._current(key, seen) is None:
                return False
            truncate()
            return True

    def _delay(self, key: PartitionKey, seen: PartitionFetchState, reason: str) -> None:
        log.info("fetcher %s: %s-%d from broker %d: %s; retrying in %d ms", self.name, key[0], key[1],
                 self.source_id, reason, self.config.fetch_backoff_ms)
        self._update(key, seen, delayed_until=time.monotonic() + self.config.fetch_backoff_ms / 1000)

    # ---- truncation ----------------------------------------------------------------------------------------

    def _truncate(self) -> None:
        pending = self._snapshot(truncating=True)
        asking: dict[PartitionKey, int] = {}
        for key, state in pending.items():
            partition = self._partition_of(*key)
            if partition is None:
                self.remove_partitions([key])
                continue
            epoch = partition.log.latest_epoch
            if epoch is None:
                if self._truncate_log(key, state, lambda p=partition: p.truncate_to(p.high_watermark)):
                    self._done_truncating(key, state, partition)
            else:
                asking[key] = epoch
        for _ in range(MAX_TRUNCATION_ROUNDS):
            if not asking:
                return
            answers = self._offsets_for_leader_epoch(asking, pending)
            if answers is None:
                return
            asking = self._apply_truncation(answers, pending)
        for key in asking:
            self._delay(key, pending[key], "truncation did not converge")

    def _offsets_for_leader_epoch(self, asking: dict[PartitionKey, int], states: dict[PartitionKey, PartitionFetchState]
                                  ) -> dict[PartitionKey, OffsetForLeaderEpochResponse.EpochEndOffset] | None:
        topics: dict[str, OffsetForLeaderEpochRequest.OffsetForLeaderTopic] = {}
        for (topic, index), epoch in asking.items():
            entry = topics.setdefault(topic, OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=topic))
            entry.partitions.append(OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                partition=index, current_leader_epoch=states[(topic, index)].leader_epoch, leader_epoch=epoch))
        request = OffsetForLeaderEpochRequest(replica_id=self.config.node_id, topics=list(topics.values()))
        try:
            response = self._client.send(request, OFFSET_FOR_LEADER_EPOCH_VERSION)
        except BrokerUnreachable as exc:
            for key in asking:
                self._delay(key, states[key], f"OffsetForLeaderEpoch failed ({exc})")
            return None
        return {(t.topic, p.partition): p for t in response.topics for p in t.partitions}

    def _apply_truncation(self, answers: dict[PartitionKey, OffsetForLeaderEpochResponse.EpochEndOffset],
                          states: dict[PartitionKey, PartitionFetchState]) -> dict[PartitionKey, int]:
        """Truncate each partition as the leader's answer says; the partitions to ask again, with their epoch."""
        again = {}
        for key, answer in answers.items():
            state, partition = states.get(key), self._partition_of(*key)
            if state is None or partition is None:
                continue
            if answer.error_code:
                self._delay(key, state, f"OffsetForLeaderEpoch answered {ErrorCode(answer.error_code).name}")
                continue
            log_ = partition.log
            offset, completed = offset_truncation_state(answer.leader_epoch, answer.end_offset,
                                                        log_.end_offset_for_epoch, log_.log_end_offset,
                                                        log_.high_watermark)
            if offset < log_.log_end_offset:
                log.info("Truncating %s-%d to offset %d: the leader %d's epoch %d ends at %d (our log end offset %d)",
                         key[0], key[1], offset, self.source_id, answer.leader_epoch, answer.end_offset,
                         log_.log_end_offset)
                if not self._truncate_log(key, state, lambda p=partition, o=offset: p.truncate_to(o)):
                    continue
            if completed or log_.latest_epoch is None:
                self._done_truncating(key, state, partition)
            else:
                again[key] = log_.latest_epoch
        return again

    def _done_truncating(self, key: PartitionKey, state: PartitionFetchState, partition: Partition) -> None:
        self._update(key, state, truncating=False, fetch_offset=partition.log_end_offset)

    # ---- fetching ------------------------------------------------------------------------------------------

    def _fetch(self) -> None:
        fetching = self._snapshot(truncating=False)
        request = self._fetch_request(fetching)
        if request is None:
            return
        try:
            response = self._client.send(request, FETCH_VERSION,
                                         (self.config.socket_timeout_ms + self.config.fetch_wait_max_ms) / 1000)
        except BrokerUnreachable as exc:
            for key, state in fetching.items():
                self._delay(key, state, f"fetch failed ({exc})")
            return
        assert isinstance(response, FetchResponse)
        if response.error_code:
            for key, state in fetching.items():
                self._delay(key, state, f"fetch answered {ErrorCode(response.error_code).name}")
            return
        for topic in response.responses:
            for data in topic.partitions:
                key = (topic.topic, data.partition_index)
                if key in fetching:
                    self._process(key, fetching[key], data)

    def _fetch_request(self, fetching: dict[PartitionKey, PartitionFetchState]) -> FetchRequest | None:
        topics: dict[str, FetchRequest.FetchTopic] = {}
        for (topic, index), state in fetching.items():
            partition = self._partition_of(topic, index)
            if partition is None:
                self.remove_partitions([(topic, index)])
                continue
            latest_epoch = partition.log.latest_epoch
            entry = topics.setdefault(topic, FetchRequest.FetchTopic(topic=topic))
            entry.partitions.append(FetchRequest.FetchPartition(
                partition=index, current_leader_epoch=state.leader_epoch, fetch_offset=state.fetch_offset,
                last_fetched_epoch=-1 if latest_epoch is None else latest_epoch,
                log_start_offset=partition.log_start_offset, partition_max_bytes=self.config.fetch_max_bytes))
        if not topics:
            return None
        session_id, session_epoch = SESSIONLESS
        return FetchRequest(replica_id=self.config.node_id, max_wait_ms=self.config.fetch_wait_max_ms,
                            min_bytes=self.config.fetch_min_bytes, max_bytes=self.config.fetch_response_max_bytes,
                            isolation_level=READ_UNCOMMITTED, session_id=session_id, session_epoch=session_epoch,
                            topics=list(topics.values()), forgotten_topics_data=[], rack_id="")

    def _process(self, key: PartitionKey, state: PartitionFetchState, data: FetchResponse.PartitionData) -> None:
        partition = self._partition_of(*key)
        if partition is None:
            return
        if data.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            self._fetch_offset_and_truncate(key, state, partition)
            return
        if data.error_code:
            self._delay(key, state, f"the leader answered {ErrorCode(data.error_code).name}")
            return
        with self._lock:
            current = self._current(key, state)
            if current is None:
                return  # replaced or removed while the fetch was in flight
            try:
                partition.append_records_as_follower(memoryview(data.records or b""), data.high_watermark,
                                                     data.log_start_offset)
            except KafkaError as exc:
                current.delayed_until = time.monotonic() + self.config.fetch_backoff_ms / 1000
                log.error("%s-%d: appending what leader %d sent at offset %d failed: %s", key[0], key[1],
                          self.source_id, state.fetch_offset, exc)
                return
            current.fetch_offset = partition.log_end_offset

    # ---- out of range --------------------------------------------------------------------------------------

    def _fetch_offset_and_truncate(self, key: PartitionKey, state: PartitionFetchState, partition: Partition) -> None:
        leader_end = self._leader_offset(key, state, LATEST_TIMESTAMP)
        if leader_end is None:
            return
        if leader_end < partition.log_end_offset:
            log.warning("%s-%d: leader %d ends at %d, before our log end offset %d; truncating to it", key[0], key[1],
                        self.source_id, leader_end, partition.log_end_offset)
            if not self._truncate_log(key, state, lambda: partition.truncate_to(leader_end)):
                return
        else:
            leader_start = self._leader_offset(key, state, EARLIEST_TIMESTAMP)
            if leader_start is None:
                return
            if leader_start > partition.log_end_offset:
                log.warning("%s-%d: fetch offset %d is before the leader's log start %d (leader %d); starting over "
                            "there", key[0], key[1], partition.log_end_offset, leader_start, self.source_id)
                if not self._truncate_log(key, state, lambda: partition.truncate_fully_and_start_at(leader_start)):
                    return
        if partition.log_end_offset == state.fetch_offset:
            self._delay(key, state, f"fetch offset {state.fetch_offset} was out of range, yet within the leader's "
                                    f"offsets now")
        else:
            self._update(key, state, fetch_offset=partition.log_end_offset)

    def _leader_offset(self, key: PartitionKey, state: PartitionFetchState, timestamp: int) -> int | None:
        request = ListOffsetsRequest(replica_id=self.config.node_id, isolation_level=READ_UNCOMMITTED, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=key[0], partitions=[ListOffsetsRequest.ListOffsetsPartition(
                partition_index=key[1], current_leader_epoch=state.leader_epoch, timestamp=timestamp)])])
        try:
            response = self._client.send(request, LIST_OFFSETS_VERSION)
        except BrokerUnreachable as exc:
            self._delay(key, state, f"ListOffsets failed ({exc})")
            return None
        answer = response.topics[0].partitions[0] if response.topics and response.topics[0].partitions else None
        if answer is None or answer.error_code:
            self._delay(key, state, "ListOffsets answered "
                        f"{ErrorCode(answer.error_code).name if answer else 'nothing'}")
            return None
        return answer.offset
