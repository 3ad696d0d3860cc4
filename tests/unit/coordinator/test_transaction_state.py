"""The transaction state machine (transaction_state.py) and its records (transaction_log.py)."""

from __future__ import annotations

import struct
from dataclasses import replace

import pytest

from wirebroker.coordinator import transaction_log
from wirebroker.coordinator.transaction_state import (
    IllegalTransitionError,
    TransactionMetadata,
    TransactionState,
)
from wirebroker.protocol.messages.transaction_log_value import TransactionLogValue

S = TransactionState


def test_a_new_id_gets_epoch_zero_then_bumps_and_a_retry_of_the_last_bump_keeps_it():
    metadata = TransactionMetadata.new("t", 7, 60_000, 1000)
    first = metadata.prepare_increment_producer_epoch(60_000, None, 1001)
    metadata.complete_transition(first)
    assert (metadata.producer_id, metadata.producer_epoch, metadata.state) == (7, 0, S.EMPTY)
    bumped = metadata.prepare_increment_producer_epoch(60_000, 0, 1002)  # KIP-360: the producer names epoch 0
    metadata.complete_transition(bumped)
    assert (metadata.producer_epoch, metadata.last_producer_epoch) == (1, 0)
    retry = metadata.prepare_increment_producer_epoch(60_000, 0, 1003)  # it never got the answer: same epoch
    assert retry.producer_epoch == 1
    metadata.abort_transition()
    assert metadata.prepare_increment_producer_epoch(60_000, 5, 1004) is None  # neither current nor last: fenced


def test_states_follow_kafkas_valid_previous_states():
    metadata = TransactionMetadata.new("t", 1, 60_000, 0)
    metadata.complete_transition(metadata.prepare_increment_producer_epoch(60_000, None, 0))
    with pytest.raises(IllegalTransitionError):
        metadata.prepare_abort_or_commit(S.PREPARE_COMMIT, 1)  # Empty cannot commit
    metadata.complete_transition(metadata.prepare_add_partitions({("a", 0)}, 5))
    assert (metadata.state, metadata.txn_start_timestamp) == (S.ONGOING, 5)
    metadata.complete_transition(metadata.prepare_add_partitions({("a", 1)}, 9))
    assert metadata.partitions == {("a", 0), ("a", 1)} and metadata.txn_start_timestamp == 5
    transit = metadata.prepare_abort_or_commit(S.PREPARE_COMMIT, 10)
    with pytest.raises(IllegalTransitionError):
        metadata.prepare_add_partitions({("b", 0)}, 11)  # a change is pending
    metadata.complete_transition(transit)
    metadata.complete_transition(metadata.prepare_complete(12))
    assert (metadata.state, metadata.partitions) == (S.COMPLETE_COMMIT, set())


def test_a_fenced_abort_bumps_the_epoch_in_the_same_write():
    metadata = TransactionMetadata.new("t", 1, 60_000, 0)
    metadata.complete_transition(metadata.prepare_increment_producer_epoch(60_000, None, 0))
    metadata.complete_transition(metadata.prepare_add_partitions({("a", 0)}, 1))
    transit = metadata.prepare_fenced_abort(2)
    assert (transit.state, transit.producer_epoch, transit.partitions) == (S.PREPARE_ABORT, 1, {("a", 0)})
    metadata.abort_transition()  # the write failed: nothing changed
    assert (metadata.state, metadata.producer_epoch, metadata.pending_state) == (S.ONGOING, 0, None)


def test_an_exhausted_epoch_rotates_the_producer_id():
    metadata = TransactionMetadata.new("t", 1, 60_000, 0)
    metadata.complete_transition(metadata.prepare_increment_producer_epoch(60_000, None, 0))
    metadata.producer_epoch = 32766
    assert metadata.is_epoch_exhausted
    metadata.complete_transition(metadata.prepare_producer_id_rotation(2, 60_000, 1, record_last_epoch=True))
    assert (metadata.producer_id, metadata.producer_epoch, metadata.previous_producer_id,
            metadata.last_producer_epoch) == (2, 0, 1, 32766)


def test_state_names_are_kafkas():
    assert [s.state_name for s in S] == ["Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                                         "CompleteAbort", "Dead", "PrepareEpochFence"]
    assert S.from_name("Ongoing") is S.ONGOING and S.from_name("Nope") is None


def test_records_are_kafkas_format_and_round_trip():
    metadata = TransactionMetadata.new("my-txn", 42, 60_000, 100)
    metadata.complete_transition(metadata.prepare_increment_producer_epoch(60_000, None, 100))
    empty = metadata.current
    key = transaction_log.key_bytes("my-txn")
    assert key == struct.pack(">hh", 0, 6) + b"my-txn"  # record type 0, then TransactionLogKey v0
    value = transaction_log.value_bytes(empty)
    assert value[:2] == b"\x00\x00"  # value version 0
    assert TransactionLogValue.decode(memoryview(value)[2:], 0).transaction_partitions is None  # null in Empty
    assert transaction_log.decode(key, value).transit == empty
    metadata.complete_transition(metadata.prepare_add_partitions({("a", 0), ("a", 2), ("b", 1)}, 200))
    ongoing = metadata.current
    decoded = TransactionLogValue.decode(memoryview(transaction_log.value_bytes(ongoing))[2:], 0)
    assert [(p.topic, p.partition_ids) for p in decoded.transaction_partitions] == [("a", [0, 2]), ("b", [1])]
    assert (decoded.transaction_status, decoded.producer_id, decoded.transaction_start_timestamp_ms) == (1, 42, 200)
    record = transaction_log.decode(key, transaction_log.value_bytes(ongoing))
    assert (record.transactional_id, record.transit) == ("my-txn", ongoing)
    assert transaction_log.value_bytes(replace(ongoing, state=S.DEAD)) is None  # Dead: a tombstone
    assert transaction_log.decode(key, None).transit is None
