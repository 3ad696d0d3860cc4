"""A coordinator on a manual clock, writing its records as bytes to memory, over a real metadata store."""

from __future__ import annotations

import pytest

from wirebroker.cluster.metadata import MetadataStore
from wirebroker.coordinator import internal_records
from wirebroker.coordinator.group import GroupConfig
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.coordinator.internal_topic import LoadedBatch
from wirebroker.coordinator.timer import ManualTimer


class MemoryRecordLog:
    """__consumer_offsets as lists of batches of encoded (key, value) pairs: what is read back went through the
    codecs; a transactional write keeps its producer id, a transaction marker is a batch of its own."""

    def __init__(self, num_partitions: int = 4) -> None:
        self.partitions: list[list[LoadedBatch]] = [[] for _ in range(num_partitions)]
        self.fail_with: Exception | None = None

    @property
    def num_partitions(self) -> int:
        return len(self.partitions)

    def append(self, partition: int, records: list[internal_records.CoordinatorRecord], producer_id: int = -1,
               producer_epoch: int = -1) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.partitions[partition].append(LoadedBatch(producer_id, [
            (internal_records.encode_key(r), internal_records.encode_value(r)) for r in records]))

    def append_end_txn_marker(self, partition: int, producer_id: int, producer_epoch: int, coordinator_epoch: int,
                              commit: bool) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.partitions[partition].append(LoadedBatch(producer_id, [], commit))

    def read_batches(self, partition: int):
        return iter(list(self.partitions[partition]))

    def decoded(self) -> list[internal_records.CoordinatorRecord]:
        return [internal_records.decode(k, v) for p in self.partitions for batch in p for k, v in batch.records]


TEST_CONFIG = GroupConfig(initial_rebalance_delay_ms=0, min_session_timeout_ms=1000, consumer_session_timeout_ms=10_000,
                          consumer_heartbeat_interval_ms=1000, offsets_retention_ms=60_000)


@pytest.fixture
def metadata(tmp_path):
    store = MetadataStore(tmp_path, "cluster", 0)
    store.create_topic("t", 6, {})
    store.create_topic("u", 3, {})
    return store


@pytest.fixture
def record_log():
    return MemoryRecordLog()


@pytest.fixture
def timer():
    return ManualTimer()


@pytest.fixture
def make_coordinator(metadata, record_log, timer):
    def make(config: GroupConfig = TEST_CONFIG) -> GroupCoordinator:
        coordinator = GroupCoordinator(config, record_log, timer, metadata)
        coordinator.start(load_in_background=False)
        return coordinator
    return make


@pytest.fixture
def coordinator(make_coordinator):
    return make_coordinator()
