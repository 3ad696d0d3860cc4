"""A partition this broker leads (Kafka's Partition): its log, leader epoch and high watermark.

On a single broker the in-sync replica set is the leader alone, so the high watermark follows the log end offset
as soon as an append lands; the same call is where, with followers, the watermark would wait for the slowest
in-sync follower. Requests naming a leader epoch are checked against ours first (KIP-320): an older epoch is
FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
"""

from __future__ import annotations

import time

from wirebroker.log.fetch_data import FetchDataInfo
from wirebroker.log.log import Log, LogAppendInfo
from wirebroker.protocol.errors import FencedLeaderEpochError, UnknownLeaderEpochError

NO_EPOCH = -1
_ALL_BYTES = 2**31 - 1
READ_UNCOMMITTED = 0
READ_COMMITTED = 1


class Partition:
    def __init__(self, topic: str, index: int, topic_id: bytes, log: Log, leader_epoch: int = 0) -> None:
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.log = log
        self.leader_epoch = leader_epoch
        # Becoming leader (Kafka's makeLeader): the epoch starts at the log end offset, and with an ISR of one the
        # high watermark is the log end offset, whatever the checkpoint said before a crash.
        self.log.leader_epoch_cache.assign(leader_epoch, self.log.log_end_offset)
        self.log.update_high_watermark(self.log.log_end_offset)

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        if current_leader_epoch == NO_EPOCH or current_leader_epoch == self.leader_epoch:
            return
        if current_leader_epoch < self.leader_epoch:
            raise FencedLeaderEpochError(
                f"{self}: the request's leader epoch {current_leader_epoch} is older than {self.leader_epoch}"
            )
        raise UnknownLeaderEpochError(
            f"{self}: the request's leader epoch {current_leader_epoch} is newer than {self.leader_epoch}"
        )

    def append_records_as_leader(self, records: memoryview) -> LogAppendInfo:
        """Append a produce request's batches; the high watermark moves with them (the ISR is this broker)."""
        info = self.log.append_as_leader(records, self.leader_epoch, int(time.time() * 1000))
        self.log.update_high_watermark(self.log.log_end_offset)
        return info

    def read(self, fetch_offset: int, max_bytes: int, isolation_level: int, min_one_message: bool) -> FetchDataInfo:
        committed = isolation_level == READ_COMMITTED
        upper_bound = self.last_stable_offset if committed else self.high_watermark
        return self.log.read(fetch_offset, max_bytes, upper_bound, min_one_message,
                             include_aborted_transactions=committed)

    def bytes_available_after(self, fetch_offset: int, isolation_level: int) -> int:
        """How many bytes a consumer at `fetch_offset` could read now (the fetch purgatory's test).

        A read returns a file range, so measuring it copies nothing.
        """
        return len(self.read(fetch_offset, _ALL_BYTES, isolation_level, True).records)
