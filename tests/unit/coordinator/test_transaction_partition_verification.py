"""A partition leader's verification of a transaction protocol 1 producer's partitions (KIP-890 part 1) through the
in-process coordinator: nothing is written, a partition not in the ongoing transaction is TRANSACTION_ABORTABLE, the
coordinator's refusals come back as a produce expects them, and CONCURRENT_TRANSACTIONS is answered at once (no
coordinator is COORDINATOR_NOT_AVAILABLE, before either is asked: test_transaction_partition_adds)."""

from __future__ import annotations

import threading
import time

import pytest

from tests.unit.coordinator.test_transaction_coordinator import TIMEOUT, env  # noqa: F401  (the fixture)
from tests.unit.coordinator.test_transaction_partition_adds import manager  # noqa: F401  (the fixture)
from wirebroker.coordinator.transaction_partition_adds import (
    RETRY_BACKOFF_MAX_S,
    AddPartitionsToTxnManager,
    TransactionSupportedOperation,
    operation_for_version,
)
from wirebroker.coordinator.transaction_state import TransactionState
from wirebroker.protocol.errors import ErrorCode


def verify(adds: AddPartitionsToTxnManager, *args,
           operation: TransactionSupportedOperation = TransactionSupportedOperation.GENERIC_ERROR_SUPPORTED) -> dict:
    """Run one verification to its answer."""
    answered = threading.Event()
    result: dict = {}

    def on_done(errors: dict) -> None:
        result.update(errors)
        answered.set()

    adds.add(*args, on_done, operation)
    assert answered.wait(5)
    return result


def test_only_the_added_partitions_are_verified_and_nothing_is_written(env, manager):  # noqa: F811
    coordinator, state_log = env[0], env[1]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    written = sum(len(records) for records in state_log.records.values())
    assert verify(manager, "t", pid, epoch, [("a", 0)]) == {("a", 0): ErrorCode.TRANSACTION_ABORTABLE}
    assert coordinator.describe("t").state is TransactionState.EMPTY  # not added by the verification
    assert sum(len(records) for records in state_log.records.values()) == written

    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    assert verify(manager, "t", pid, epoch, [("a", 0), ("a", 1)]) == {("a", 1): ErrorCode.TRANSACTION_ABORTABLE}
    assert coordinator.describe("t").partitions == {("a", 0)}
    assert verify(manager, "t", pid, epoch, [("a", 0)]) == {}


def test_a_request_older_than_transaction_abortable_is_told_invalid_txn_state(env, manager):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    assert verify(manager, "t", pid, epoch, [("a", 0)], operation=TransactionSupportedOperation.DEFAULT_ERROR) == {
        ("a", 0): ErrorCode.INVALID_TXN_STATE}


@pytest.mark.parametrize(("version", "operation"), [(10, "DEFAULT_ERROR"), (11, "GENERIC_ERROR_SUPPORTED"),
                                                    (12, "ADD_PARTITION"), (13, "ADD_PARTITION")])
def test_the_operation_of_a_produce_version(version, operation):
    assert operation_for_version(version, 11, 12) is TransactionSupportedOperation[operation]


def test_refusals_are_answered_as_a_produce_expects_them(env, manager):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    assert verify(manager, "t", pid, epoch - 1, [("a", 0)]) == {("a", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert verify(manager, "t", pid + 1, epoch, [("a", 0)]) == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert verify(manager, "unknown", pid, epoch, [("a", 0)]) == {("a", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


def test_a_completing_transaction_is_not_retried(env, manager):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, {("a", 0)})
    coordinator.end_transaction("t", pid, epoch, commit=True)  # PrepareCommit: the markers are not delivered
    started = time.monotonic()
    assert verify(manager, "t", pid, epoch, [("b", 0)]) == {("b", 0): ErrorCode.CONCURRENT_TRANSACTIONS}
    assert time.monotonic() - started < RETRY_BACKOFF_MAX_S


@pytest.mark.parametrize("partitions", [[("a", 0)], [("a", 0), ("b", 1)]])
def test_a_verified_transaction_stays_as_it_was(env, manager, partitions):  # noqa: F811
    coordinator = env[0]
    pid, epoch = coordinator.init_producer_id("t", TIMEOUT)
    coordinator.add_partitions("t", pid, epoch, set(partitions))
    before = coordinator.describe("t").client_transaction_version
    assert verify(manager, "t", pid, epoch, partitions) == {}
    after = coordinator.describe("t")
    assert (after.state, after.partitions, after.client_transaction_version) == (
        TransactionState.ONGOING, set(partitions), before)
