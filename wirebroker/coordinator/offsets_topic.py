"""The internal topic `__consumer_offsets`: created on first use, appended to by the coordinator, read at start-up.

Created (by FindCoordinator or the first write) with `offsets.topic.num.partitions` partitions, compaction, and
`offsets.topic.segment.bytes` segments, as Kafka creates it. Kafka refuses to create it while fewer brokers than
`offsets.topic.replication.factor` are up (COORDINATOR_NOT_AVAILABLE until then), and so does a broker in ZooKeeper
mode; a single-node broker would then never have groups with the default factor of 3, so its controller caps the
factor at 1, with a warning (TopicAdmin.internal_topic_replication_factor).
Each coordinator write is one uncompressed RecordBatch with one record per CoordinatorRecord (internal_records.py),
appended as the leader through the replica manager so consumers of the topic (Kafka's console consumer with the
offsets formatter) are woken like for any other append.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

from wirebroker.coordinator import internal_records
from wirebroker.coordinator.group import GroupConfig
from wirebroker.coordinator.timer import wall_clock_ms
from wirebroker.protocol.errors import (
    CoordinatorNotAvailableError,
    ErrorCode,
    KafkaError,
    TopicAlreadyExistsError,
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
ACKS_LEADER = 1


class OffsetsTopic:
    def __init__(self, broker: Any, config: GroupConfig) -> None:
        self.broker = broker
        self.config = config
        self._create_lock = threading.Lock()  # a second asker waits until every partition is hosted

    @property
    def num_partitions(self) -> int:
        topic = self.broker.metadata.topic(OFFSETS_TOPIC)
        return topic.partitions if topic is not None else self.config.offsets_topic_num_partitions

    def exists(self) -> bool:
        topic = self.broker.metadata.topic(OFFSETS_TOPIC)
        return topic is not None and self.broker.replica_manager.partition(OFFSETS_TOPIC, topic.partitions - 1) \
            is not None

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
        self.broker.replica_manager.append_records([(OFFSETS_TOPIC, partition, memoryview(batch))], ACKS_LEADER,
                                                   0, results.extend)
        if not results or results[0].error_code != ErrorCode.NONE:
            message = results[0].message if results else "no answer"
            log.error("writing %d group coordinator records to %s-%d failed: %s", len(records), OFFSETS_TOPIC,
                      partition, message)
            raise CoordinatorNotAvailableError(f"writing to {OFFSETS_TOPIC}-{partition} failed: {message}")

    def read_all(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        """Every (key, value) of the partition, from its log start to its end (tombstones included)."""
        log_ = self.broker.replica_manager.partition(OFFSETS_TOPIC, partition).log
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
