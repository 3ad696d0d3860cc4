import os
import threading

import pytest

from wirebroker.log.log import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP
from wirebroker.log.scheduler import Scheduler
from wirebroker.protocol.errors import (
    InvalidTimestampError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    RecordListTooLargeError,
)
from wirebroker.protocol.records import (
    TimestampType,
    build_batch,
    crc_is_valid,
    iter_records,
    read_header,
)

from .helpers import (
    NOW,
    append_batches,
    batch,
    read_all_offsets,
    region_bytes,
    small_config,
)

DAY = 24 * 3600 * 1000


# --- reads ---

def test_read_returns_whole_batches_from_the_requested_offset(open_log):
    log_ = open_log()
    append_batches(log_, 10, n=3)  # offsets 0..29 in batches of 3
    info = log_.read(7, 10_000)
    data = region_bytes(info)
    assert read_header(data).base_offset == 6  # the batch holding offset 7
    assert info.fetch_offset_metadata.message_offset == 7
    assert read_all_offsets(log_) == list(range(30))


def test_read_outside_the_log_raises(open_log):
    log_ = open_log()
    append_batches(log_, 3)
    with pytest.raises(OffsetOutOfRangeError):
        log_.read(4, 1000)
    log_.increment_log_start_offset(2)
    with pytest.raises(OffsetOutOfRangeError):
        log_.read(1, 1000)
    assert log_.read(3, 1000).records == b""  # at the log end: nothing yet


def test_read_stops_at_the_upper_bound(open_log):
    log_ = open_log()
    append_batches(log_, 10)
    log_.update_high_watermark(4)
    info = log_.read(0, 100_000, upper_bound_offset=log_.high_watermark)
    data = region_bytes(info)
    offsets, pos = [], 0
    while pos < len(data):
        header = read_header(data, pos)
        offsets.append(header.base_offset)
        pos += header.size
    assert offsets == [0, 1, 2, 3]
    assert log_.read(4, 100_000, upper_bound_offset=4).records == b""


def test_max_bytes_and_min_one_message(open_log):
    log_ = open_log()
    append_batches(log_, 5)
    size = read_header(region_bytes(log_.read(0, 1000))).size
    assert len(log_.read(0, 10, min_one_message=True).records) == size
    small = log_.read(0, 10, min_one_message=False)
    assert len(small.records) == 10 and small.first_entry_incomplete
    assert len(log_.read(0, size * 2 + 1).records) == size * 2 + 1  # the consumer drops the partial batch


# --- appends ---

def test_offsets_and_leader_epoch_are_assigned_in_place(open_log):
    log_ = open_log()
    append_batches(log_, 2, n=2)
    records = batch(NOW, 3)
    info = log_.append_as_leader(records, leader_epoch=7, now_ms=NOW)
    header = read_header(records)
    assert (info.first_offset, info.last_offset, info.num_messages) == (4, 6, 3)
    assert (header.base_offset, header.partition_leader_epoch) == (4, 7)
    assert crc_is_valid(records, 0, header)
    assert log_.end_offset_for_epoch(7) == (7, 7)
    assert log_.end_offset_for_epoch(0) == (4, 0)
    assert log_.latest_epoch == 7


def test_log_append_time_rewrites_timestamps(open_log):
    log_ = open_log(small_config(message_timestamp_type="LogAppendTime"))
    records = batch(12345, 3)
    info = log_.append_as_leader(records, 0, now_ms=NOW + 5)
    assert info.log_append_time == NOW + 5
    stored = region_bytes(log_.read(0, 10_000))
    header = read_header(stored)
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME and crc_is_valid(stored, 0, header)
    assert {r.timestamp for r in iter_records(stored, 0, header, 1 << 20)} == {NOW + 5}


def test_timestamps_outside_the_allowed_window_are_refused(open_log):
    log_ = open_log(small_config(message_timestamp_before_max_ms="1000", message_timestamp_after_max_ms="1000"))
    with pytest.raises(InvalidTimestampError):
        log_.append_as_leader(batch(NOW - 1001), 0, now_ms=NOW)
    with pytest.raises(InvalidTimestampError):
        log_.append_as_leader(batch(NOW + 1001), 0, now_ms=NOW)
    log_.append_as_leader(batch(NOW + 1000), 0, now_ms=NOW)
    assert log_.log_end_offset == 1


