"""Transaction verification's guard in one partition's log (Kafka's VerificationGuard, KIP-890 part 1): a
transactional append verified at the coordinator goes in only while the verification it started is still the
producer's pending one, or while its transaction is open here."""

from __future__ import annotations

import pytest

from wirebroker.log.producer_state import PRODUCER_ID_EXPIRATION_MS_DEFAULT, AppendOrigin
from wirebroker.log.verification_guard import SENTINEL
from wirebroker.protocol.errors import ErrorCode, InvalidTxnStateError
from wirebroker.protocol.records import build_control_batch

from .helpers import NOW, batch

PRODUCER_ID = 7


def send(log_, guard, epoch=0, sequence=0, **kwargs):
    records = batch(NOW, producer_id=PRODUCER_ID, producer_epoch=epoch, base_sequence=sequence,
                    is_transactional=True, **kwargs)
    return log_.append_as_leader(records, 0, NOW, verification_guard=guard)


def write_marker(log_, commit=False, epoch=0):
    marker = bytearray(build_control_batch(commit, PRODUCER_ID, epoch, 0, timestamp=NOW))
    log_.append_as_leader(marker, 0, NOW, AppendOrigin.COORDINATOR)


def start(log_, epoch=0, supports_epoch_bump=False, now_ms=NOW):
    return log_.maybe_start_transaction_verification(PRODUCER_ID, epoch, supports_epoch_bump, now_ms)


def test_a_marker_written_after_the_verification_voids_its_guard(open_log):
    log_ = open_log()
    guard = start(log_)
    assert guard is not SENTINEL
    write_marker(log_)  # the transaction ended while the coordinator's answer was on its way
    end = log_.log_end_offset
    with pytest.raises(InvalidTxnStateError, match="not part of an ongoing transaction") as refused:
        send(log_, guard)
    assert refused.value.code == ErrorCode.INVALID_TXN_STATE
    assert log_.log_end_offset == end
    assert log_.producer_state.first_undecided_offset is None  # no transaction was opened
    fresh = start(log_)
    assert fresh is not guard
    assert send(log_, fresh).first_offset == end


def test_a_stale_guard_does_not_match_a_newer_verification(open_log):
    log_ = open_log()
    stale = start(log_)
    write_marker(log_)
    newer = start(log_)  # the producer's next transaction is being verified (the ABA case)
    with pytest.raises(InvalidTxnStateError):
        send(log_, stale)
    send(log_, newer)


def test_the_guard_is_used_up_by_the_first_batch_and_then_the_open_transaction_admits(open_log):
    log_ = open_log()
    guard = start(log_)
    assert start(log_) is guard  # a second verification before the append shares the pending one
    send(log_, guard)
    assert log_.producer_state.verification_guard(PRODUCER_ID) is SENTINEL
    assert start(log_) is SENTINEL  # the transaction is open here: nothing to verify
    send(log_, SENTINEL, sequence=1)
    write_marker(log_, commit=True)
    with pytest.raises(InvalidTxnStateError):  # its transaction ended: SENTINEL no longer admits
        send(log_, SENTINEL, sequence=2)


def test_an_unused_verification_expires_with_idle_producers(open_log):
    log_ = open_log()
    guard = start(log_)
    log_.remove_expired_producers(NOW + PRODUCER_ID_EXPIRATION_MS_DEFAULT - 1)
    assert log_.producer_state.verification_guard(PRODUCER_ID) is guard
    log_.remove_expired_producers(NOW + PRODUCER_ID_EXPIRATION_MS_DEFAULT)
    with pytest.raises(InvalidTxnStateError):
        send(log_, guard)


def test_transaction_protocol_2_keeps_the_next_transactions_verification_across_the_marker_at_its_epoch(open_log):
    log_ = open_log()
    first = start(log_, epoch=0, supports_epoch_bump=True)
    send(log_, first, epoch=0)
    guard = start(log_, epoch=1, supports_epoch_bump=True)  # already verified for the next transaction, epoch 1
    write_marker(log_, commit=True, epoch=1)  # the coordinator ends the first one with the bumped epoch
    send(log_, guard, epoch=1)
    assert log_.producer_state.has_ongoing_transaction(PRODUCER_ID, 1)


def test_appends_without_a_guard_are_not_checked(open_log):
    log_ = open_log()
    # verification off (transaction.partition.verification.enable false) or not a client's append: as before KIP-890
    assert send(log_, None).first_offset == 0
    write_marker(log_)
    assert send(log_, None, sequence=1).first_offset == 2
