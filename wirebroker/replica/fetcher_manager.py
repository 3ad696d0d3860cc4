"""The follower's fetcher threads (Kafka's ReplicaFetcherManager / AbstractFetcherManager).

Partitions are spread over `num.replica.fetchers` threads per source broker: a partition goes to the thread
(leader id, fetcher id) with fetcher id = (31 * hash(topic) + partition) mod num.replica.fetchers, as Kafka does.
A leader whose endpoint changed gets a new thread. Threads left without partitions are stopped by
`shutdown_idle_fetcher_threads` (after each LeaderAndIsr, as Kafka does).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from wirebroker.replica.fetcher import (
    FetcherConfig,
    PartitionFetchState,
    PartitionKey,
    ReplicaFetcherThread,
)
from wirebroker.replica.partition import Partition

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    leader_id: int
    host: str
    port: int
    leader_epoch: int
    fetch_offset: int


class ReplicaFetcherManager:
    def __init__(self, config: FetcherConfig, num_fetchers: int,
                 partition_of: Callable[[str, int], Partition | None]) -> None:
        self.config = config
        self.num_fetchers = max(1, num_fetchers)
        self._partition_of = partition_of
        self._threads: dict[tuple[int, int], ReplicaFetcherThread] = {}
        self._lock = threading.Lock()

    def _fetcher_id(self, key: PartitionKey) -> int:
        return (31 * hash(key[0]) + key[1]) % self.num_fetchers

    def add_fetcher_for_partitions(self, partitions: dict[PartitionKey, InitialFetchState]) -> None:
        """Fetch each partition from its leader, starting with truncation (a new leader epoch is a new leader)."""
        with self._lock:
            for key, initial in partitions.items():
                thread_key = (initial.leader_id, self._fetcher_id(key))
                thread = self._threads.get(thread_key)
                if thread is not None and thread.endpoint != (initial.host, initial.port):
                    thread.initiate_shutdown()
                    thread = None
                if thread is None:
                    thread = ReplicaFetcherThread(
                        f"ReplicaFetcherThread-{thread_key[1]}-{initial.leader_id}", initial.leader_id, initial.host,
                        initial.port, self.config, self._partition_of)
                    self._threads[thread_key] = thread
                    thread.start()
                self._remove_locked([key], keep=thread)
                thread.add_partitions({key: PartitionFetchState(initial.leader_epoch, initial.fetch_offset)})
                log.info("Fetching %s-%d from leader %d (%s:%d) at leader epoch %d", key[0], key[1],
                         initial.leader_id, initial.host, initial.port, initial.leader_epoch)

    def remove_fetcher_for_partitions(self, keys: list[PartitionKey]) -> None:
        with self._lock:
            self._remove_locked(keys)

    def _remove_locked(self, keys: list[PartitionKey], keep: ReplicaFetcherThread | None = None) -> None:
        for thread in self._threads.values():
            if thread is not keep:
                thread.remove_partitions(keys)

    def shutdown_idle_fetcher_threads(self) -> None:
        with self._lock:
            for thread_key, thread in list(self._threads.items()):
                if thread.partition_count() == 0:
                    thread.initiate_shutdown()
                    del self._threads[thread_key]

    def shutdown(self) -> None:
        with self._lock:
            for thread in self._threads.values():
                thread.initiate_shutdown()
            self._threads.clear()
