"""The log cleaner on a real log in tmp_path: latest value per key, offsets kept, tombstones and their delete horizon,
transactions, producer state, grouping, the .swap crash path, the choice of log and the cleaner checkpoint."""

from __future__ import annotations

import os
import time

import pytest

from wirebroker.log.cleaner_jobs import prepare_cleaning, swap_in
from wirebroker.log.cleaner_manager import (
    CLEANER_OFFSET_CHECKPOINT_FILE,
    LogCleanerManager,
    PreCleanStats,
    cleanable_offsets,
    log_to_clean,
)
from wirebroker.log.cleaner_offset_map import SkimpyOffsetMap
from wirebroker.log.compaction import Cleaner, CleanerStats, new_cleaned_segment
from wirebroker.log.files import CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX, TopicPartition
from wirebroker.log.producer_state import AppendOrigin
from wirebroker.log.segment import LogSegment
from wirebroker.log.throttler import Throttler
from wirebroker.protocol.compression import CompressionType
from wirebroker.protocol.records import (
    DELETE_HORIZON_FLAG_MASK,
    build_batch,
    build_control_batch,
    crc_is_valid,
    iter_records,
)

from .helpers import NOW, small_config

COMPACT = small_config(cleanup_policy="compact", internal_segment_bytes="2000", min_cleanable_dirty_ratio="0.01")
TP = TopicPartition("topic", 0)
DAY_MS = 24 * 3600 * 1000


def keyed(pairs: list[tuple[bytes, bytes | None]], timestamp: int = NOW, **kwargs: object) -> bytearray:
    return bytearray(build_batch([(timestamp, k, v, ()) for k, v in pairs], **kwargs))


def produce(log_, pairs: list[tuple[bytes, bytes | None]], **kwargs: object) -> int:
    info = log_.append_as_leader(keyed(pairs, **kwargs), leader_epoch=0, now_ms=NOW)
    log_.update_high_watermark(log_.log_end_offset)
    return info.first_offset


def new_cleaner(map_bytes: int = 1 << 20) -> Cleaner:
    return Cleaner(0, SkimpyOffsetMap(map_bytes), 0.9, Throttler(float("inf")), lambda tp: None)


def clean(log_, now: int = NOW, cleaner: Cleaner | None = None, first_dirty: int | None = None) -> tuple[int,
                                                                                                     CleanerStats]:
    first, uncleanable, _ = cleanable_offsets(log_, first_dirty, now)
    return clean_chosen(log_to_clean(TP, log_, first, uncleanable, False), now, cleaner)


def clean_chosen(to_clean, now: int = NOW, cleaner: Cleaner | None = None) -> tuple[int, CleanerStats]:
    """What a cleaner thread does, with the cleaning in this process instead of its cleaner process."""
    prepared = prepare_cleaning(to_clean, now)
    result = (cleaner or new_cleaner()).clean(prepared.job)
    swap_in(prepared, result)
    return result.end_offset, result.stats


def records(log_) -> list:
    """Every record in the log with its batch header, checking each batch's CRC on the way."""
    found = []
    for segment in log_.segments:
        for batch in segment.log.batches(with_data=True):
            assert crc_is_valid(batch.data, 0, batch.header)
            found.extend((batch.header, r) for r in iter_records(batch.data, 0, batch.header, 1 << 24))
    return found


def table(log_) -> dict[bytes, tuple[int, bytes | None]]:
    latest = {}
    for _, record in records(log_):
        latest[record.key] = (record.offset, record.value)
    return latest


def test_keeps_the_latest_record_of_each_key_at_its_offset(open_log):
    log_ = open_log(COMPACT)
    expected = {}
    for round_ in range(30):
        for k in range(5):
            key, value = b"k%d" % k, b"v%d-%d" % (k, round_) * 5
            expected[key] = (produce(log_, [(key, value)]), value)
    log_.roll(NOW)
    size_before, segments_before = log_.size, log_.number_of_segments
    end_offset, stats = clean(log_)
    assert end_offset == log_.segments.last.base_offset
    assert table(log_) == expected
    assert [r.offset for _, r in records(log_)] == sorted(offset for offset, _ in expected.values())
    assert log_.size < size_before / 10
    assert stats.messages_read == 150 and stats.messages_written == 5
    assert log_.number_of_segments == segments_before  # grouped by their sizes before cleaning: one each
    clean(log_, first_dirty=0)
    assert log_.number_of_segments == 2  # the next cleaning groups the small cleaned segments into one
    assert table(log_) == expected
    # Reads from any offset still work across the gaps.
    assert log_.read(0, 1 << 20).records
    assert not [name for name in os.listdir(log_.dir) if name.endswith((CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX))]


