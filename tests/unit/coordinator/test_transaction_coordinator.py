"""The transaction coordinator's requests, time-outs, markers and reload, on an in-memory log and a manual clock."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from wirebroker.coordinator import transaction_log
from wirebroker.coordinator.group import partition_for
from wirebroker.coordinator.timer import ManualTimer
from wirebroker.coordinator.transaction_coordinator import (
    TransactionConfig,
    TransactionCoordinator,
)
from wirebroker.coordinator.transaction_markers import TxnMarkers
from wirebroker.coordinator.transaction_state import TransactionState
from wirebroker.protocol.errors import (
    ConcurrentTransactionsError,
    InvalidProducerIdMappingError,
    InvalidTransactionTimeoutError,
    InvalidTxnStateError,
    NotCoordinatorError,
    NotEnoughReplicasError,
    ProducerFencedError,
)

S = TransactionState
TIMEOUT = 60_000


class MemoryStateLog:
    num_partitions = 3

    def __init__(self) -> None:
        self.records: dict[int, list[tuple[bytes, bytes | None]]] = {p: [] for p in range(self.num_partitions)}
        self.fail_next = False

    def partition_for(self, key: str) -> int:
        return partition_for(key, self.num_partitions)

    def append_records(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> None:
        if self.fail_next:
            self.fail_next = False
            raise NotEnoughReplicasError("test")
        self.records[partition].extend(records)

    def read_all(self, partition: int) -> Iterator[tuple[bytes, bytes | None]]:
        yield from self.records[partition]


class Markers:
    def __init__(self) -> None:
        self.sent: list[tuple[TxnMarkers, Callable[[], None]]] = []

    def send(self, markers: TxnMarkers, on_done: Callable[[], None]) -> None:
        self.sent.append((markers, on_done))

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def deliver_all(self) -> list[TxnMarkers]:
        sent, self.sent = self.sent, []
        for _, on_done in sent:
            on_done()
        return [markers for markers, _ in sent]


@pytest.fixture
def env():
    state_log, timer, markers, ids = MemoryStateLog(), ManualTimer(), Markers(), itertools.count(1000)
    config = TransactionConfig(transactional_id_expiration_ms=3_600_000)

    def coordinator() -> TransactionCoordinator:
        c = TransactionCoordinator(config, state_log, timer, markers, lambda: next(ids))
        c.start(load_in_background=False)
        return c

    return coordinator(), state_log, timer, markers, coordinator


def test_commit_writes_prepare_then_markers_then_complete(env):
    coordinator, state_log, _, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert (pid, epoch) == (1000, 0)
    coordinator.add_partitions("t", pid, epoch, {("a", 0), ("a", 1)})
    coordinator.add_partitions("t", pid, epoch, {("__consumer_offsets", 3)})
    coordinator.end_transaction("t", pid, epoch, commit=True)
    assert coordinator.describe("t").state is S.PREPARE_COMMIT
    with pytest.raises(ConcurrentTransactionsError):
        coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    [sent] = markers.deliver_all()
    assert (sent.producer_id, sent.producer_epoch, sent.committed) == (pid, 0, True)
    assert sent.partitions == {("a", 0), ("a", 1), ("__consumer_offsets", 3)}
    assert coordinator.describe("t").state is S.COMPLETE_COMMIT
    coordinator.end_transaction("t", pid, epoch, commit=True)  # a retry of the commit: NONE
    with pytest.raises(InvalidTxnStateError):
        coordinator.end_transaction("t", pid, epoch, commit=False)
    written = [transaction_log.decode(k, v).transit.state for k, v in state_log.records[state_log.partition_for("t")]]
    assert written == [S.EMPTY, S.ONGOING, S.ONGOING, S.PREPARE_COMMIT, S.COMPLETE_COMMIT]


def test_a_second_producer_fences_the_first_and_aborts_its_transaction(env):
    coordinator, _, _, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    with pytest.raises(ConcurrentTransactionsError):
        coordinator.init_producer_id("t", TIMEOUT)  # the zombie's transaction is being aborted
    [abort] = markers.deliver_all()
    assert (abort.committed, abort.producer_epoch) == (False, 1)  # the markers carry the bumped epoch
    assert coordinator.init_producer_id("t", TIMEOUT) == (pid, 2)
    with pytest.raises(ProducerFencedError):
        coordinator.add_partitions("t", pid, epoch, {("a", 1)})
    with pytest.raises(ProducerFencedError):
        coordinator.end_transaction("t", pid, epoch, commit=True)
    with pytest.raises(InvalidProducerIdMappingError):
        coordinator.end_transaction("t", pid + 1, 2, commit=True)


def test_a_timed_out_transaction_is_aborted_with_a_bumped_epoch(env):
    coordinator, _, timer, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", 5000)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    timer.advance(10_000)  # the first check, one cleanup interval in, finds it 10 s old with a 5 s timeout
    [abort] = markers.deliver_all()
    assert (abort.committed, abort.producer_epoch) == (False, 1)
    assert coordinator.describe("t").state is S.COMPLETE_ABORT
    with pytest.raises(ProducerFencedError):
        coordinator.end_transaction("t", pid, epoch, commit=True)


def test_a_failed_write_leaves_the_state_unchanged(env):
    coordinator, state_log, _, _, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    state_log.fail_next = True
    with pytest.raises(NotEnoughReplicasError):
        coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    metadata = coordinator.describe("t")
    assert (metadata.state, metadata.pending_state, metadata.partitions) == (S.EMPTY, None, set())


def test_state_is_reloaded_and_a_prepared_transaction_completed(env):
    coordinator, _, _, markers, new_coordinator = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    coordinator.end_transaction("t", pid, epoch, commit=False)
    markers.sent.clear()  # the broker died before the markers went out
    other_pid, _ = coordinator.init_producer_id("u", TIMEOUT)
    restarted = new_coordinator()
    assert restarted.describe("t").state is S.PREPARE_ABORT
    [resent] = markers.deliver_all()
    assert (resent.producer_id, resent.committed, resent.partitions) == (pid, False, {("a", 0)})
    assert restarted.describe("t").state is S.COMPLETE_ABORT
    assert restarted.init_producer_id("t", TIMEOUT) == (pid, 1)
    assert restarted.init_producer_id("u", TIMEOUT) == (other_pid, 1)


def test_expired_ids_are_removed_and_resigned_partitions_unloaded(env):
    coordinator, state_log, timer, _, new_coordinator = env
    coordinator.init_producer_id("t", TIMEOUT)
    timer.advance(3_600_000)
    with pytest.raises(Exception, match="not known"):
        coordinator.describe("t")
    assert state_log.records[state_log.partition_for("t")][-1][1] is None  # a tombstone
    assert new_coordinator().list_transactions(set(), set()) == []
    coordinator.on_resignation(state_log.partition_for("t"))
    with pytest.raises(NotCoordinatorError):
        coordinator.init_producer_id("t", TIMEOUT)


def test_timeouts_and_list_filters(env):
    coordinator, _, _, _, _ = env
    with pytest.raises(InvalidTransactionTimeoutError):
        coordinator.init_producer_id("t", 900_001)
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.init_producer_id("u", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    assert [m.transactional_id for m in coordinator.list_transactions({S.ONGOING}, set())] == ["t"]
    assert [m.transactional_id for m in coordinator.list_transactions(set(), {pid})] == ["t"]
    assert coordinator.verify_partitions("t", pid, epoch, {("a", 0), ("a", 1)}) == {("a", 0): True, ("a", 1): False}


TV2 = 2  # EndTxn v5 (KIP-890 part 2)


def test_transaction_version_2_bumps_the_epoch_at_every_end(env):
    coordinator, state_log, _, markers, new_coordinator = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    assert coordinator.end_transaction("t", pid, epoch, commit=True, transaction_version=TV2) == (pid, epoch + 1)
    with pytest.raises(ConcurrentTransactionsError):  # a retry (the epoch before the bump) while completing
        coordinator.end_transaction("t", pid, epoch, commit=True, transaction_version=TV2)
    [sent] = markers.deliver_all()
    assert (sent.producer_epoch, sent.transaction_version, sent.committed) == (epoch + 1, TV2, True)
    assert coordinator.end_transaction("t", pid, epoch, commit=True, transaction_version=TV2) == (pid, epoch + 1)
    with pytest.raises(InvalidTxnStateError):  # a retry, but of the other outcome
        coordinator.end_transaction("t", pid, epoch, commit=False, transaction_version=TV2)
    with pytest.raises(ProducerFencedError):
        coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    coordinator.add_partitions("t", pid, epoch + 1, {("a", 1)})  # the next transaction, at the new epoch
    assert coordinator.end_transaction("t", pid, epoch + 1, commit=False, transaction_version=TV2) == (pid, epoch + 2)
    [sent] = markers.deliver_all()
    assert (sent.producer_epoch, sent.committed, sent.partitions) == (epoch + 2, False, {("a", 1)})
    # the bumped epochs and the client's transaction version are in the log: a reloaded coordinator knows the retry
    restarted = new_coordinator()
    assert restarted.end_transaction("t", pid, epoch + 1, commit=False, transaction_version=TV2) == (pid, epoch + 2)
    with pytest.raises(ProducerFencedError):
        restarted.end_transaction("t", pid, epoch, commit=False, transaction_version=TV2)
    last = transaction_log.decode(*state_log.records[state_log.partition_for("t")][-1]).transit
    assert (last.state, last.producer_epoch, last.client_transaction_version) == (S.COMPLETE_ABORT, epoch + 2, TV2)


def test_transaction_version_2_aborts_with_nothing_open_and_rotates_an_exhausted_epoch(env):
    coordinator, _, _, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    with pytest.raises(InvalidTxnStateError):
        coordinator.end_transaction("t", pid, epoch, commit=True, transaction_version=TV2)
    assert coordinator.end_transaction("t", pid, epoch, commit=False, transaction_version=TV2) == (pid, epoch + 1)
    [sent] = markers.deliver_all()
    assert (sent.producer_epoch, sent.partitions) == (epoch + 1, frozenset())
    assert coordinator.describe("t").state is S.COMPLETE_ABORT
    last_epoch = 32766  # Short.MAX_VALUE - 1: the end bumps to the maximum and the producer goes on with a new id
    coordinator.describe("t").producer_epoch = last_epoch
    coordinator.add_partitions("t", pid, last_epoch, {("a", 0)})
    assert coordinator.end_transaction("t", pid, last_epoch, commit=True,
                                       transaction_version=TV2) == (pid, last_epoch + 1)
    [sent] = markers.deliver_all()
    assert (sent.producer_id, sent.producer_epoch) == (pid, last_epoch + 1)
    rotated = coordinator.describe("t")
    assert (rotated.producer_id, rotated.previous_producer_id, rotated.producer_epoch) == (1001, pid, 0)
    # the retry of the old id at its last epoch is answered with the new id
    assert coordinator.end_transaction("t", pid, last_epoch, commit=True, transaction_version=TV2) == (1001, 0)
    coordinator.add_partitions("t", 1001, 0, {("a", 0)})
    with pytest.raises(InvalidProducerIdMappingError):
        coordinator.end_transaction("t", pid, 0, commit=True, transaction_version=TV2)
