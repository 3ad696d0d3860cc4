"""The two delayed operations of the data path: produce waiting for acks=all, fetch waiting for min_bytes.

DelayedProduce completes when every partition it appended to has answered Partition.check_enough_replicas_reach_offset:
a high watermark past its last offset (on one broker that is at once; with followers it waits for the in-sync
replicas), NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below min.insync.replicas meanwhile, or
NOT_LEADER_OR_FOLLOWER when this broker lost the leadership; or at the request timeout with REQUEST_TIMED_OUT for
the partitions still short. DelayedFetch completes when the partitions together hold at least
min_bytes past their fetch offsets, when one of them fails, when a follower's high watermark (Fetch v18+) is behind
the leader's (KIP-1166: the follower learns the new one at once), or at max_wait_ms with whatever there is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wirebroker.protocol.errors import ErrorCode, KafkaError
from wirebroker.replica.purgatory import DelayedOperation


@dataclass(slots=True)
class ProducePartitionStatus:
    partition: Any  # replica.partition.Partition
    required_offset: int  # the high watermark that acknowledges this append (last offset + 1)
    result: Any  # what to answer once acknowledged (the append's outcome)
    acks_pending: bool = True
    error_code: int = ErrorCode.NONE


class DelayedProduce(DelayedOperation):
    def __init__(self, delay_ms: int, statuses: list[ProducePartitionStatus],
                 respond: Callable[[list[ProducePartitionStatus]], None]) -> None:
        super().__init__(delay_ms)
        self.statuses = statuses
        self.respond = respond

    def try_complete(self) -> bool:
        pending = False
        for status in self.statuses:
            if status.acks_pending:
                done, error_code = status.partition.check_enough_replicas_reach_offset(status.required_offset)
                if done or error_code:
                    status.acks_pending = False
                    status.error_code = error_code
                else:
                    pending = True
        return False if pending else self.force_complete()

    def on_expiration(self) -> None:
        for status in self.statuses:
            if status.acks_pending:
                status.error_code = ErrorCode.REQUEST_TIMED_OUT

    def on_complete(self) -> None:
        self.respond(self.statuses)


# Fetch v18's default high watermark of a fetching replica: a consumer's, or that of a follower that sends none.
UNKNOWN_REPLICA_HIGH_WATERMARK = 2**63 - 1


@dataclass(slots=True)
class FetchPartitionStatus:
    partition: Any
    fetch_offset: int
    replica_high_watermark: int = UNKNOWN_REPLICA_HIGH_WATERMARK


class DelayedFetch(DelayedOperation):
    def __init__(self, max_wait_ms: int, min_bytes: int, isolation_level: int, statuses: list[FetchPartitionStatus],
                 complete: Callable[[], None]) -> None:
        super().__init__(max_wait_ms)
        self.min_bytes = min_bytes
        self.isolation_level = isolation_level
        self.statuses = statuses
        self.complete = complete

    def try_complete(self) -> bool:
        accumulated = 0
        for status in self.statuses:
            if status.partition.high_watermark > status.replica_high_watermark:
                return self.force_complete()
            try:
                accumulated += status.partition.bytes_available_after(status.fetch_offset, self.isolation_level)
            except KafkaError:
                return self.force_complete()  # the read will answer the error (truncation, deletion, ...)
        if accumulated >= self.min_bytes:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.complete()
