"""The replica manager (Kafka's ReplicaManager): the partitions this broker hosts and the produce/fetch paths.

It creates a partition's log when the metadata says the partition exists, deletes it when the topic goes, and
serves the two hot paths: `append_records` (append each partition's batches, answer now or park the request in
the produce purgatory until acks=all is met) and `fetch_messages` (read each partition, answer now or park the
request in the fetch purgatory until min_bytes arrive or max_wait_ms passes). Appends wake the fetch purgatory;
high-watermark moves wake the produce purgatory.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wirebroker.cluster.metadata import TopicMetadata
from wirebroker.log.config import LogConfig
from wirebroker.log.fetch_data import FetchDataInfo
from wirebroker.log.log import LogAppendInfo
from wirebroker.log.manager import LogManager
from wirebroker.protocol.errors import ErrorCode, InvalidRecordError, KafkaError, UnknownTopicOrPartitionError
from wirebroker.replica.delayed import (
    DelayedFetch,
    DelayedProduce,
    FetchPartitionStatus,
    ProducePartitionStatus,
)
from wirebroker.replica.partition import Partition
from wirebroker.replica.purgatory import DelayedOperationPurgatory

log = logging.getLogger(__name__)

ACKS_ALL = -1


@dataclass(slots=True)
class AppendResult:
    error_code: int
    message: str | None = None
    info: LogAppendInfo | None = None  # set when the append succeeded


@dataclass(slots=True)
class FetchRead:
    """One partition's part of a fetch: what to read, then what was read."""

    topic: str
    partition_index: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    partition: Partition | None = None
    error_code: int = ErrorCode.NONE
    data: FetchDataInfo | None = None
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1


