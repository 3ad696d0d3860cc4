import itertools
import os

from wirebroker.log.segment import LogSegment

from .helpers import NOW, append_batches, batch, read_all_offsets, small_config


def test_roll_by_size_keeps_every_segment_within_segment_bytes(open_log):
    log_ = open_log(small_config(internal_segment_bytes="2000"))
    append_batches(log_, 60)
    segments = list(log_.segments)
    assert len(segments) > 3
    assert all(0 < s.size <= 2000 for s in segments)
    assert [s.base_offset for s in segments] == sorted({s.base_offset for s in segments})
    assert read_all_offsets(log_) == list(range(60))
    # Rolled segments are sealed: indexes trimmed to their entries, the last time index entry is the max timestamp.
    for segment in segments[:-1]:
        assert os.path.getsize(segment.offset_index.path) == 8 * segment.offset_index.entries
        assert os.path.getsize(segment.time_index.path) == 12 * segment.time_index.entries
        assert segment.time_index.last_entry().timestamp == NOW + segment.read_next_offset() - 1
    assert os.path.getsize(segments[-1].offset_index.path) == 4096  # the active one stays preallocated


def test_roll_by_time_from_the_first_batch_timestamp(open_log):
    log_ = open_log(small_config(segment_ms="1000"))
    log_.append_as_leader(batch(NOW), 0, now_ms=NOW)
    log_.append_as_leader(batch(NOW + 1000), 0, now_ms=NOW)  # exactly segment.ms later: not yet
    assert log_.number_of_segments == 1
    log_.append_as_leader(batch(NOW + 1001), 0, now_ms=NOW)
    assert [s.base_offset for s in log_.segments] == [0, 2]


def test_roll_jitter_brings_the_time_roll_forward(open_log):
    log_ = open_log(small_config(segment_ms="1000", segment_jitter_ms="500"))
    log_.append_as_leader(batch(NOW), 0, now_ms=NOW)
    log_.segments.last.roll_jitter_ms = 400  # the random draw, fixed for the test
    log_.append_as_leader(batch(NOW + 600), 0, now_ms=NOW)
    assert log_.number_of_segments == 1
    log_.append_as_leader(batch(NOW + 601), 0, now_ms=NOW)
    assert log_.number_of_segments == 2


def test_segment_without_timestamps_rolls_by_its_age(open_log):
    log_ = open_log(small_config(segment_ms="1000"), now_ms=NOW)
    log_.append_as_leader(batch(-1), 0, now_ms=NOW + 10)
    log_.append_as_leader(batch(-1), 0, now_ms=NOW + 1000)
    assert log_.number_of_segments == 1
    log_.append_as_leader(batch(-1), 0, now_ms=NOW + 1001)
    assert log_.number_of_segments == 2


def test_roll_when_an_index_is_full(open_log):
    # 24-byte indexes: 3 offset index slots, 2 time index slots (one kept for the roll); an entry every append.
    log_ = open_log(small_config(segment_index_bytes="24", index_interval_bytes="0",
                                 internal_segment_bytes=str(10**6)))
    append_batches(log_, 12)
    segments = list(log_.segments)
    assert len(segments) >= 3
    assert all(s.offset_index.entries <= 3 for s in segments)
    assert read_all_offsets(log_) == list(range(12))


def test_should_roll_on_relative_offset_overflow(tmp_path):
    config = small_config()
    segment = LogSegment(str(tmp_path), 100, config, NOW)
    assert not segment.should_roll(config, NOW, 100 + 2**31 - 1, 10, NOW)
    assert segment.should_roll(config, NOW, 100 + 2**31, 10, NOW)
    segment.close()


def test_index_entries_every_index_interval_bytes(open_log):
    log_ = open_log(small_config(index_interval_bytes="300", internal_segment_bytes=str(10**6)))
    append_batches(log_, 40)  # about 110 bytes each
    segment = log_.segments.last
    entries = [segment.offset_index.entry(i) for i in range(segment.offset_index.entries)]
    assert 8 <= len(entries) <= 15
    positions = [p for _, p in entries]
    assert all(b - a >= 300 for a, b in itertools.pairwise(positions))
    batch_positions = {b.header.base_offset: b.position for b in segment.log.batches()}
    for offset in range(40):  # index floor, then a scan of headers, finds every batch
        found = segment.translate_offset(offset)
        assert (found.offset, found.position) == (offset, batch_positions[offset])
    assert segment.translate_offset(40) is None
