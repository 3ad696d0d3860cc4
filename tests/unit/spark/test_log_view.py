"""wirebroker.spark's view of a log dir and the Kafka source's options, without Spark: logs written by the
project's own Log (as the broker writes them), read back as a consumer would see them."""

from __future__ import annotations

import os

import pytest

from wirebroker.log.checkpoints import (
    LOG_START_OFFSET_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    write_offset_checkpoint,
)
from wirebroker.log.files import TopicPartition
from wirebroker.log.log import Log
from wirebroker.log.producer_state import AppendOrigin
from wirebroker.protocol.compression import CompressionType
from wirebroker.protocol.records import TimestampType, build_batch, build_control_batch
from wirebroker.spark.log_view import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    LogDirectories,
    OffsetOutOfRangeError,
)
from wirebroker.spark.options import OffsetRange, SourceOptions, rate_limit

from ..log.helpers import NOW, small_config

CONFIG = small_config(internal_segment_bytes="1500")  # a few batches per segment


class LogDir:
    """A log dir with partitions written through Log, and its checkpoints written as the log manager writes them."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.logs: dict[TopicPartition, Log] = {}

    def log(self, topic: str, partition: int = 0) -> Log:
        tp = TopicPartition(topic, partition)
        if tp not in self.logs:
            self.logs[tp] = Log.open(os.path.join(self.path, f"{topic}-{partition}"), CONFIG, now_ms=NOW)
        return self.logs[tp]

    def append(self, topic: str, records, partition: int = 0, **kwargs) -> int:
        log_ = self.log(topic, partition)
        info = log_.append_as_leader(bytearray(build_batch(records, **kwargs)), 0, NOW)
        return info.first_offset

    def marker(self, topic: str, commit: bool, producer_id: int) -> int:
        marker = bytearray(build_control_batch(commit, producer_id, 0, 0, timestamp=NOW))
        return self.log(topic).append_as_leader(marker, 0, NOW, AppendOrigin.COORDINATOR).first_offset

    def checkpoint(self, high_watermarks: dict[TopicPartition, int] | None = None) -> None:
        for log_ in self.logs.values():
            log_.update_high_watermark(log_.log_end_offset)
        hws = {tp: log_.high_watermark for tp, log_ in self.logs.items()}
        hws.update(high_watermarks or {})
        write_offset_checkpoint(os.path.join(self.path, REPLICATION_OFFSET_CHECKPOINT_FILE), hws)
        write_offset_checkpoint(os.path.join(self.path, LOG_START_OFFSET_CHECKPOINT_FILE),
                                {tp: log_.log_start_offset for tp, log_ in self.logs.items()})

    def close(self) -> None:
        for log_ in self.logs.values():
            log_.close()


@pytest.fixture
def log_dir(tmp_path):
    opened = LogDir(str(tmp_path))
    yield opened
    opened.close()


def read(log_dir: LogDir, topic: str, start: int, end: int, isolation: str = READ_UNCOMMITTED, partition: int = 0):
    log_ = LogDirectories([log_dir.path]).partition(TopicPartition(topic, partition))
    return [(s.record.offset, s.record.key, s.record.value, s.record.headers, s.record.timestamp, s.timestamp_type)
            for s in log_.read(start, end, isolation)]


def test_every_codec_null_keys_values_and_headers_read_back_across_segments(log_dir):
    expected = []
    for i, codec in enumerate([CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY,
                               CompressionType.LZ4, CompressionType.ZSTD] * 3):
        records = [(NOW + i, None if i % 3 == 0 else b"k%d" % i, None if i % 4 == 0 else os.urandom(300),
                    (("h", b"x"), ("null", None)) if i % 2 else ())]
        offset = log_dir.append("t", records * 2, compression=codec)
        expected += [(offset + n, r[1], r[2], r[3], r[0], TimestampType.CREATE_TIME) for n, r in enumerate(records * 2)]
    log_dir.checkpoint()
    assert len(log_dir.log("t").segments) > 2
    assert read(log_dir, "t", 0, len(expected)) == expected
    assert read(log_dir, "t", 5, 17) == expected[5:17]


def test_nothing_past_the_checkpointed_high_watermark_is_read(log_dir):
    for i in range(10):
        log_dir.append("t", [(NOW, b"k", b"v%d" % i, ())])
    log_dir.checkpoint({TopicPartition("t", 0): 6})
    log_ = LogDirectories([log_dir.path]).partition(TopicPartition("t", 0))
    assert log_.high_watermark == log_.latest_offset(READ_UNCOMMITTED) == 6
    assert [r[2] for r in read(log_dir, "t", 0, 6)] == [b"v%d" % i for i in range(6)]
    with pytest.raises(OffsetOutOfRangeError):
        read(log_dir, "t", 0, 7)


def test_read_committed_skips_aborted_transactions_and_stops_at_the_open_one(log_dir):
    txn = {"is_transactional": True, "producer_epoch": 0}
    plain = log_dir.append("t", [(NOW, b"a", b"plain", ())])
    aborted = log_dir.append("t", [(NOW, b"b", b"aborted", ())], producer_id=1, base_sequence=0, **txn)
    committed = log_dir.append("t", [(NOW, b"c", b"committed", ())], producer_id=2, base_sequence=0, **txn)
    log_dir.marker("t", False, 1)
    log_dir.marker("t", True, 2)
    after = log_dir.append("t", [(NOW, b"d", b"after", ())])
    open_txn = log_dir.append("t", [(NOW, b"e", b"open", ())], producer_id=3, base_sequence=0, **txn)
    log_dir.append("t", [(NOW, b"f", b"later", ())])
    log_dir.checkpoint()
    log_ = LogDirectories([log_dir.path]).partition(TopicPartition("t", 0))
    assert log_.last_stable_offset() == open_txn
    committed_values = [r[2] for r in read(log_dir, "t", 0, open_txn, READ_COMMITTED)]
    assert committed_values == [b"plain", b"committed", b"after"]
    uncommitted = [r[2] for r in read(log_dir, "t", 0, log_.high_watermark)]
    assert uncommitted == [b"plain", b"aborted", b"committed", b"after", b"open", b"later"]  # no markers
    assert [r[2] for r in read(log_dir, "t", committed, after + 1, READ_COMMITTED)] == [b"committed", b"after"]
    assert plain == 0 and aborted == 1


def test_offsets_by_timestamp_as_list_offsets(log_dir):
    for i in range(12):
        log_dir.append("t", [(NOW + 10 * i, b"k", b"v", ())])
    log_dir.checkpoint()
    log_ = LogDirectories([log_dir.path]).partition(TopicPartition("t", 0))
    assert log_.offset_for_timestamp(NOW + 35, READ_UNCOMMITTED) == 4
    assert log_.offset_for_timestamp(NOW, READ_UNCOMMITTED) == 0
    assert log_.offset_for_timestamp(NOW + 1000, READ_UNCOMMITTED) is None


def test_the_kafka_source_options_select_topics_and_offset_ranges(log_dir):
    for topic in ("orders", "orders-eu", "users"):
        for partition in (0, 1):
            for i in range(8):
                log_dir.append(topic, [(NOW + i, b"k", os.urandom(300), ())], partition=partition)
    log_dir.checkpoint()

    def ranges(**options):
        return SourceOptions({"path": log_dir.path, **options}, streaming=False).batch_ranges()

    assert ranges(subscribe="orders,users") == [OffsetRange(t, p, 0, 8) for t in ("orders", "users") for p in (0, 1)]
    assert ranges(subscribePattern="orders.*") == [OffsetRange(t, p, 0, 8) for t in ("orders", "orders-eu")
                                                   for p in (0, 1)]
    assert ranges(assign='{"users": [1]}', startingOffsets='{"users": {"1": 3}}',
                  endingOffsets='{"users": {"1": -1}}') == [OffsetRange("users", 1, 3, 8)]
    assert ranges(assign='{"users": [0]}', startingTimestamp=str(NOW + 2), endingTimestamp=str(NOW + 5)) == \
        [OffsetRange("users", 0, 2, 5)]
    assert ranges(assign='{"users": [0]}', startingOffsetsByTimestamp=f'{{"users": {{"0": {NOW + 6}}}}}') == \
        [OffsetRange("users", 0, 6, 8)]
    with pytest.raises(ValueError, match="No offset matched"):
        ranges(subscribe="users", startingTimestamp=str(NOW + 99))
    assert ranges(subscribe="users", startingTimestamp=str(NOW + 99),
                  startingOffsetsByTimestampStrategy="latest") == []
    with pytest.raises(ValueError, match="can't be latest"):
        ranges(subscribe="users", startingOffsets="latest")
    with pytest.raises(ValueError, match="exactly one"):
        ranges(subscribe="users", assign='{"users": [0]}')
    with pytest.raises(OffsetOutOfRangeError):
        ranges(assign='{"users": [0]}', endingOffsets='{"users": {"0": 99}}')
    assert ranges(assign='{"users": [0]}', endingOffsets='{"users": {"0": 99}}', failOnDataLoss="false") == \
        [OffsetRange("users", 0, 0, 8)]
    split = ranges(subscribe="users", minPartitions="4")
    assert len(split) >= 4 and sum(r.end - r.start for r in split) == 16
    at_most = ranges(subscribe="users", maxRecordsPerPartition="5")
    assert max(r.end - r.start for r in at_most) <= 5 and len(at_most) > 2 and sum(r.end - r.start for r in at_most) == 16
    boundaries = set(LogDirectories([log_dir.path]).partition(TopicPartition("users", 0)).base_offsets)
    assert all(r.start in boundaries for r in at_most if r.partition == 0)


def test_with_fail_on_data_loss_false_a_planned_range_reads_what_retention_left(log_dir):
    for i in range(10):
        log_dir.append("t", [(NOW, b"k", b"v%d" % i, ())])
    log_dir.checkpoint()
    log_ = LogDirectories([log_dir.path]).partition(TopicPartition("t", 0))
    log_.log_start_offset = 6  # as after retention deleted offsets 0-5
    planned = OffsetRange("t", 0, 2, 8)
    strict = SourceOptions({"path": log_dir.path, "subscribe": "t"}, streaming=True)
    lenient = SourceOptions({"path": log_dir.path, "subscribe": "t", "failOnDataLoss": "false"}, streaming=True)
    assert strict.readable(planned, log_) == (2, 8)
    with pytest.raises(OffsetOutOfRangeError):
        list(log_.read(*strict.readable(planned, log_), READ_UNCOMMITTED))
    assert lenient.readable(planned, log_) == (6, 8)
    assert lenient.readable(planned._replace(end=4), log_) == (6, 6)


def test_max_offsets_per_trigger_is_prorated_as_the_kafka_source_does():
    a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    assert rate_limit({a: 0, b: 10}, {a: 100, b: 12}, 10) == {a: 9, b: 11}
    assert rate_limit({a: 5}, {a: 5}, 10) == {a: 5}


def test_the_last_stable_offset_comes_from_the_producer_snapshot_and_the_batches_after_it(tmp_path):
    txn = {"is_transactional": True, "producer_epoch": 0}
    first = LogDir(str(tmp_path))
    first.append("t", [(NOW, b"a", b"plain", ())])
    open_txn = first.append("t", [(NOW, b"b", b"open", ())], producer_id=9, base_sequence=0, **txn)
    first.checkpoint()
    first.close()  # a clean close writes the producer snapshot at the log end
    assert any(name.endswith(".snapshot") for name in os.listdir(tmp_path / "t-0"))
    second = LogDir(str(tmp_path))
    second.append("t", [(NOW, b"c", b"after", ())])
    closed_later = second.append("t", [(NOW, b"d", b"other", ())], producer_id=10, base_sequence=0, **txn)
    second.marker("t", True, 10)
    second.checkpoint()
    log_ = LogDirectories([str(tmp_path)]).partition(TopicPartition("t", 0))
    assert log_.last_stable_offset() == open_txn
    second.marker("t", False, 9)
    second.checkpoint()
    log_ = LogDirectories([str(tmp_path)]).partition(TopicPartition("t", 0))
    assert log_.last_stable_offset() == log_.high_watermark
    assert [r[2] for r in read(second, "t", 0, log_.high_watermark, READ_COMMITTED)] == [b"plain", b"after", b"other"]
    assert closed_later == 3
    second.close()