def test_never_cleans_the_active_segment(open_log):
    log_ = open_log(COMPACT)
    for i in range(10):
        produce(log_, [(b"same", b"value-%d" % i)])
    assert log_.number_of_segments == 1
    first, uncleanable, _ = cleanable_offsets(log_, None, NOW)
    assert log_to_clean(TP, log_, first, uncleanable, False).cleanable_bytes == 0
    clean(log_)
    assert len(records(log_)) == 10


def test_tombstones_stay_until_their_delete_horizon(open_log):
    log_ = open_log(COMPACT)
    produce(log_, [(b"a", b"1"), (b"b", b"1")])
    produce(log_, [(b"a", None)])
    log_.roll(NOW)
    clean(log_, now=NOW)
    kept = records(log_)
    assert [(r.key, r.value) for _, r in kept] == [(b"b", b"1"), (b"a", None)]
    header = kept[1][0]
    assert header.attributes & DELETE_HORIZON_FLAG_MASK
    assert header.base_timestamp == NOW + DAY_MS  # delete.retention.ms default
    assert kept[1][1].timestamp == NOW  # the record's own timestamp survives the new base
    clean(log_, now=NOW + DAY_MS - 1, first_dirty=0)
    assert [(r.key, r.value) for _, r in records(log_)] == [(b"b", b"1"), (b"a", None)]
    clean(log_, now=NOW + DAY_MS, first_dirty=0)
    assert [(r.key, r.value) for _, r in records(log_)] == [(b"b", b"1")]


def test_compression_codec_is_kept_in_rewritten_batches(open_log):
    log_ = open_log(COMPACT)
    produce(log_, [(b"a", b"1" * 100), (b"b", b"1" * 100)], compression=CompressionType.GZIP)
    produce(log_, [(b"a", b"2")])
    log_.roll(NOW)
    clean(log_)
    kept = records(log_)
    assert [(r.key, r.value) for _, r in kept] == [(b"b", b"1" * 100), (b"a", b"2")]
    assert kept[0][0].compression == CompressionType.GZIP
    assert kept[0][0].last_offset_delta == 1  # the batch keeps its last offset (and so its last sequence)


def test_map_smaller_than_the_dirty_section_cleans_part_of_it(open_log):
    log_ = open_log(COMPACT)
    for i in range(40):
        produce(log_, [(b"k%d" % i, b"v")])
    log_.roll(NOW)
    cleaner = new_cleaner(map_bytes=24 * 12)  # 12 slots, 10 at the load factor
    end_offset, _ = clean(log_, cleaner=cleaner)
    assert end_offset == 10
    assert len(records(log_)) == 40  # all keys distinct: nothing to drop


def test_aborted_transaction_records_are_removed_and_lso_respected(open_log):
    log_ = open_log(COMPACT)
    txn = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    produce(log_, [(b"a", b"committed")])
    log_.append_as_leader(keyed([(b"a", b"aborted")], base_sequence=0, **txn), 0, NOW)
    log_.append_as_leader(bytearray(build_control_batch(False, 7, 0, 0, timestamp=NOW)), 0, NOW,
                          AppendOrigin.COORDINATOR)
    log_.roll(NOW)
    log_.append_as_leader(keyed([(b"b", b"open")], base_sequence=1, **txn), 0, NOW)  # an open transaction
    log_.update_high_watermark(log_.log_end_offset)
    produce(log_, [(b"c", b"after")])
    log_.roll(NOW)
    assert log_.last_stable_offset == 3
    _, uncleanable, _ = cleanable_offsets(log_, None, NOW)
    assert uncleanable == 3  # never past the last stable offset
    end_offset, _ = clean(log_)
    assert end_offset == 3
    kept = records(log_)
    assert [(r.key, r.value) for h, r in kept if not h.is_control] == [(b"a", b"committed"), (b"b", b"open"),
                                                                        (b"c", b"after")]
    assert [r.offset for h, r in kept if h.is_control] == [2]  # the ABORT marker stays while its data goes
    assert log_.collect_aborted_transactions(0, 3)  # and the cleaned segment's .txnindex still lists it


