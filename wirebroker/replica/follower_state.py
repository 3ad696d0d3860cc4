"""What a partition leader knows of one follower (Kafka's Replica and ReplicaState): its log end offset and when it
was last caught up.

The leader learns a follower's log end offset from the fetch offset of its Fetch requests. "Caught up" follows
Kafka's rule (Replica.updateFetchStateOrThrow): a fetch at or past the leader's log end offset makes the follower
caught up as of that fetch; a fetch at or past the leader's log end offset *at the previous fetch* makes it caught
up as of the previous fetch. A follower whose last caught-up time is older than replica.lag.time.max.ms leaves the
in-sync replica set.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_OFFSET = -1  # Kafka's UnifiedLog.UnknownOffset: no fetch seen since this broker became leader


@dataclass(slots=True)
class FollowerState:
    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET
    last_caught_up_time_ms: int = 0
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_time_ms: int = 0

    def update_fetch_state(self, fetch_offset: int, leader_end_offset: int, fetch_time_ms: int) -> None:
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, fetch_time_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_time_ms = max(self.last_caught_up_time_ms, self.last_fetch_time_ms)
        self.log_end_offset = fetch_offset
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = fetch_time_ms

    def reset(self, now_ms: int, leader_end_offset: int, in_sync: bool) -> None:
        """A new leadership: the follower's offset is unknown until it fetches; an ISR member counts as caught up
        now, so it gets a whole replica.lag.time.max.ms to show up (Kafka's resetReplicaState)."""
        self.log_end_offset = UNKNOWN_OFFSET
        self.last_caught_up_time_ms = now_ms if in_sync else 0
        self.last_fetch_leader_log_end_offset = leader_end_offset
        self.last_fetch_time_ms = now_ms

    def is_caught_up(self, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        return leader_end_offset == self.log_end_offset or now_ms - self.last_caught_up_time_ms <= max_lag_ms
