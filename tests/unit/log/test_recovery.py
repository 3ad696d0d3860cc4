"""A log reopened after damage that a crash can leave: it truncates to the last valid batch, rebuilds its indexes,
and the next append continues right after the last valid offset."""

import os
import random

import pytest

from wirebroker.log.files import log_file, offset_index_file, time_index_file

from .helpers import NOW, append_batches, batch, read_all_offsets, small_config

CONFIG = small_config(internal_segment_bytes="3000")
BATCHES = 70  # several segments of about 25 batches


def build_crashed_log(open_log, partition_dir):
    """A log of BATCHES one-record batches whose files are left as a crash would leave them (no clean shutdown).

    Returns the active segment's base offset and, for each of its batches, (end position, next offset)."""
    log_ = open_log(CONFIG)
    append_batches(log_, BATCHES, n=1)
    active = log_.segments.last
    boundaries = [(b.position + b.header.size, b.header.next_offset) for b in active.log.batches()]
    log_.close()
    return active.base_offset, boundaries


def reopen_after_crash(open_log, recovery_point=0):
    return open_log(CONFIG, recovery_point=recovery_point, had_clean_shutdown=False)


def check_recovered(log_, expected_end):
    assert log_.log_end_offset == expected_end
    assert read_all_offsets(log_) == list(range(expected_end))
    active = log_.segments.last
    # The rebuilt index finds every batch of the active segment.
    for b in active.log.batches():
        assert active.translate_offset(b.header.base_offset).position == b.position
    info = log_.append_as_leader(batch(NOW), 0, now_ms=NOW)
    assert info.first_offset == expected_end


@pytest.mark.parametrize("seed", range(6))
def test_truncated_active_segment(open_log, partition_dir, seed):
    base, boundaries = build_crashed_log(open_log, partition_dir)
    path = log_file(partition_dir, base)
    size = os.path.getsize(path)
    cut = random.Random(seed).randint(1, size)
    os.truncate(path, size - cut)
    whole = [next_offset for end, next_offset in boundaries if end <= size - cut]
    expected_end = whole[-1] if whole else base
    log_ = reopen_after_crash(open_log)
    assert os.path.getsize(log_file(partition_dir, base)) == (
        max((end for end, _ in boundaries if end <= size - cut), default=0))
    check_recovered(log_, expected_end)


@pytest.mark.parametrize("seed", range(6))
def test_random_garbage_after_the_last_batch(open_log, partition_dir, seed):
    base, boundaries = build_crashed_log(open_log, partition_dir)
    path = log_file(partition_dir, base)
    rng = random.Random(seed)
    garbage = bytes(rng.randrange(256) for _ in range(rng.randint(1, 500)))
    with open(path, "ab") as f:
        f.write(garbage)
    log_ = reopen_after_crash(open_log)
    assert os.path.getsize(path) == boundaries[-1][0]
    check_recovered(log_, BATCHES)


@pytest.mark.parametrize("seed", range(6))
def test_bit_flip_in_the_last_batch(open_log, partition_dir, seed):
    base, boundaries = build_crashed_log(open_log, partition_dir)
    path = log_file(partition_dir, base)
    last_start = boundaries[-2][0]
    rng = random.Random(seed)
    position = rng.randrange(last_start + 21, boundaries[-1][0])  # inside what the CRC covers
    with open(path, "r+b") as f:
        f.seek(position)
        byte = f.read(1)[0]
        f.seek(position)
        f.write(bytes([byte ^ (1 << rng.randrange(8))]))
    log_ = reopen_after_crash(open_log)
    check_recovered(log_, BATCHES - 1)


def test_segments_after_a_corrupt_one_are_dropped(open_log, partition_dir):
    log_ = open_log(CONFIG)
    append_batches(log_, BATCHES)
    first, second = list(log_.segments)[:2]
    second_batches = [b.header.next_offset for b in second.log.batches()]
    log_.close()
    with open(log_file(partition_dir, second.base_offset), "r+b") as f:
        f.seek(200)
        f.write(b"\xff" * 8)
    log_ = reopen_after_crash(open_log, recovery_point=first.base_offset)
    assert log_.log_end_offset < second_batches[-1]
    assert [s.base_offset for s in log_.segments] == [first.base_offset, second.base_offset]
    check_recovered(log_, log_.log_end_offset)


@pytest.mark.parametrize("which", ["index", "timeindex", "both"])
def test_missing_index_is_rebuilt_even_after_a_clean_shutdown(open_log, partition_dir, which):
    log_ = open_log(CONFIG)
    append_batches(log_, BATCHES)
    middle = list(log_.segments)[1]
    entries = middle.offset_index.entries
    assert entries > 0
    log_.close()
    if which in ("index", "both"):
        os.remove(offset_index_file(partition_dir, middle.base_offset))
    if which in ("timeindex", "both"):
        os.remove(time_index_file(partition_dir, middle.base_offset))
    log_ = open_log(CONFIG, recovery_point=BATCHES, had_clean_shutdown=True)
    rebuilt = log_.segments.get(middle.base_offset)
    assert rebuilt.offset_index.entries == entries
    assert rebuilt.time_index.last_entry().timestamp == NOW + rebuilt.read_next_offset() - 1
    check_recovered(log_, BATCHES)


def test_corrupt_index_is_rebuilt(open_log, partition_dir):
    log_ = open_log(CONFIG)
    append_batches(log_, BATCHES)
    first = log_.segments.first
    log_.close()
    with open(offset_index_file(partition_dir, first.base_offset), "ab") as f:
        f.write(b"\x00\x00\x00")  # not a whole entry
    log_ = open_log(CONFIG, recovery_point=BATCHES, had_clean_shutdown=True)
    assert os.path.getsize(offset_index_file(partition_dir, first.base_offset)) % 8 == 0
    check_recovered(log_, BATCHES)


def index_stamps(partition_dir):
    return {n: os.stat(os.path.join(partition_dir, n)).st_mtime_ns
            for n in os.listdir(partition_dir) if n.endswith((".index", ".timeindex"))}


def test_clean_shutdown_skips_recovery(open_log, partition_dir):
    active_base, _ = build_crashed_log(open_log, partition_dir)
    # The active segment's indexes are grown and trimmed on every open and close; the sealed ones must stay as they are.
    before = {n: t for n, t in index_stamps(partition_dir).items() if not n.startswith(f"{active_base:020d}")}
    assert len(before) >= 4
    log_ = open_log(CONFIG, recovery_point=BATCHES, had_clean_shutdown=True)
    log_.close()
    assert {n: t for n, t in index_stamps(partition_dir).items() if n in before} == before
    open_log(CONFIG, recovery_point=0, had_clean_shutdown=False)  # unclean: every segment is rebuilt
    after = index_stamps(partition_dir)
    assert all(after[n] != t for n, t in before.items())


def test_leftover_deleted_and_cleaned_files_are_removed(open_log, partition_dir):
    log_ = open_log(CONFIG)
    append_batches(log_, 5)
    log_.close()
    for name in ("00000000000000000099.log.deleted", "00000000000000000099.index.cleaned", "stray.tmp"):
        with open(os.path.join(partition_dir, name), "wb") as f:
            f.write(b"x")
    open_log(CONFIG, recovery_point=5, had_clean_shutdown=True)
    assert not [n for n in os.listdir(partition_dir) if n.endswith((".deleted", ".cleaned", ".tmp"))]