def test_last_batch_of_an_idempotent_producer_survives_as_an_empty_batch(open_log, partition_dir):
    log_ = open_log(COMPACT)
    produce(log_, [(b"a", b"old")], producer_id=5, producer_epoch=2, base_sequence=0)
    produce(log_, [(b"a", b"new")])  # supersedes the producer's only record
    log_.roll(NOW)
    clean(log_)
    batches = [b.header for s in log_.segments for b in s.log.batches()]
    assert batches[0].producer_id == 5 and batches[0].records_count == 0 and batches[0].base_sequence == 0
    assert table(log_) == {b"a": (1, b"new")}
    log_.close()
    reopened = open_log(COMPACT, had_clean_shutdown=False)
    entry = reopened.active_producers()[5]
    assert (entry.producer_epoch, entry.last_seq) == (2, 0)


def test_a_swap_left_by_a_crash_is_completed_at_load(open_log, partition_dir):
    log_ = open_log(COMPACT)
    for i in range(20):
        produce(log_, [(b"k%d" % (i % 3), b"v%d" % i * 20)])
    log_.roll(NOW)
    expected = table(log_)
    first, uncleanable, _ = cleanable_offsets(log_, None, NOW)
    prepared = prepare_cleaning(log_to_clean(TP, log_, first, uncleanable, False), NOW)
    for group in new_cleaner().clean(prepared.job).groups:
        cleaned = LogSegment(log_.dir, group[0], COMPACT, NOW, suffix=CLEANED_FILE_SUFFIX)
        cleaned.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)  # the crash comes right after the renames
        cleaned.close()
    reopened = open_log(COMPACT, had_clean_shutdown=False)
    assert table(reopened) == expected
    assert len(records(reopened)) == 3


def test_a_cleaned_file_left_by_a_crash_is_dropped_at_load(open_log):
    log_ = open_log(COMPACT)
    for i in range(20):
        produce(log_, [(b"k%d" % (i % 3), b"v%d" % i * 20)])
    log_.roll(NOW)
    cleaned = new_cleaned_segment(log_.dir, COMPACT, 0, NOW)
    cleaned.append(0, NOW, 0, keyed([(b"k0", b"partial")]))
    cleaned.close()
    reopened = open_log(COMPACT, had_clean_shutdown=False)
    assert len(records(reopened)) == 20


def test_manager_chooses_the_dirtiest_compacted_log_and_checkpoints_it(tmp_path, open_log):
    from wirebroker.log.config import LogConfig
    from wirebroker.log.log import Log
    compacted = open_log(COMPACT)
    for i in range(30):
        produce(compacted, [(b"same", b"v%d" % i * 20)])
    compacted.roll(NOW)
    deleted = Log.open(str(tmp_path / "plain-0"), small_config(), now_ms=NOW)
    deleted.append_as_leader(keyed([(b"x", b"y" * 3000)]), 0, NOW)
    deleted.roll(NOW)
    manager = LogCleanerManager([str(tmp_path)], {TP: compacted, TopicPartition("plain", 0): deleted})
    chosen = manager.grab_filthiest_compacted_log(NOW)
    assert chosen is not None and chosen.topic_partition == TP and chosen.cleanable_ratio == 1.0
    assert manager.grab_filthiest_compacted_log(NOW) is None  # in progress: not chosen twice
    end_offset, _ = clean_chosen(chosen)
    manager.done_cleaning(TP, str(tmp_path), end_offset)
    with open(tmp_path / CLEANER_OFFSET_CHECKPOINT_FILE) as f:
        assert f.read() == f"0\n1\ntopic 0 {end_offset}\n"
    assert manager.grab_filthiest_compacted_log(NOW) is None  # clean now
    lagging = LogConfig.from_props({"cleanup.policy": "compact", "min.compaction.lag.ms": str(DAY_MS),
                                    "internal.segment.bytes": "2000"})
    compacted.update_config(lagging)
    produce(compacted, [(b"same", b"late")])
    compacted.roll(NOW)
    first, uncleanable, _ = cleanable_offsets(compacted, end_offset, NOW)
    assert uncleanable == first  # the new segment is younger than min.compaction.lag.ms
    deleted.close()


