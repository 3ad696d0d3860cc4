"""A coordinator's internal topic (`__consumer_offsets`, `__transaction_state`): created on first use, appended to
by its coordinator, read back when the coordinator takes a partition over.

What the group and transaction coordinators share, as Kafka's GroupMetadataManager and TransactionStateManager do
the same things with their topics:
- creation (by FindCoordinator or the first write) with the topic's partitions, replication factor and configs
  (compaction, segment size), as Kafka creates it. Kafka refuses to create it while fewer brokers than the
  replication factor are up (COORDINATOR_NOT_AVAILABLE until then), and so does a broker in ZooKeeper mode; a
  single-node broker would then never have a coordinator with the default factor of 3, so its controller caps the
  factor at 1, with a warning (TopicAdmin.internal_topic_replication_factor);
- the partition of a key (a group id, a transactional id): Utils.abs(key.hashCode) % partitions, and its leader,
  the coordinator of that key;
- writes: one uncompressed RecordBatch of (key, value) records appended as the leader through the replica manager
  with acks=all: the write returns once the high watermark passes it (every in-sync replica has it, so a new leader
  loads it), within the coordinator's write timeout. Errors are mapped as Kafka maps them, to what a coordinator's
  clients retry on: NOT_LEADER_OR_FOLLOWER is NOT_COORDINATOR (find the new coordinator), too few replicas or a
  timeout is COORDINATOR_NOT_AVAILABLE;
- transactional writes (the group coordinator's TxnOffsetCommit): the batch carries the producer id and epoch and
  is appended with origin COORDINATOR (producer epochs checked, no sequences), as is a transaction's COMMIT/ABORT
  marker (`append_end_txn_marker`, the replica manager's `append_txn_markers`);
- loading: every (key, value) of a partition, control batches skipped (`read_all`), or batch by batch with the
  producer id and the transaction marker of each (`read_batches`, for a coordinator that replays transactions).

In a cluster the topic's partitions are led by different brokers: `exists` asks only the metadata, and `leader`
names the broker coordinating a key.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.timer import wall_clock_ms
from wirebroker.log.producer_state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    AppendOrigin,
)
from wirebroker.protocol.errors import (
    CoordinatorNotAvailableError,
    ErrorCode,
    KafkaError,
    TopicAlreadyExistsError,
    error_class,
)
from wirebroker.protocol.records import (
    BATCH_HEADER_SIZE,
    build_batch,
    iter_records,
    read_control_record,
    read_header,
)

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 1024 * 1024  # how much of a partition's log the loader reads at a time
MAX_DECOMPRESSED_BATCH_BYTES = 64 * 1024 * 1024  # a compressed batch larger than this is corrupt, not ours
ACKS_ALL = -1
MIN_ISR = "min.insync.replicas"
ANSWER_MARGIN_S = 1.0  # past the write timeout, the produce purgatory has answered REQUEST_TIMED_OUT
# Kafka's GroupMetadataManager and TransactionStateManager: append errors as the coordinator's clients should see
# them (others unchanged).
APPEND_ERROR_FOR_CLIENTS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


class LoadedBatch(NamedTuple):
    """One batch read back from the topic: its producer (NO_PRODUCER_ID unless a transaction wrote it), its
    (key, value) records, and for a transaction marker whether it commits."""

    producer_id: int
    records: list[tuple[bytes, bytes | None]]
    commit: bool | None = None  # a COMMIT (True) or ABORT (False) marker, which has no records; None: data


@dataclass(frozen=True, slots=True)
class InternalTopicSpec:
    """How a coordinator's topic is created and written (from the broker's `<prefix>.*` settings)."""

    name: str
    num_partitions: int
    replication_factor: int
    write_timeout_ms: int
    configs: Mapping[str, str] = field(default_factory=dict)  # topic configs at creation (compaction, segments)
    coordinator: str = "coordinator"  # who writes, for the log lines: "group coordinator"


class InternalTopic:
    def __init__(self, broker: Any, spec: InternalTopicSpec) -> None:
        self.broker = broker
        self.spec = spec
        self._create_lock = threading.Lock()  # a second asker waits until every partition is hosted

    @property
    def num_partitions(self) -> int:
        topic = self.broker.cluster_view.topic(self.spec.name)  # in memory in either mode (asked on every request)
        return len(topic.partitions) if topic is not None else self.spec.num_partitions

    def partition_for(self, key: str) -> int:
        """The partition holding `key` (a group id, a transactional id), as Kafka's partitionFor."""
        return partition_for(key, self.num_partitions)

    def exists(self) -> bool:
        topic = self.broker.metadata.topic(self.spec.name)
        if topic is None or self.broker.metadata_cache is not None:
            return topic is not None  # in a cluster, other brokers host some partitions
        return self.broker.replica_manager.partition(self.spec.name, topic.partitions - 1) is not None

    def leader(self, key: str) -> int | None:
        """The broker leading the key's partition, which coordinates the key (None: no leader now)."""
        topic = self.broker.cluster_view.topic(self.spec.name)
        if topic is None:
            return None
        leader = topic.partitions[partition_for(key, len(topic.partitions))].leader
        return leader if leader >= 0 else None

    def ensure_created(self) -> None:
        if self.exists():
            return
        with self._create_lock:
            if not self.exists():
                self._create()

    def _create(self) -> None:
        controller = self.broker.controller
        try:
            replication_factor = controller.internal_topic_replication_factor(self.spec.replication_factor)
            configs = dict(self.spec.configs)
            if int(configs.get(MIN_ISR, 1)) > replication_factor:
                # The replication factor capped on a single node caps the min ISR too, or no write would succeed.
                log.warning("creating %s with %s=%d: its setting is %s, more than its %d replicas", self.spec.name,
                            MIN_ISR, replication_factor, configs[MIN_ISR], replication_factor)
                configs[MIN_ISR] = str(replication_factor)
            controller.create_topic(self.spec.name, self.spec.num_partitions, replication_factor, configs)
        except TopicAlreadyExistsError:
            pass
        except KafkaError as exc:
            raise CoordinatorNotAvailableError(f"cannot create {self.spec.name}: {exc}") from None

    def append_records(self, partition: int, records: list[tuple[bytes, bytes | None]],
                       producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH) -> None:
        """Write (key, value) records (a None value is a tombstone), replicated, or raise the Kafka error the
        coordinator's clients should see. With a producer id the batch is part of that producer's transaction."""
        self.ensure_created()
        transactional = producer_id != NO_PRODUCER_ID
        batch = bytearray(build_batch([(wall_clock_ms(), key, value, ()) for key, value in records],
                                      producer_id=producer_id, producer_epoch=producer_epoch,
                                      is_transactional=transactional))  # offsets set in place
        origin = AppendOrigin.COORDINATOR if transactional else AppendOrigin.CLIENT

        def append(respond: Callable[[int, str | None], None]) -> None:
            self.broker.replica_manager.append_records(
                [(self.spec.name, partition, memoryview(batch))], ACKS_ALL, self.spec.write_timeout_ms,
                lambda results: respond(results[0].error_code, results[0].message), origin)

        self._write(partition, f"{len(records)} {self.spec.coordinator} records", append)

    def append_end_txn_marker(self, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                              commit: bool) -> None:
        """Write a transaction's COMMIT (else ABORT) marker, replicated, or raise the Kafka error."""
        def append(respond: Callable[[int, str | None], None]) -> None:
            self.broker.replica_manager.append_txn_markers(
                producer_id, producer_epoch, coordinator_epoch, commit, [(self.spec.name, partition)],
                self.spec.write_timeout_ms, lambda codes: respond(next(iter(codes.values())), None))

        self._write(partition, f"the {'COMMIT' if commit else 'ABORT'} marker of producer {producer_id}", append)

    def _write(self, partition: int, what: str,
               append: Callable[[Callable[[int, str | None], None]], None]) -> None:
        """Run `append` (which answers an error code and message, maybe from the produce purgatory) and wait."""
        answer: list[tuple[int, str | None]] = []
        answered = threading.Event()

        def respond(code: int, message: str | None) -> None:
            answer.append((code, message))
            answered.set()

        append(respond)
        if not answered.wait(self.spec.write_timeout_ms / 1000 + ANSWER_MARGIN_S) or not answer:
            code, message = ErrorCode.REQUEST_TIMED_OUT, "no answer from the replica manager"
        else:
            code, message = answer[0]
        if code == ErrorCode.NONE:
            return
        name = self.spec.name
        client_code = APPEND_ERROR_FOR_CLIENTS.get(code, code)
        log.warning("writing %s to %s-%d failed with %s (%s); the clients are told %s", what, name, partition,
                    ErrorCode(code).name, message, ErrorCode(client_code).name)
        raise error_class(client_code)(f"writing to {name}-{partition} failed: {message}")

    def read_all(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        """Every (key, value) of the partition, from its log start to its end (tombstones included, control
        batches skipped); nothing when the partition is not hosted here."""
        for batch in self.read_batches(partition):
            yield from batch.records

    def read_batches(self, partition: int) -> Iterator[LoadedBatch]:
        """Every batch of the partition, from its log start to its end; nothing when it is not hosted here."""
        hosted = self.broker.replica_manager.partition(self.spec.name, partition)
        if hosted is None:
            return
        log_ = hosted.log
        offset = log_.log_start_offset
        while offset < log_.log_end_offset:
            data = log_.read(offset, READ_CHUNK_BYTES, min_one_message=True).records
            chunk = data if isinstance(data, bytes) else os.pread(data.fileno, data.size, data.position)
            if not chunk:
                break
            pos = 0
            while pos + BATCH_HEADER_SIZE <= len(chunk):
                header = read_header(chunk, pos)
                if pos + header.size > len(chunk):
                    break
                records = list(iter_records(chunk, pos, header, MAX_DECOMPRESSED_BATCH_BYTES))
                if header.is_control:
                    if records:  # an empty control batch: the cleaner removed its transaction
                        yield LoadedBatch(header.producer_id, [], read_control_record(records[0])[0])
                else:
                    yield LoadedBatch(header.producer_id, [(r.key, r.value) for r in records if r.key is not None])
                offset = header.next_offset
                pos += header.size
