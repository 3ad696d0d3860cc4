"""Transactions in one partition's log: the last stable offset, COMMIT/ABORT markers, the aborted transactions a
read_committed read reports, and the .txnindex and open transactions after a clean or an unclean restart."""

from __future__ import annotations

import os

from wirebroker.log.files import txn_index_file
from wirebroker.log.producer_state import AppendOrigin
from wirebroker.log.txn_index import AbortedTxn
from wirebroker.protocol.records import (
    TimestampType,
    build_control_batch,
    crc_is_valid,
    read_header,
)

from .helpers import NOW, batch, region_bytes, small_config

CONFIG = small_config(internal_segment_bytes="1000")  # a segment holds a few batches: transactions span segments


class Producer:
    """A transactional producer's batches and its coordinator's markers, appended as Kafka's leader appends them."""

    def __init__(self, log_, producer_id: int, epoch: int = 0) -> None:
        self.log, self.producer_id, self.epoch, self.sequence = log_, producer_id, epoch, 0

    def send(self, n: int = 1) -> int:
        info = self.log.append_as_leader(batch(NOW, n, producer_id=self.producer_id, producer_epoch=self.epoch,
                                               base_sequence=self.sequence, is_transactional=True), 0, NOW)
        self.sequence += n
        return info.first_offset

    def end(self, commit: bool, coordinator_epoch: int = 0) -> int:
        marker = bytearray(build_control_batch(commit, self.producer_id, self.epoch, coordinator_epoch,
                                               timestamp=NOW))
        return self.log.append_as_leader(marker, 0, NOW, AppendOrigin.COORDINATOR).first_offset


def replicated(log_) -> int:
    log_.update_high_watermark(log_.log_end_offset)
    return log_.last_stable_offset


def test_the_last_stable_offset_follows_the_oldest_undecided_transaction(open_log):
    log_ = open_log(CONFIG)
    first, second = Producer(log_, 1), Producer(log_, 2)
    start1 = first.send(2)
    start2 = second.send()
    first.send()
    assert replicated(log_) == start1
    first.end(commit=True)
    assert replicated(log_) == start2
    marker = second.end(commit=False)
    assert log_.last_stable_offset == start2  # the marker is not replicated yet
    log_.update_high_watermark(marker)
    assert log_.last_stable_offset == start2
    assert replicated(log_) == marker + 1 == log_.log_end_offset
    aborted = [txn for s in log_.segments for txn in s.txn_index.all_aborted_txns()]
    assert aborted == [AbortedTxn(2, start2, marker, marker + 1)]


def test_read_committed_reads_report_the_aborted_transactions_they_overlap(open_log):
    log_ = open_log(CONFIG)
    aborting, committing = Producer(log_, 7), Producer(log_, 8)
    start = aborting.send(3)
    committing_start = committing.send(3)
    for _ in range(5):  # several segments between the transaction's start and its marker
        committing.send(3)
    marker = aborting.end(commit=False)
    committing.end(commit=True)
    lso = replicated(log_)
    middle = log_.segments.floor_segment(marker - 1).base_offset
    assert start < middle  # the fetch starts in a later segment than the transaction
    expected = [AbortedTxn(7, start, marker, committing_start)]  # LSO then: the other producer's open transaction
    for fetch_offset in (start, middle):
        assert log_.read(fetch_offset, 1 << 20, lso, include_aborted_transactions=True).aborted_transactions == \
            expected
    assert log_.read(marker + 1, 1 << 20, lso, include_aborted_transactions=True).aborted_transactions == []


def test_an_unclean_restart_rebuilds_the_txnindex_and_keeps_the_open_transaction(open_log, partition_dir):
    log_ = open_log(CONFIG)
    aborted, hanging = Producer(log_, 3), Producer(log_, 4)
    start = aborted.send(2)
    marker = aborted.end(commit=False)
    open_start = hanging.send(2)
    replicated(log_)
    segment_base = log_.segments.floor_segment(marker).base_offset
    expected = [txn for s in log_.segments for txn in s.txn_index.all_aborted_txns()]
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in expected] == [(3, start, marker)]
    log_.close()
    os.truncate(txn_index_file(partition_dir, segment_base), 0)  # what a crash before its flush leaves
    for name in os.listdir(partition_dir):
        if name.endswith(".snapshot"):
            os.remove(os.path.join(partition_dir, name))
    reopened = open_log(CONFIG, recovery_point=0, had_clean_shutdown=False)
    assert [txn for s in reopened.segments for txn in s.txn_index.all_aborted_txns()] == expected
    reopened.update_high_watermark(reopened.log_end_offset)
    assert reopened.last_stable_offset == open_start
    assert reopened.active_producers()[4].current_txn_first_offset == open_start


def test_a_clean_restart_keeps_the_open_transaction_from_the_snapshot(open_log):
    log_ = open_log(CONFIG)
    start = Producer(log_, 5).send(2)
    replicated(log_)
    log_.close()
    reopened = open_log(CONFIG, had_clean_shutdown=True)
    reopened.update_high_watermark(reopened.log_end_offset)
    assert reopened.last_stable_offset == start
    Producer(reopened, 5).end(commit=True)
    assert replicated(reopened) == reopened.log_end_offset


def test_a_marker_on_a_log_append_time_topic_gets_the_log_append_time(open_log):
    log_ = open_log(small_config(message_timestamp_type="LogAppendTime"))
    marker = bytearray(build_control_batch(True, 7, 0, 0, timestamp=NOW - 60_000))
    log_.append_as_leader(marker, 0, NOW, AppendOrigin.COORDINATOR)
    stored = region_bytes(log_.read(0, 10_000))
    header = read_header(stored)
    assert header.is_control and header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == NOW and crc_is_valid(stored, 0, header)