def test_size_limits(open_log):
    log_ = open_log(small_config(max_message_bytes="200"))
    with pytest.raises(MessageTooLargeError):
        log_.append_as_leader(batch(value_size=300), 0, now_ms=NOW)
    log_ = open_log(small_config(internal_segment_bytes="500"))
    with pytest.raises(RecordListTooLargeError):
        log_.append_as_leader(batch(value_size=600), 0, now_ms=NOW)


def test_flush_messages_moves_the_recovery_point(open_log):
    log_ = open_log(small_config(flush_messages="3"))
    append_batches(log_, 2)
    assert log_.recovery_point == 0
    append_batches(log_, 1)
    assert log_.recovery_point == 3


# --- offsets by timestamp ---

def test_fetch_offset_by_timestamp(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000"))
    # Batches of 4 records, timestamps NOW + 10 * offset.
    for i in range(12):
        records = [(NOW + 10 * (4 * i + j), b"k", b"v" * 30, ()) for j in range(4)]
        log_.append_as_leader(bytearray(build_batch(records)), leader_epoch=2, now_ms=NOW)
    assert log_.number_of_segments > 2
    found = log_.fetch_offset_by_timestamp(NOW + 10 * 21 - 5)  # inside a batch, in a later segment
    assert (found.offset, found.timestamp, found.leader_epoch) == (21, NOW + 210, 2)
    assert log_.fetch_offset_by_timestamp(NOW - 100).offset == 0
    assert log_.fetch_offset_by_timestamp(NOW + 10 * 48) is None
    assert log_.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP)[:2] == (-1, 0)
    assert log_.fetch_offset_by_timestamp(LATEST_TIMESTAMP)[:2] == (-1, 48)
    assert log_.fetch_offset_by_timestamp(MAX_TIMESTAMP)[:2] == (NOW + 470, 47)
    log_.update_high_watermark(48)
    log_.increment_log_start_offset(30)
    assert log_.fetch_offset_by_timestamp(NOW).offset == 30  # nothing below the log start offset
    assert log_.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP).offset == 30


def test_max_timestamp_finds_the_record_not_the_batch_end(open_log):
    log_ = open_log()
    log_.append_as_leader(bytearray(build_batch([(NOW, b"a", b"1", ()), (NOW + 50, b"b", b"2", ()),
                                                 (NOW + 20, b"c", b"3", ())])), 0, now_ms=NOW)
    append_batches(log_, 2, timestamp=NOW + 1)
    assert log_.fetch_offset_by_timestamp(MAX_TIMESTAMP)[:2] == (NOW + 50, 1)
    assert log_.fetch_offset_by_timestamp(NOW + 30).offset == 1


# --- retention ---