@pytest.mark.parametrize("ratio, expected", [("0.99", False), ("0.01", True)])
def test_min_cleanable_dirty_ratio(tmp_path, open_log, ratio, expected):
    from wirebroker.log.config import LogConfig
    log_ = open_log(LogConfig.from_props({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": ratio,
                                          "internal.segment.bytes": "2000"}))
    for i in range(10):
        produce(log_, [(b"k%d" % i, b"v" * 100)])
    log_.roll(NOW)
    clean(log_)
    manager = LogCleanerManager([str(tmp_path)], {TP: log_})
    manager.update_checkpoints(str(tmp_path), update=(TP, log_.segments.last.base_offset))
    produce(log_, [(b"k0", b"v" * 100)])
    log_.roll(NOW)
    assert (manager.grab_filthiest_compacted_log(NOW) is not None) is expected


def test_a_compacted_topic_refuses_records_without_key(open_log):
    from wirebroker.protocol.errors import InvalidRecordError
    log_ = open_log(COMPACT)
    with pytest.raises(InvalidRecordError, match="Compacted topic cannot accept message without key"):
        log_.append_as_leader(keyed([(b"a", b"1"), (None, b"2")], compression=CompressionType.LZ4), 0, NOW)
    assert log_.log_end_offset == 0
    log_.append_as_leader(bytearray(build_control_batch(True, 3, 0, 0, timestamp=NOW)), 0, NOW,
                          AppendOrigin.COORDINATOR)


def test_retention_racing_a_cleaning_refuses_the_swap(open_log):
    from wirebroker.log.compaction import LogCleaningAbortedError
    log_ = open_log(small_config(cleanup_policy="compact,delete", internal_segment_bytes="2000",
                                 min_cleanable_dirty_ratio="0.01"))
    for i in range(60):
        produce(log_, [(b"k%d" % (i % 4), b"v%d" % i * 20)])
    log_.roll(NOW)
    second = log_.segments.values(0, 2**62)[1].base_offset

    def retention_strikes(tp) -> None:
        if any(name.endswith(CLEANED_FILE_SUFFIX) for name in os.listdir(log_.dir)) and log_.log_start_offset == 0:
            log_.increment_log_start_offset(second)
            log_.delete_old_segments(NOW)
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 20), 0.9, Throttler(float("inf")), retention_strikes)
    with pytest.raises(LogCleaningAbortedError):
        clean(log_, cleaner=cleaner)
    assert log_.segments.first.base_offset == second
    assert not [name for name in os.listdir(log_.dir) if name.endswith(CLEANED_FILE_SUFFIX)]
    clean(log_, first_dirty=second)  # the next cleaning starts from the new log start
    assert sorted(table(log_)) == [b"k0", b"k1", b"k2", b"k3"]
    assert all(r.offset >= second for _, r in records(log_))


def test_log_manager_runs_the_cleaner_threads(tmp_path):
    import time

    from wirebroker.log.manager import LogManager
    settings = {"log.cleaner.backoff.ms": 20, "log.cleaner.threads": 2, "log.cleaner.dedupe.buffer.size": 4 << 20}
    manager = LogManager([tmp_path], small_config(), 0, broker_config=settings)
    manager.startup()
    try:
        assert manager.cleaner is not None and len(manager.cleaner._threads) == 2
        log_ = manager.get_or_create_log("topic", 0, config=COMPACT)
        for i in range(60):
            produce(log_, [(b"k%d" % (i % 4), b"v%d" % i * 20)])
        log_.roll(NOW)
        deadline = time.monotonic() + 10
        while len(records(log_)) > 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(records(log_)) == 4
        manager.delete_log("topic", 0)  # aborts any cleaning and forgets the partition's checkpoint
        assert "topic" not in (tmp_path / CLEANER_OFFSET_CHECKPOINT_FILE).read_text()
    finally:
        manager.shutdown()
    disabled = LogManager([tmp_path / "off"], small_config(), 0, broker_config={"log.cleaner.enable": False})
    assert disabled.cleaner is None


