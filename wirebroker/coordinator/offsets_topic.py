"""The internal topic `__consumer_offsets`: the group coordinator's records (internal_records.py) in an internal
topic (internal_topic.py: creation, the partition of a group, acks=all writes, loading).

Created (by FindCoordinator or the first write) with `offsets.topic.num.partitions` partitions,
`offsets.topic.replication.factor` replicas, compaction and `offsets.topic.segment.bytes` segments, as Kafka creates
it. Each coordinator write is one uncompressed RecordBatch with one record per CoordinatorRecord, within
`offsets.commit.timeout.ms`. Consumers of the topic (Kafka's console consumer with the offsets formatter) are woken
like for any other append.
"""

from __future__ import annotations

from typing import Any

from wirebroker.coordinator import internal_records
from wirebroker.coordinator.group import GroupConfig
from wirebroker.coordinator.internal_topic import InternalTopic, InternalTopicSpec
from wirebroker.log.producer_state import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

OFFSETS_TOPIC = "__consumer_offsets"


class OffsetsTopic(InternalTopic):
    def __init__(self, broker: Any, config: GroupConfig) -> None:
        super().__init__(broker, InternalTopicSpec(
            OFFSETS_TOPIC, config.offsets_topic_num_partitions, config.offsets_topic_replication_factor,
            config.offsets_commit_timeout_ms,
            {"cleanup.policy": "compact", "compression.type": "producer",
             "segment.bytes": str(config.offsets_topic_segment_bytes)},
            "group coordinator"))
        self.config = config

    def append(self, partition: int, records: list[internal_records.CoordinatorRecord],
               producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH) -> None:
        self.append_records(partition, [(internal_records.encode_key(r), internal_records.encode_value(r))
                                        for r in records], producer_id, producer_epoch)
