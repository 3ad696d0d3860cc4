"""The coordinator follows `__consumer_offsets` leadership: it serves the groups of the partitions it leads, loads a
partition when elected (COORDINATOR_LOAD_IN_PROGRESS meanwhile), unloads it on resignation (NOT_COORDINATOR)."""

from __future__ import annotations

import threading
import time

from tests.unit.coordinator.conftest import TEST_CONFIG, MemoryRecordLog
from tests.unit.coordinator.test_classic_group import join
from tests.unit.coordinator.test_offsets_and_records import commit
from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.group_coordinator import GroupCoordinator
from wirebroker.protocol.errors import ErrorCode, NotCoordinatorError


class GatedRecordLog(MemoryRecordLog):
    """Reading a partition waits for `gate`: the load of a partition can be caught in progress."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def read_batches(self, partition: int):
        assert self.gate.wait(10)
        return super().read_batches(partition)


def cluster_coordinator(record_log, timer, metadata, load_in_background: bool = False) -> GroupCoordinator:
    coordinator = GroupCoordinator(TEST_CONFIG, record_log, timer, metadata)
    coordinator.start(load_in_background=load_in_background, own_every_partition=False)
    return coordinator


def test_a_single_broker_owns_every_partition(coordinator, record_log):
    groups = [f"g{i}" for i in range(20)]
    assert {partition_for(g, record_log.num_partitions) for g in groups} == set(range(record_log.num_partitions))
    assert all(commit(coordinator, g, {("t", 0): 1})[("t", 0)] == ErrorCode.NONE for g in groups)


def test_groups_of_partitions_not_led_here_are_not_coordinator(record_log, timer, metadata):
    coordinator = cluster_coordinator(record_log, timer, metadata)
    partition = partition_for("g", record_log.num_partitions)
    assert commit(coordinator, "g", {("t", 0): 1})[("t", 0)] == ErrorCode.NOT_COORDINATOR
    assert coordinator.fetch_offsets("g", [("t", [0])])[0] == ErrorCode.NOT_COORDINATOR
    coordinator.on_election(partition, 3)
    assert commit(coordinator, "g", {("t", 0): 1})[("t", 0)] == ErrorCode.NONE
    other = next(g for g in (f"o{i}" for i in range(100)) if partition_for(g, record_log.num_partitions) != partition)
    assert commit(coordinator, other, {("t", 0): 1})[("t", 0)] == ErrorCode.NOT_COORDINATOR
    code, listed = coordinator.list_groups([], [])
    assert code == ErrorCode.NONE and [g.group_id for g in listed] == ["g"]
    assert coordinator.delete_groups([other]) == [(other, ErrorCode.NOT_COORDINATOR)]


def test_an_elected_partition_loads_in_the_background(coordinator, record_log, timer, metadata):
    assert commit(coordinator, "g", {("t", 2): 42})[("t", 2)] == ErrorCode.NONE
    gated = GatedRecordLog()
    gated.partitions = record_log.partitions
    elected = cluster_coordinator(gated, timer, metadata, load_in_background=True)
    try:
        elected.on_election(partition_for("g", gated.num_partitions), 1)
        assert commit(elected, "g", {("t", 0): 1})[("t", 0)] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert elected.list_groups([], [])[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        gated.gate.set()
        deadline = time.monotonic() + 10
        while elected.fetch_offsets("g", [("t", [2])])[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            assert time.monotonic() < deadline, "the partition never finished loading"
            time.sleep(0.01)
        code, topics = elected.fetch_offsets("g", [("t", [2])])
        assert code == ErrorCode.NONE and topics[0][1][0].offset == 42
    finally:
        elected.shutdown()


def test_resignation_unloads_and_reelection_reloads_from_the_log(record_log, timer, metadata):
    coordinator = cluster_coordinator(record_log, timer, metadata)
    partition = partition_for("g", record_log.num_partitions)
    coordinator.on_election(partition, 1)
    assert commit(coordinator, "g", {("t", 1): 9})[("t", 1)] == ErrorCode.NONE
    parked = join(coordinator, group="g", version=3)  # waits for the initial rebalance delay
    assert not parked.items or parked.last.error_code == ErrorCode.NONE
    coordinator.on_resignation(partition, 1)
    assert parked.last.error_code == ErrorCode.NOT_COORDINATOR
    assert "g" not in coordinator.groups
    assert coordinator.fetch_offsets("g", [("t", [1])])[0] == ErrorCode.NOT_COORDINATOR
    timer.advance(TEST_CONFIG.max_session_timeout_ms)  # the unloaded group's timers are gone: nothing is written
    coordinator.on_election(partition, 2)
    code, topics = coordinator.fetch_offsets("g", [("t", [1])])
    assert code == ErrorCode.NONE and topics[0][1][0].offset == 9


def test_a_resignation_older_than_the_election_is_ignored(record_log, timer, metadata):
    coordinator = cluster_coordinator(record_log, timer, metadata)
    partition = partition_for("g", record_log.num_partitions)
    coordinator.on_election(partition, 5)
    coordinator.on_resignation(partition, 4)
    assert commit(coordinator, "g", {("t", 0): 1})[("t", 0)] == ErrorCode.NONE


def test_write_errors_reach_the_client_as_the_record_log_raises_them(record_log, timer, metadata):
    coordinator = cluster_coordinator(record_log, timer, metadata)
    coordinator.on_election(partition_for("g", record_log.num_partitions), 1)
    record_log.fail_with = NotCoordinatorError("lost leadership")
    assert commit(coordinator, "g", {("t", 0): 1})[("t", 0)] == ErrorCode.NOT_COORDINATOR


def test_a_start_reports_once_every_partition_has_loaded(coordinator, record_log, timer, metadata, caplog):
    """One line for the whole start, even when the loader finishes the first partitions before the last is won."""
    for group in ("a", "b", "c"):
        assert commit(coordinator, group, {("t", 0): 1, ("t", 1): 2})[("t", 0)] == ErrorCode.NONE
    restarted = GroupCoordinator(TEST_CONFIG, record_log, timer, metadata)
    with caplog.at_level("INFO", logger="wirebroker.coordinator.partition_ownership"):
        restarted.start(load_in_background=True)
        deadline = time.monotonic() + 10
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    try:
        [line] = [r.getMessage() for r in caplog.records]
        assert line.startswith(f"Loaded {record_log.num_partitions} partitions of __consumer_offsets in ")
        assert line.endswith(" committed offsets") and ", 6 committed offsets" in line
    finally:
        restarted.shutdown()
