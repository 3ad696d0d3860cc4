import os

import pytest

from wirebroker.log.producer_state import (
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    EndTransactionMarker,
    ProducerStateManager,
    decrement_sequence,
)
from wirebroker.protocol.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
)

from .helpers import NOW, batch

PID = 4242


def produce(log_, epoch, seq, n=1, **kwargs):
    return log_.append_as_leader(batch(NOW, n, producer_id=PID, producer_epoch=epoch, base_sequence=seq, **kwargs),
                                 leader_epoch=0, now_ms=NOW)


def test_retried_batch_is_answered_with_the_original_offsets_and_not_appended(open_log):
    log_ = open_log()
    produce(log_, 0, 0, n=3)
    first = produce(log_, 0, 3, n=2)
    end = log_.log_end_offset
    retry = produce(log_, 0, 3, n=2)
    assert retry.is_duplicate
    assert (retry.first_offset, retry.last_offset) == (first.first_offset, first.last_offset) == (3, 4)
    assert log_.log_end_offset == end


def test_only_the_last_five_batches_are_recognised(open_log):
    log_ = open_log()
    infos = [produce(log_, 0, i) for i in range(NUM_BATCHES_TO_RETAIN + 1)]
    assert produce(log_, 0, NUM_BATCHES_TO_RETAIN).first_offset == infos[-1].first_offset  # newest: duplicate
    assert produce(log_, 0, 1).is_duplicate  # still among the last five
    with pytest.raises(OutOfOrderSequenceNumberError):
        produce(log_, 0, 0)  # aged out: now it is just out of order


def test_sequence_gaps_are_out_of_order(open_log):
    log_ = open_log()
    produce(log_, 0, 0, n=2)
    with pytest.raises(OutOfOrderSequenceNumberError):
        produce(log_, 0, 3)  # 2 expected
    end = log_.log_end_offset
    produce(log_, 0, 2)
    assert log_.log_end_offset == end + 1


def test_older_epoch_is_fenced_and_a_new_epoch_starts_at_zero(open_log):
    log_ = open_log()
    produce(log_, 1, 0)
    with pytest.raises(InvalidProducerEpochError):
        produce(log_, 0, 1)
    with pytest.raises(OutOfOrderSequenceNumberError):
        produce(log_, 2, 5)
    produce(log_, 2, 0)
    assert log_.producer_state.last_entry(PID).producer_epoch == 2


def test_unknown_producer_may_start_anywhere(open_log):
    log_ = open_log()
    produce(log_, 0, 17)
    produce(log_, 0, 18)


def test_sequence_wraps_at_int32(open_log):
    log_ = open_log()
    produce(log_, 0, 2**31 - 2, n=2)  # sequences 2^31-2 and 2^31-1
    assert log_.producer_state.last_entry(PID).last_seq == 2**31 - 1
    produce(log_, 0, 0)
    assert decrement_sequence(1, 3) == 2**31 - 2


def test_state_survives_close_and_open_via_snapshot(open_log, partition_dir):
    log_ = open_log()
    produce(log_, 0, 0, n=2)
    original = produce(log_, 0, 2, n=3)
    log_.close()
    snapshots = [name for name in os.listdir(partition_dir) if name.endswith(".snapshot")]
    assert snapshots == [f"{log_.log_end_offset:020d}.snapshot"]
    reopened = open_log()
    retry = produce(reopened, 0, 2, n=3)
    assert retry.is_duplicate and retry.first_offset == original.first_offset
    with pytest.raises(OutOfOrderSequenceNumberError):
        produce(reopened, 0, 9)
    with pytest.raises(InvalidProducerEpochError):
        produce(reopened, -1, 0)


def test_state_is_rebuilt_from_the_log_without_snapshots(open_log, partition_dir):
    log_ = open_log()
    produce(log_, 0, 0, n=2)
    produce(log_, 0, 2)
    log_.close()
    for name in os.listdir(partition_dir):
        if name.endswith(".snapshot"):
            os.remove(os.path.join(partition_dir, name))
    reopened = open_log()  # no clean-shutdown marker: the log is scanned
    assert produce(reopened, 0, 2).is_duplicate
    assert produce(reopened, 0, 3).first_offset == 3


def test_producers_expire_after_idle_time(tmp_path):
    manager = ProducerStateManager(str(tmp_path), producer_id_expiration_ms=1000)
    info = manager.prepare_update(PID, AppendOrigin.CLIENT)
    info.append_data_batch(0, 0, 0, 5000, 10, 10, False)
    manager.update(info)
    manager.remove_expired_producers(5999)
    assert PID in manager.producers
    manager.remove_expired_producers(6000)
    assert PID not in manager.producers


def test_transactions_open_close_and_bound_the_unstable_offset(tmp_path):
    manager = ProducerStateManager(str(tmp_path))
    info = manager.prepare_update(PID, AppendOrigin.CLIENT)
    info.append_data_batch(0, 0, 4, NOW, 100, 104, True)
    manager.update(info)
    assert manager.first_unstable_offset == 100 and manager.last_entry(PID).current_txn_first_offset == 100
    info = manager.prepare_update(PID, AppendOrigin.CLIENT)
    with pytest.raises(InvalidTxnStateError):
        info.append_data_batch(0, 5, 5, NOW, 105, 105, False)
    info = manager.prepare_update(PID, AppendOrigin.COORDINATOR)
    completed = info.append_end_txn_marker(EndTransactionMarker(False, 7), 0, 106, NOW)
    manager.update(info)
    assert completed.is_aborted and (completed.first_offset, completed.last_offset) == (100, 106)
    assert manager.last_stable_offset(completed) == 107
    manager.complete_txn(completed)
    assert manager.first_unstable_offset == 100  # decided, but the marker is not replicated yet
    manager.on_high_watermark_updated(107)
    assert manager.first_unstable_offset is None
    assert manager.last_entry(PID).current_txn_first_offset is None
