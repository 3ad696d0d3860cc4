import os
import random

import pytest

from wirebroker.log.index_file import CorruptIndexError, IndexOffsetOverflowError
from wirebroker.log.offset_index import OffsetIndex, OffsetPosition
from wirebroker.log.time_index import TimeIndex, TimestampOffset
from wirebroker.log.txn_index import AbortedTxn, TransactionIndex

BASE = 1000


def make_offset_index(tmp_path, max_size=8 * 1000):
    return OffsetIndex(str(tmp_path / "00000000000000001000.index"), BASE, max_size)


def filled_offset_index(tmp_path, count=300, seed=7):
    rng = random.Random(seed)
    index = make_offset_index(tmp_path)
    entries, offset, position = [], BASE, 0
    for _ in range(count):
        offset += rng.randint(1, 50)
        position += rng.randint(1, 5000)
        index.append(offset, position)
        entries.append((offset, position))
    return index, entries


def brute_force_floor(entries, target):
    below = [e for e in entries if e[0] <= target]
    return OffsetPosition(*below[-1]) if below else OffsetPosition(BASE, 0)


def test_new_index_is_preallocated_to_whole_entries(tmp_path):
    index = make_offset_index(tmp_path, max_size=8 * 100 + 5)
    assert os.path.getsize(index.path) == 800
    assert index.max_entries == 100 and index.entries == 0


def test_offset_index_floor_lookups_match_brute_force(tmp_path):
    index, entries = filled_offset_index(tmp_path)
    rng = random.Random(1)
    targets = [BASE - 5, BASE, entries[0][0], entries[-1][0], entries[-1][0] + 100]
    targets += [rng.randint(BASE, entries[-1][0] + 10) for _ in range(500)]
    for target in targets:
        assert index.lookup(target) == brute_force_floor(entries, target), target


def test_offset_index_survives_trim_and_reopen(tmp_path):
    index, entries = filled_offset_index(tmp_path)
    index.close()
    assert os.path.getsize(index.path) == 8 * len(entries)
    reopened = make_offset_index(tmp_path)
    assert reopened.entries == len(entries)
    assert reopened.is_full()  # a trimmed index holds no spare slot until it is grown again
    assert [reopened.lookup(o) for o, _ in entries] == [OffsetPosition(o, p) for o, p in entries]
    reopened.resize(8 * 1000)
    assert not reopened.is_full()


def test_offset_index_truncate_to(tmp_path):
    index, entries = filled_offset_index(tmp_path, count=20)
    index.truncate_to(entries[10][0])  # an exact entry goes too
    assert index.entries == 10 and index.last_offset == entries[9][0]
    index.truncate_to(entries[5][0] + 1)  # between entries: keep the one below
    assert index.entries == 6
    index.truncate_to(BASE)
    assert index.entries == 0 and index.last_offset == BASE


def test_offset_index_refuses_going_backwards_and_overflow(tmp_path):
    index = make_offset_index(tmp_path)
    index.append(BASE + 10, 100)
    with pytest.raises(ValueError):
        index.append(BASE + 10, 200)
    with pytest.raises(IndexOffsetOverflowError):
        index.append(BASE + 2**31, 300)


def test_full_offset_index(tmp_path):
    index = make_offset_index(tmp_path, max_size=8 * 3)
    for i in range(3):
        index.append(BASE + i + 1, i * 10 + 1)
    assert index.is_full()
    with pytest.raises(ValueError):
        index.append(BASE + 10, 100)


def test_sanity_check_detects_bad_length_and_positions(tmp_path):
    index, entries = filled_offset_index(tmp_path, count=5)
    index.close()
    index.sanity_check(log_size=entries[-1][1] + 1)
    with pytest.raises(CorruptIndexError):
        make_offset_index(tmp_path).sanity_check(log_size=entries[-1][1])  # points past the end of the log
    with open(index.path, "ab") as f:
        f.write(b"\x01\x02\x03")
    with pytest.raises(CorruptIndexError):
        make_offset_index(tmp_path).sanity_check(log_size=10**9)


def make_time_index(tmp_path, max_size=12 * 100):
    return TimeIndex(str(tmp_path / "00000000000000001000.timeindex"), BASE, max_size)


def test_time_index_appends_only_growing_timestamps(tmp_path):
    index = make_time_index(tmp_path)
    index.maybe_append(-1, BASE)  # no timestamp: nothing to index
    index.maybe_append(100, BASE + 5)
    index.maybe_append(100, BASE + 9)  # same timestamp: ignored
    index.maybe_append(250, BASE + 20)
    assert index.entries == 2
    assert index.last_entry() == TimestampOffset(250, BASE + 20)
    with pytest.raises(ValueError):
        index.maybe_append(300, BASE + 10)  # offset going back
    with pytest.raises(ValueError):
        index.maybe_append(200, BASE + 30)  # timestamp going back


def test_time_index_lookup_and_truncate(tmp_path):
    index = make_time_index(tmp_path)
    for i in range(1, 11):
        index.maybe_append(i * 100, BASE + i * 10)
    assert index.lookup(50) == TimestampOffset(-1, BASE)
    assert index.lookup(100) == TimestampOffset(100, BASE + 10)
    assert index.lookup(555) == TimestampOffset(500, BASE + 50)
    assert index.lookup(10**12) == TimestampOffset(1000, BASE + 100)
    index.truncate_to(BASE + 45)
    assert index.last_entry() == TimestampOffset(400, BASE + 40)


def test_time_index_keeps_its_last_slot_for_the_roll_entry(tmp_path):
    index = make_time_index(tmp_path, max_size=12 * 3)
    index.maybe_append(1, BASE + 1)
    index.maybe_append(2, BASE + 2)
    assert index.is_full()
    with pytest.raises(ValueError):
        index.maybe_append(3, BASE + 3)
    index.maybe_append(3, BASE + 3, skip_full_check=True)
    assert index.entries == 3


def test_txn_index_append_collect_truncate_reopen(tmp_path):
    path = str(tmp_path / "00000000000000001000.txnindex")
    index = TransactionIndex(path, BASE)
    assert not os.path.exists(path)  # created on the first entry, as Kafka does
    txns = [AbortedTxn(1, 1000, 1010, 1000), AbortedTxn(2, 1005, 1020, 1011), AbortedTxn(1, 1030, 1040, 1041)]
    for txn in txns:
        index.append(txn)
    assert os.path.getsize(path) == 3 * 34
    with pytest.raises(ValueError):
        index.append(AbortedTxn(3, 1000, 1040, 1041))
    # The third entry's last stable offset passes the range end: no later segment can hold an overlapping entry.
    assert index.collect_aborted_txns(1015, 1035) == (txns[1:], True)
    assert index.collect_aborted_txns(1015, 2000) == (txns[1:], False)
    assert index.collect_aborted_txns(1000, 1005) == ([txns[0]], True)
    index.close()
    reopened = TransactionIndex(path, BASE)
    assert reopened.all_aborted_txns() == txns
    reopened.truncate_to(1020)
    assert reopened.all_aborted_txns() == txns[:1] and os.path.getsize(path) == 34
    reopened.sanity_check()
    with pytest.raises(CorruptIndexError):
        TransactionIndex(path, 2000).sanity_check()
