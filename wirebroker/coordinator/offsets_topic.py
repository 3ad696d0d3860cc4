"""The internal topic `__consumer_offsets`: created on first use, appended to by the coordinator, read at start-up.

Created (by FindCoordinator or the first write) with `offsets.topic.num.partitions` partitions, compaction, and
`offsets.topic.segment.bytes` segments, as Kafka creates it. Kafka refuses to create it while fewer brokers than
`offsets.topic.replication.factor` are up (COORDINATOR_NOT_AVAILABLE until then), and so does a broker in ZooKeeper
mode; a single-node broker would then never have groups with the default factor of 3, so its controller caps the
factor at 1, with a warning (TopicAdmin.internal_topic_replication_factor).
Each coordinator write is one uncompressed RecordBatch with one record per CoordinatorRecord (internal_records.py),
appended as the leader through the replica manager with acks=all, as Kafka's GroupMetadataManager appends: the
write returns once the high watermark passes it (every in-sync replica has it, so a new leader loads it), within
`offsets.commit.timeout.ms`. Its errors are mapped as Kafka maps them, to what a group client retries on:
NOT_LEADER_OR_FOLLOWER is NOT_COORDINATOR (find the new coordinator), too few replicas or a timeout is
COORDINATOR_NOT_AVAILABLE. Consumers of the topic (Kafka's console consumer with the offsets formatter) are woken
like for any other append.

In a cluster the topic's partitions are led by different brokers: `exists` asks only the metadata, and
`leader` names the broker coordinating a group (FindCoordinator).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

from wirebroker.coordinator import internal_records
from wirebroker.coordinator.group import GroupConfig, partition_for
from wirebroker.coordinator.timer import wall_clock_ms
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
    read_header,
)

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"
READ_CHUNK_BYTES = 1024 * 1024  # how much of a partition's log the loader reads at a time
MAX_DECOMPRESSED_BATCH_BYTES = 64 * 1024 * 1024  # a compressed batch larger than this is corrupt, not ours
ACKS_ALL = -1
ANSWER_MARGIN_S = 1.0  # past offsets.commit.timeout.ms, the produce purgatory has answered REQUEST_TIMED_OUT
# Kafka's GroupMetadataManager: append errors as the group clients should see them (others unchanged).
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


class OffsetsTopic:
    def __init__(self, broker: Any, config: GroupConfig) -> None:
        self.broker = broker
        self.config = config
        self._create_lock = threading.Lock()  # a second asker waits until every partition is hosted

    @property
    def num_partitions(self) -> int:
        topic = self.broker.cluster_view.topic(OFFSETS_TOPIC)  # in memory in either mode (asked on every request)
        return len(topic.partitions) if topic is not None else self.config.offsets_topic_num_partitions

    def exists(self) -> bool:
        topic = self.broker.metadata.topic(OFFSETS_TOPIC)
        if topic is None or self.broker.metadata_cache is not None:
            return topic is not None  # in a cluster, other brokers host some partitions
        return self.broker.replica_manager.partition(OFFSETS_TOPIC, topic.partitions - 1) is not None

    def leader(self, group_id: str) -> int | None:
        """The broker leading the group's partition, which coordinates the group (None: no leader now)."""
        topic = self.broker.cluster_view.topic(OFFSETS_TOPIC)
        if topic is None:
            return None
        leader = topic.partitions[partition_for(group_id, len(topic.partitions))].leader
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
            replication_factor = controller.internal_topic_replication_factor(
                self.config.offsets_topic_replication_factor)
            controller.create_topic(OFFSETS_TOPIC, self.config.offsets_topic_num_partitions, replication_factor,
                                    {"cleanup.policy": "compact", "compression.type": "producer",
                                     "segment.bytes": str(self.config.offsets_topic_segment_bytes)})
        except TopicAlreadyExistsError:
            pass
        except KafkaError as exc:
            raise CoordinatorNotAvailableError(f"cannot create {OFFSETS_TOPIC}: {exc}") from None

    def append(self, partition: int, records: list[internal_records.CoordinatorRecord]) -> None:
        self.ensure_created()
        now = wall_clock_ms()
        batch = bytearray(build_batch([(now, internal_records.encode_key(r), internal_records.encode_value(r), ())
                             for r in records]))  # the log writes offsets into it in place
        results: list = []
        answered = threading.Event()

        def respond(answer: list) -> None:
            results.extend(answer)
            answered.set()

        timeout_ms = self.config.offsets_commit_timeout_ms
        self.broker.replica_manager.append_records([(OFFSETS_TOPIC, partition, memoryview(batch))], ACKS_ALL,
                                                   timeout_ms, respond)
        if not answered.wait(timeout_ms / 1000 + ANSWER_MARGIN_S) or not results:
            code, message = ErrorCode.REQUEST_TIMED_OUT, "no answer from the replica manager"
        else:
            code, message = results[0].error_code, results[0].message
        if code == ErrorCode.NONE:
            return
        client_code = APPEND_ERROR_FOR_CLIENTS.get(code, code)
        log.warning("writing %d group coordinator records to %s-%d failed with %s (%s); the clients are told %s",
                    len(records), OFFSETS_TOPIC, partition, ErrorCode(code).name, message,
                    ErrorCode(client_code).name)
        raise error_class(client_code)(f"writing to {OFFSETS_TOPIC}-{partition} failed: {message}")

    def read_all(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        """Every (key, value) of the partition, from its log start to its end (tombstones included); nothing when
        the partition is not hosted here."""
        hosted = self.broker.replica_manager.partition(OFFSETS_TOPIC, partition)
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
                if not header.is_control:
                    for record in iter_records(chunk, pos, header, MAX_DECOMPRESSED_BATCH_BYTES):
                        if record.key is not None:
                            yield record.key, record.value
                offset = header.next_offset
                pos += header.size