def test_retention_by_time_uses_each_segments_largest_timestamp(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000", retention_ms=str(DAY)))
    append_batches(log_, 20, timestamp=NOW - 3 * DAY)  # old segments
    old_segments = log_.number_of_segments
    append_batches(log_, 20, timestamp=NOW)
    first_new = next(s for s in log_.segments if s.largest_timestamp() >= NOW)
    deleted = log_.delete_old_segments(NOW)
    assert deleted >= old_segments - 1
    assert log_.log_start_offset == log_.segments.first.base_offset <= first_new.base_offset
    assert all(s.largest_timestamp() > NOW - DAY for s in log_.segments)
    assert read_all_offsets(log_) == list(range(log_.log_start_offset, 40))
    assert log_.delete_old_segments(NOW) == 0


def test_retention_by_size(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000", retention_bytes="2500"))
    append_batches(log_, 60)
    before = log_.size
    assert log_.delete_old_segments(NOW) > 0
    # Whole segments go, oldest first, while the excess over retention.bytes covers them.
    assert log_.size < before and log_.size - log_.segments.first.size < 2500
    assert read_all_offsets(log_) == list(range(log_.log_start_offset, 60))


def test_retention_never_passes_the_high_watermark(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000", retention_ms="1"))
    append_batches(log_, 30, timestamp=NOW - DAY)
    log_.update_high_watermark(0)
    assert log_.delete_old_segments(NOW) == 0
    log_.update_high_watermark(log_.log_end_offset)
    log_.delete_old_segments(NOW)
    # Everything was old: the log keeps one fresh empty segment at the end.
    assert log_.number_of_segments == 1 and log_.segments.last.size == 0
    assert log_.log_start_offset == log_.log_end_offset == 30


def test_deleted_segments_wait_for_the_file_delete_delay(open_log, partition_dir):
    scheduler = Scheduler()
    scheduler.startup()
    try:
        log_ = open_log(small_config(internal_segment_bytes="1000", retention_ms="1",
                                     file_delete_delay_ms="60000"), scheduler=scheduler)
        append_batches(log_, 30, timestamp=NOW - DAY)
        held = log_.read(0, 100, min_one_message=False)  # a fetch response still sending from the first segment
        log_.delete_old_segments(NOW)
        deleted = [n for n in os.listdir(partition_dir) if n.endswith(".deleted")]
        assert "00000000000000000000.log.deleted" in deleted
        assert len(region_bytes(held)) == 100  # its descriptor still reads the old bytes
    finally:
        scheduler.shutdown()  # runs the pending deletions
    assert not [n for n in os.listdir(partition_dir) if n.endswith(".deleted")]


def test_increment_log_start_offset_then_retention_drops_whole_segments(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000", retention_ms="-1"))
    append_batches(log_, 30)
    second = list(log_.segments)[1]
    with pytest.raises(OffsetOutOfRangeError):
        log_.increment_log_start_offset(31)
    assert log_.increment_log_start_offset(second.base_offset + 1)
    assert not log_.increment_log_start_offset(3)
    assert log_.delete_old_segments(NOW) == 1
    assert log_.segments.first is second
    assert log_.log_start_offset == second.base_offset + 1


# --- truncation ---

def test_truncate_to_drops_later_offsets_everywhere(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000"))
    append_batches(log_, 30)
    for epoch_start in (10, 20):
        log_.leader_epoch_cache.assign(epoch_start // 10, epoch_start)
    assert log_.truncate_to(15)
    assert log_.log_end_offset == 15 and log_.high_watermark == 15
    assert read_all_offsets(log_) == list(range(15))
    assert [e.epoch for e in log_.leader_epoch_cache.epoch_entries()] == [0, 1]
    assert log_.append_as_leader(batch(), 0, now_ms=NOW).first_offset == 15
    assert not log_.truncate_to(100)


def test_truncate_fully(open_log):
    log_ = open_log()
    append_batches(log_, 5)
    log_.truncate_fully_and_start_at(100)
    assert (log_.log_start_offset, log_.log_end_offset, log_.number_of_segments) == (100, 100, 1)
    assert log_.append_as_leader(batch(), 0, now_ms=NOW).first_offset == 100


# --- reopening and concurrency ---

def test_reopen_keeps_offsets_and_start(open_log):
    log_ = open_log(small_config(internal_segment_bytes="1000"))
    append_batches(log_, 30)
    log_.increment_log_start_offset(12)
    log_.close()
    reopened = open_log(small_config(internal_segment_bytes="1000"), log_start_offset=12, recovery_point=30,
                        had_clean_shutdown=True)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (12, 30)


def test_reads_run_while_appends_go_on(open_log):
    log_ = open_log(small_config(internal_segment_bytes="3000"))
    errors = []
    done = threading.Event()

    def reader():
        try:
            while not done.is_set():
                end = log_.log_end_offset
                if end:
                    info = log_.read(end - 1, 1 << 16, upper_bound_offset=end)
                    data = region_bytes(info)
                    header = read_header(data)
                    assert header.base_offset <= end - 1 < header.next_offset
        except Exception as exc:  # noqa: BLE001 - any failure in the thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    append_batches(log_, 120)
    done.set()
    for t in threads:
        t.join()
    assert errors == []
    assert read_all_offsets(log_) == list(range(120))
