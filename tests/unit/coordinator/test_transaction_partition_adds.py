"""A partition leader's adds to a transaction (KIP-890 part 2) through the in-process coordinator: the partitions
join as a protocol 2 add, the coordinator's refusals come back as a produce expects them, CONCURRENT_TRANSACTIONS is
retried for add.partitions.to.txn.retry.backoff.max.ms, and no coordinator is COORDINATOR_NOT_AVAILABLE."""

from __future__ import annotations

import threading
import time

import pytest

from tests.unit.coordinator.test_transaction_coordinator import TIMEOUT, env  # noqa: F401  (the fixture)
from wirebroker.coordinator.transaction_partition_adds import (
    RETRY_BACKOFF_MAX_S,
    AddPartitionsToTxnManager,
)
from wirebroker.coordinator.transaction_state import (
    TRANSACTION_VERSION_2,
    TransactionState,
)
from wirebroker.protocol.errors import ConcurrentTransactionsError, ErrorCode

NODE_ID = 1
HERE = (NODE_ID, "127.0.0.1", 9092)


def add(manager: AddPartitionsToTxnManager, *args) -> dict:
    """Run one add to its answer."""
    answered = threading.Event()
    result: dict = {}

    def on_done(errors: dict) -> None:
        result.update(errors)
        answered.set()

    manager.add(*args, on_done)
    assert answered.wait(5)
    return result


@pytest.fixture
def manager(env):  # noqa: F811
    coordinator = env[0]
    adds = AddPartitionsToTxnManager(coordinator, lambda partition: HERE, NODE_ID, request_timeout_ms=30_000)
    yield adds
    adds.shutdown()


def test_the_coordinator_here_adds_the_partitions_as_protocol_2(env, manager):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert add(manager, "t", pid, epoch, [("a", 0), ("a", 1)]) == {}
    metadata = coordinator.describe("t")
    assert metadata.state is TransactionState.ONGOING
    assert metadata.partitions == {("a", 0), ("a", 1)}
    assert metadata.client_transaction_version == TRANSACTION_VERSION_2


def test_refusals_are_answered_as_a_produce_expects_them(env, manager):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert add(manager, "t", pid, epoch - 1, [("a", 0)]) == {("a", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert add(manager, "t", pid + 1, epoch, [("a", 0)]) == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


def test_concurrent_transactions_is_retried_then_answered(env, manager):  # noqa: F811
    coordinator, _, _, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    coordinator.end_transaction("t", pid, epoch, commit=True, transaction_version=TRANSACTION_VERSION_2)
    started = time.monotonic()  # PrepareCommit: the markers are not delivered
    assert add(manager, "t", pid, epoch + 1, [("a", 0)]) == {("a", 0): ErrorCode.CONCURRENT_TRANSACTIONS}
    assert time.monotonic() - started >= RETRY_BACKOFF_MAX_S

    threading.Timer(0.03, markers.deliver_all).start()  # the markers land while the broker retries
    assert add(manager, "t", pid, epoch + 1, [("a", 0)]) == {}
    assert coordinator.describe("t").partitions == {("a", 0)}


def test_without_a_coordinator_it_is_not_available(env):  # noqa: F811
    adds = AddPartitionsToTxnManager(env[0], lambda partition: None, NODE_ID, request_timeout_ms=30_000)
    try:
        assert add(adds, "t", 1, 0, [("a", 0)]) == {("a", 0): ErrorCode.COORDINATOR_NOT_AVAILABLE}
    finally:
        adds.shutdown()


def test_a_protocol_2_transaction_fenced_before_its_end_gets_version_2_markers(env, manager):  # noqa: F811
    coordinator, _, _, markers, _ = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert add(manager, "t", pid, epoch, [("a", 0)]) == {}
    with pytest.raises(ConcurrentTransactionsError):  # a new producer: the open transaction is aborted first
        coordinator.init_producer_id("t", TIMEOUT)
    [sent] = markers.deliver_all()
    assert (sent.committed, sent.producer_epoch, sent.transaction_version) == (False, epoch + 1, TRANSACTION_VERSION_2)
    assert coordinator.init_producer_id("t", TIMEOUT) == (pid, epoch + 2)


def test_a_protocol_2_add_is_reloaded_from_the_log(env, manager):  # noqa: F811
    coordinator, _, _, _, new_coordinator = env
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert add(manager, "t", pid, epoch, [("a", 0), ("b", 2)]) == {}
    reloaded = new_coordinator().describe("t")
    assert (reloaded.state, reloaded.partitions) == (TransactionState.ONGOING, {("a", 0), ("b", 2)})
    assert (reloaded.producer_id, reloaded.producer_epoch) == (pid, epoch)
    assert reloaded.client_transaction_version == TRANSACTION_VERSION_2