def test_max_compaction_lag_makes_a_log_cleanable_below_the_dirty_ratio(tmp_path, open_log):
    from wirebroker.log.config import LogConfig
    config = LogConfig.from_props({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.99",
                                   "max.compaction.lag.ms": "60000", "internal.segment.bytes": "2000"})
    log_ = open_log(config)
    for i in range(10):
        produce(log_, [(b"k%d" % i, b"v" * 100)])
    log_.roll(NOW)
    manager = LogCleanerManager([str(tmp_path)], {TP: log_})
    manager.update_checkpoints(str(tmp_path), update=(TP, log_.segments.last.base_offset))
    produce(log_, [(b"k0", b"v" * 100)])  # a little dirt, far below the ratio
    log_.roll(NOW)
    assert manager.grab_filthiest_compacted_log(NOW + 59_000) is None
    seen = PreCleanStats()
    chosen = manager.grab_filthiest_compacted_log(NOW + 61_000, seen)  # its first batch is now older than the lag
    assert chosen is not None and chosen.need_compaction_now
    assert seen.max_compaction_delay_ms == 1_000  # max-compaction-delay-secs


def test_throttler_holds_the_rate():
    import time
    throttler = Throttler(500_000, check_interval_ms=50)
    start = time.monotonic()
    for _ in range(100):
        time.sleep(0.001)  # the cleaner's own work between reads: about 0.1 s unthrottled
        throttler.maybe_throttle(2_000)  # 200 kB at 500 kB/s: about 0.4 s
    assert 0.3 < time.monotonic() - start < 1.5


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD])
def test_a_scanned_batch_rebuilt_with_some_records_reads_back_the_same(codec):
    from wirebroker.protocol.batch_rewrite import build_retained_batch, scan_batch
    from wirebroker.protocol.records import read_header
    originals = [(NOW, b"a", b"1", (("h", b"x"),)), (NOW + 5, None, b"2", ()), (NOW + 300, b"c", None, ())]
    data = build_batch(originals, base_offset=40, compression=codec, producer_id=3, producer_epoch=1,
                       base_sequence=7)
    header = read_header(data)
    scanned = scan_batch(data, 0, header, 1 << 20)
    assert [(r.offset, r.timestamp, r.key, r.has_value) for r in scanned.records] == [
        (40, NOW, b"a", True), (41, NOW + 5, None, True), (42, NOW + 300, b"c", False)]
    for horizon in (None, NOW + DAY_MS):
        rebuilt = build_retained_batch(header, scanned.body, [scanned.records[0], scanned.records[2]], horizon)
        new = read_header(rebuilt)
        assert crc_is_valid(rebuilt, 0, new) and new.compression == codec
        assert (new.base_offset, new.last_offset, new.base_sequence, new.producer_id) == (40, 42, 7, 3)
        assert new.has_delete_horizon == (horizon is not None) and new.max_timestamp == NOW + 300
        assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in iter_records(rebuilt, 0, new, 1 << 20)] \
            == [(40, NOW, b"a", b"1", (("h", b"x"),)), (42, NOW + 300, b"c", None, ())]


def test_a_commit_marker_goes_after_its_delete_horizon_once_its_transaction_is_gone(open_log):
    log_ = open_log(COMPACT)
    txn = {"producer_id": 9, "producer_epoch": 0, "is_transactional": True}
    log_.append_as_leader(keyed([(b"a", b"in-txn")], base_sequence=0, **txn), 0, NOW)
    log_.append_as_leader(bytearray(build_control_batch(True, 9, 0, 0, timestamp=NOW)), 0, NOW,
                          AppendOrigin.COORDINATOR)
    produce(log_, [(b"a", b"later")], producer_id=10, producer_epoch=0, base_sequence=0)
    produce(log_, [(b"b", b"keeps producer 10 elsewhere")], producer_id=10, producer_epoch=0, base_sequence=1)
    log_.roll(NOW)
    clean(log_, now=NOW)
    markers = [h for h, _ in records(log_) if h.is_control]
    # Producer 9's marker is its last entry: kept for fencing, as an empty batch would be.
    assert len(markers) == 1 and markers[0].producer_id == 9
    assert (b"a", b"in-txn") not in [(r.key, r.value) for _, r in records(log_)]
    log_.producer_state.remove_expired_producers(NOW + 10 * DAY_MS)  # producer 9 is no longer active
    # As in Kafka: the cleaning that drops the transaction's (empty) batch keeps the marker, the next one gives it a
    # delete horizon, and the first cleaning after the horizon removes it.
    for day, markers_left in ((2, 1), (4, 1), (6, 0)):
        clean(log_, now=NOW + day * DAY_MS, first_dirty=0)
        assert len([h for h, _ in records(log_) if h.is_control]) == markers_left