class ReplicaManager:
    def __init__(self, log_manager: LogManager, broker_log_config: LogConfig) -> None:
        self.log_manager = log_manager
        self.broker_log_config = broker_log_config
        self._partitions: dict[tuple[str, int], Partition] = {}
        self._lock = threading.Lock()
        self.produce_purgatory = DelayedOperationPurgatory("Produce")
        self.fetch_purgatory = DelayedOperationPurgatory("Fetch")

    # ---- partitions ----------------------------------------------------------------------------------------

    def partition(self, topic: str, index: int) -> Partition | None:
        return self._partitions.get((topic, index))

    def online_partition(self, topic: str, index: int) -> Partition:
        partition = self._partitions.get((topic, index))
        if partition is None:
            raise UnknownTopicOrPartitionError(f"This server does not host this topic-partition: {topic}-{index}")
        return partition

    def partitions_of(self, topic: str) -> list[Partition]:
        return [p for (name, _), p in sorted(self._partitions.items()) if name == topic]

    def log_config(self, topic: TopicMetadata) -> LogConfig:
        return self.broker_log_config.with_overrides(topic.configs)

    def make_partitions(self, topic: TopicMetadata) -> None:
        """Host every partition of the topic that is not hosted yet (creating logs as needed)."""
        config = self.log_config(topic)
        with self._lock:
            for index in range(topic.partitions):
                if (topic.name, index) not in self._partitions:
                    log_ = self.log_manager.get_or_create_log(topic.name, index, topic.topic_id, config)
                    self._partitions[(topic.name, index)] = Partition(topic.name, index, topic.topic_id, log_)

    def update_topic_config(self, topic: TopicMetadata) -> None:
        config = self.log_config(topic)
        for partition in self.partitions_of(topic.name):
            partition.log.update_config(config)

    def remove_topic(self, topic: TopicMetadata) -> None:
        with self._lock:
            removed = [self._partitions.pop((topic.name, i)) for i in range(topic.partitions)
                       if (topic.name, i) in self._partitions]
        for partition in removed:
            self.log_manager.delete_log(partition.topic, partition.index)
            self.fetch_purgatory.check_and_complete((partition.topic, partition.index))

    def shutdown(self) -> None:
        self.produce_purgatory.shutdown()
        self.fetch_purgatory.shutdown()

    # ---- produce -------------------------------------------------------------------------------------------

    def append_records(
        self,
        entries: Sequence[tuple[str, int, memoryview | None]],
        acks: int,
        timeout_ms: int,
        respond: Callable[[list[AppendResult]], None],
    ) -> None:
        """Append each (topic, partition, records) and call `respond` with one AppendResult per entry, in order:
        at once, or from the produce purgatory when acks=all has to wait for the high watermark."""
        results = [self._append(topic, index, records) for topic, index, records in entries]
        appended = [(entries[i], r) for i, r in enumerate(results) if r.error_code == ErrorCode.NONE]
        for (topic, index, _), _result in appended:
            self.fetch_purgatory.check_and_complete((topic, index))
        if acks != ACKS_ALL or not appended:
            respond(results)
            return
        statuses = [
            ProducePartitionStatus(self._partitions[(topic, index)], result.info.last_offset + 1, result)
            for (topic, index, _), result in appended
        ]

        def respond_when_acknowledged(done: list[ProducePartitionStatus]) -> None:
            for status in done:
                if status.error_code:
                    status.result.error_code = status.error_code
            respond(results)

        operation = DelayedProduce(timeout_ms, statuses, respond_when_acknowledged)
        self.produce_purgatory.try_complete_else_watch(operation, [(t, i) for (t, i, _), _ in appended])

    def _append(self, topic: str, index: int, records: memoryview | None) -> AppendResult:
        try:
            partition = self.online_partition(topic, index)
            if records is None:
                raise InvalidRecordError("the produce request carries no records for this partition")
            info = partition.append_records_as_leader(records)
        except KafkaError as exc:
            return AppendResult(exc.code, str(exc))
        except Exception:
            log.exception("appending to %s-%d failed; answering UNKNOWN_SERVER_ERROR", topic, index)
            return AppendResult(ErrorCode.UNKNOWN_SERVER_ERROR, "unexpected error appending to the log")
        self.produce_purgatory.check_and_complete((topic, index))
        return AppendResult(ErrorCode.NONE, None, info)

    # ---- fetch ---------------------------------------------------------------------------------------------

    def fetch_messages(
        self,
        reads: list[FetchRead],
        max_bytes: int,
        min_bytes: int,
        max_wait_ms: int,
        isolation_level: int,
        respond: Callable[[list[FetchRead]], None],
    ) -> None:
        """Read every partition and call `respond` with the reads filled in: at once when min_bytes are there,
        max_wait_ms is 0 or a partition failed; otherwise when enough bytes arrive or max_wait_ms passes."""
        self._read_all(reads, max_bytes, isolation_level)
        read_bytes = sum(len(r.data.records) for r in reads if r.data is not None)
        errors = any(r.error_code for r in reads)
        if max_wait_ms <= 0 or not reads or read_bytes >= min_bytes or errors:
            respond(reads)
            return
        statuses = [FetchPartitionStatus(r.partition, r.fetch_offset) for r in reads if r.partition is not None]

        def complete() -> None:
            self._read_all(reads, max_bytes, isolation_level)
            respond(reads)

        operation = DelayedFetch(max_wait_ms, min_bytes, isolation_level, statuses, complete)
        self.fetch_purgatory.try_complete_else_watch(operation, [(r.topic, r.partition_index) for r in reads])

    def _read_all(self, reads: list[FetchRead], max_bytes: int, isolation_level: int) -> None:
        """Fill in each read; the first partition with data may exceed the limits by one batch (KIP-74)."""
        remaining = max_bytes
        for read in reads:
            read.error_code = ErrorCode.NONE
            read.data = None
            try:
                partition = read.partition or self.online_partition(read.topic, read.partition_index)
                read.partition = partition
                partition.check_leader_epoch(read.current_leader_epoch)
                read.high_watermark = partition.high_watermark
                read.last_stable_offset = partition.last_stable_offset
                read.log_start_offset = partition.log_start_offset
                min_one_message = remaining == max_bytes
                read.data = partition.read(read.fetch_offset, min(read.max_bytes, max(remaining, 0)),
                                           isolation_level, min_one_message)
            except KafkaError as exc:
                read.error_code = exc.code
                continue
            remaining -= len(read.data.records)