def test_a_truncation_below_the_cleaned_offset_moves_the_checkpoint_back(tmp_path, open_log):
    log_ = open_log(COMPACT)
    for i in range(40):
        produce(log_, [(b"k%d" % (i % 4), b"v%d" % i * 20)])
    log_.roll(NOW)
    manager = LogCleanerManager([str(tmp_path)], {TP: log_})
    chosen = manager.grab_filthiest_compacted_log(NOW)
    end_offset, _ = clean_chosen(chosen)
    manager.done_cleaning(TP, str(tmp_path), end_offset)
    assert end_offset > 20
    log_.truncate_to(20, NOW)  # a follower cut back to its leader
    for i in range(40):
        produce(log_, [(b"k%d" % (i % 4), b"again%d" % i * 20)])
    log_.roll(NOW)
    chosen = manager.grab_filthiest_compacted_log(NOW)
    assert chosen is not None and chosen.first_dirty_offset == 20
    assert manager.all_cleaner_checkpoints()[TP] == 20


def _cleaning_job(log_):
    for i in range(3000):
        produce(log_, [(b"k%d" % (i % 7), b"v%d" % i * 100)])
    log_.roll(NOW)
    first, uncleanable, _ = cleanable_offsets(log_, None, NOW)
    return prepare_cleaning(log_to_clean(TP, log_, first, uncleanable, False), NOW)


def test_a_cleaner_process_cleans_aborts_and_is_started_again_after_dying(open_log):
    import signal
    import threading

    from wirebroker.log.cleaner_process import (
        CleanerProcess,
        CleanerProcessError,
        SharedThrottle,
    )
    from wirebroker.log.compaction import LogCleaningAbortedError
    log_ = open_log(small_config(cleanup_policy="compact", internal_segment_bytes="200000"))
    prepared = _cleaning_job(log_)
    expected = table(log_)
    slow = SharedThrottle(200_000.0, check_interval_ms=20)  # 3 MB to read: 15 s, time enough to abort or kill it
    throttled = CleanerProcess(0, 1 << 20, 0.9, lambda: slow)
    try:
        aborted_at = time.monotonic() + 0.5
        with pytest.raises(LogCleaningAbortedError):
            throttled.run(prepared.job, lambda: time.monotonic() > aborted_at)
        assert not [name for name in os.listdir(log_.dir) if name.endswith(CLEANED_FILE_SUFFIX)]
        first_pid = throttled.pid
        threading.Timer(0.5, os.kill, (first_pid, signal.SIGKILL)).start()
        with pytest.raises(CleanerProcessError, match="exited"):
            throttled.run(prepared.job, lambda: False)
    finally:
        throttled.stop()
    unthrottled = CleanerProcess(0, 1 << 20, 0.9, lambda: None)
    try:
        unthrottled.run(prepared.job, lambda: False)
        idle_pid = unthrottled.pid
        os.kill(idle_pid, signal.SIGKILL)  # dies between cleanings: the next one starts another process
        os.waitpid(idle_pid, 0)  # dead for sure before the next cleaning looks
        result = unthrottled.run(prepared.job, lambda: False)
        assert unthrottled.pid not in (None, os.getpid(), first_pid, idle_pid)
    finally:
        unthrottled.stop()
    swap_in(prepared, result)
    assert table(log_) == expected and len(records(log_)) == 7


def test_a_failed_cleaning_counts_its_partition_and_dirty_bytes_as_uncleanable(tmp_path, open_log):
    log_ = open_log(COMPACT)
    for i in range(20):
        produce(log_, [(b"k%d" % (i % 5), b"v" * 100)])
    log_.roll(NOW)
    manager = LogCleanerManager([str(tmp_path)], {TP: log_})
    assert manager.uncleanable_partitions(NOW) == {str(tmp_path): (0, 0)}
    to_clean = manager.grab_filthiest_compacted_log(NOW)
    assert to_clean is not None and to_clean.cleanable_bytes > 0
    manager.cleaning_failed(TP, aborted=False)
    assert manager.uncleanable_partitions(NOW) == {str(tmp_path): (1, to_clean.cleanable_bytes)}
    assert manager.grab_filthiest_compacted_log(NOW) is None  # set aside until the broker restarts
