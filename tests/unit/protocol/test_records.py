import struct
import time
import tracemalloc

import aiokafka.record.default_records as aiokafka_records
import kafka.record.default_records as kafka_records
import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from wirebroker.protocol.compression import CompressionType
from wirebroker.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    MessageTooLargeError,
    UnsupportedForMessageFormatError,
)
from wirebroker.protocol.primitives import write_varint, write_varlong
from wirebroker.protocol.records import (
    BATCH_HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    FileRegion,
    Record,
    TimestampType,
    assign_offsets,
    build_batch,
    build_control_batch,
    crc_is_valid,
    iter_records,
    read_control_record,
    read_header,
    set_log_append_time,
    validate_batches,
    with_offsets,
)

MiB = 1 << 20
BUDGET = 16 * MiB
CODECS = list(CompressionType)

# An independent statement of Kafka's v2 header layout, to craft hostile batches with.
KAFKA_HEADER = struct.Struct(">qiibIhiqqqhii")
ATTRIBUTES_AT = 21  # Kafka's DefaultRecordBatch.ATTRIBUTES_OFFSET: the CRC covers from here to the end
RECORDS_COUNT_AT = 57

SAMPLE = [  # (timestamp, key, value, headers): nulls, empties, headers, a value spanning compression blocks
    (1_700_000_000_000, b"key-0", b"value-0", []),
    (1_700_000_000_005, None, b"no key", [("trace", b"abc"), ("empty", b""), ("null", None)]),
    (1_699_999_999_990, b"tombstone", None, [("ünïcode", b"\x00\xff")]),
    (1_700_000_000_100, b"", b"", []),
    (1_700_000_000_100, b"big", bytes(range(256)) * 400 + b"tail", [("h", b"v")]),
]


def expected_records(records, base_offset=0):
    return [
        Record(base_offset + i, timestamp, key, value, tuple(headers))
        for i, (timestamp, key, value, headers) in enumerate(records)
    ]


def client_batch(builder_class, codec, records, producer_id=-1, producer_epoch=-1, base_sequence=-1, txn=False):
    builder = builder_class(
        magic=2,
        compression_type=codec,
        is_transactional=txn,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=10 * MiB,
    )
    for offset, (timestamp, key, value, headers) in enumerate(records):
        builder.append(offset, timestamp, key, value, headers)
    return bytes(builder.build())


def reframe(batch, *, records=None, records_count=None, attributes=None, last_offset_delta=None):
    """The batch with some fields or its records replaced, lengths and CRC made consistent again."""
    fields = list(KAFKA_HEADER.unpack_from(batch))
    body = batch[BATCH_HEADER_SIZE:] if records is None else records
    fields[1] = BATCH_HEADER_SIZE - LOG_OVERHEAD + len(body)
    if attributes is not None:
        fields[5] = attributes
    if last_offset_delta is not None:
        fields[6] = last_offset_delta
    if records_count is not None:
        fields[12] = records_count
    out = bytearray(KAFKA_HEADER.pack(*fields) + body)
    struct.pack_into(">I", out, 17, crc32c(out[ATTRIBUTES_AT:]))
    return bytes(out)


def test_layout_constants_are_kafkas():
    assert LOG_OVERHEAD == 12
    assert BATCH_HEADER_SIZE == 61 == KAFKA_HEADER.size


# Vectors made by real client libraries.

CLIENT_BUILDERS = {
    "kafka-python": kafka_records.DefaultRecordBatchBuilder,
    "aiokafka": aiokafka_records.DefaultRecordBatchBuilder,
}


@pytest.mark.parametrize("client", CLIENT_BUILDERS)
@pytest.mark.parametrize("codec", CODECS)
def test_client_batches_validate_and_decode_exactly(client, codec):
    batch = client_batch(CLIENT_BUILDERS[client], codec, SAMPLE)
    [header] = validate_batches(memoryview(batch), max_batch_size=MiB)
    assert header.compression == codec
    assert header.records_count == len(SAMPLE)
    assert header.size == len(batch)
    assert list(iter_records(batch, 0, header, BUDGET)) == expected_records(SAMPLE)


@pytest.mark.parametrize("client", CLIENT_BUILDERS)
def test_client_idempotent_transactional_header_fields(client):
    batch = client_batch(
        CLIENT_BUILDERS[client], CompressionType.LZ4, SAMPLE, producer_id=4242, producer_epoch=3,
        base_sequence=2**31 - 2, txn=True,
    )  # fmt: skip
    [header] = validate_batches(memoryview(batch), max_batch_size=MiB)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4242, 3, 2**31 - 2)
    assert header.is_transactional and not header.is_control
    assert header.last_offset_delta == len(SAMPLE) - 1
    assert header.last_sequence == kafka_records.DefaultRecordBatch(batch).last_sequence == 2  # wrapped past int32
    assert header.base_timestamp == SAMPLE[0][0]
    assert header.max_timestamp == max(record[0] for record in SAMPLE)


@pytest.mark.parametrize("codec", CODECS)
def test_clients_read_our_batches(codec):
    batch = build_batch(SAMPLE, compression=codec, producer_id=7, producer_epoch=1, base_sequence=100)
    theirs = kafka_records.DefaultRecordBatch(batch)
    assert theirs.validate_crc()
    assert (theirs.producer_id, theirs.producer_epoch, theirs.base_sequence) == (7, 1, 100)
    assert theirs.compression_type == codec
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in theirs] == [
        (r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in expected_records(SAMPLE)
    ]
    aio = aiokafka_records.DefaultRecordBatch(batch)
    assert aio.validate_crc()
    assert [(r.offset, r.key, r.value) for r in aio] == [(r.offset, r.key, r.value) for r in expected_records(SAMPLE)]


record_strategy = st.tuples(
    st.integers(min_value=0, max_value=2**45),
    st.none() | st.binary(max_size=40),
    st.none() | st.binary(max_size=300),
    st.lists(st.tuples(st.text(max_size=10), st.none() | st.binary(max_size=20)), max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(record_strategy, min_size=1, max_size=12),
    codec=st.sampled_from(CODECS),
    base_offset=st.integers(min_value=0, max_value=2**62),
)
def test_build_then_iterate_round_trips(records, codec, base_offset):
    batch = build_batch(records, compression=codec, base_offset=base_offset)
    header = read_header(batch)
    assert crc_is_valid(batch, 0, header)
    assert header.size == len(batch)
    assert header.last_offset == base_offset + len(records) - 1
    assert header.next_offset == header.last_offset + 1
    assert list(iter_records(batch, 0, header, BUDGET)) == expected_records(records, base_offset)
    theirs = kafka_records.DefaultRecordBatch(batch)
    assert [(r.offset, r.timestamp, r.key, r.value) for r in theirs] == [
        (r.offset, r.timestamp, r.key, r.value) for r in expected_records(records, base_offset)
    ]


# Integrity.

PLAIN = build_batch(SAMPLE[:3])
GZIPPED = build_batch(SAMPLE, compression=CompressionType.GZIP)


@settings(max_examples=150, deadline=None)
@given(batch=st.sampled_from([PLAIN, GZIPPED]), data=st.data())
def test_any_flipped_byte_in_the_crc_range_is_corrupt(batch, data):
    position = data.draw(st.integers(min_value=ATTRIBUTES_AT, max_value=len(batch) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    damaged = bytearray(batch)
    damaged[position] ^= flip
    with pytest.raises(CorruptMessageError):
        validate_batches(memoryview(damaged), max_batch_size=MiB)


def test_a_flipped_crc_is_corrupt():
    damaged = bytearray(PLAIN)
    damaged[17] ^= 0x01
    with pytest.raises(CorruptMessageError):
        validate_batches(memoryview(damaged), max_batch_size=MiB)


def test_assign_offsets_leaves_the_crc_valid():
    buf = bytearray(PLAIN)
    assign_offsets(buf, 0, base_offset=1_000_000, partition_leader_epoch=7)
    header = read_header(buf)
    assert (header.base_offset, header.partition_leader_epoch) == (1_000_000, 7)
    assert crc_is_valid(buf, 0, header)
    assert [r.offset for r in iter_records(buf, 0, header, BUDGET)] == [1_000_000, 1_000_001, 1_000_002]
    assert kafka_records.DefaultRecordBatch(bytes(buf)).validate_crc()


def test_assign_offsets_on_a_memoryview_at_a_position():
    buf = bytearray(GZIPPED + PLAIN)
    assign_offsets(memoryview(buf), len(GZIPPED), base_offset=5, partition_leader_epoch=2)
    first, second = read_header(buf), read_header(buf, len(GZIPPED))
    assert first.base_offset == 0
    assert (second.base_offset, second.partition_leader_epoch) == (5, 2)
    assert crc_is_valid(buf, len(GZIPPED), second)


@given(base_offset=st.integers(0, 2**62), epoch=st.integers(-1, 2**31 - 1))
def test_with_offsets_is_the_header_assign_offsets_leaves(base_offset, epoch):
    buf = bytearray(PLAIN)
    before = read_header(buf)
    assign_offsets(buf, 0, base_offset, epoch)
    assert with_offsets(before, base_offset, epoch) == read_header(buf)
    assert type(with_offsets(before, base_offset, epoch)) is BatchHeader


def test_set_log_append_time_rewrites_timestamps_and_recomputes_the_crc():
    buf = bytearray(GZIPPED)
    set_log_append_time(buf, 0, 1_800_000_000_000)
    header = read_header(buf)
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == 1_800_000_000_000
    assert header.compression == CompressionType.GZIP
    assert crc_is_valid(buf, 0, header)
    assert {r.timestamp for r in iter_records(buf, 0, header, BUDGET)} == {1_800_000_000_000}
    theirs = kafka_records.DefaultRecordBatch(bytes(buf))
    assert theirs.validate_crc()
    assert {(r.timestamp, r.timestamp_type) for r in theirs} == {(1_800_000_000_000, 1)}


# validate_batches: Kafka's produce-path checks, in Kafka's order.


def test_validate_accepts_a_plain_batch_and_returns_its_header():
    assert validate_batches(memoryview(PLAIN), max_batch_size=len(PLAIN)) == [read_header(PLAIN)]


@pytest.mark.parametrize(
    "records",
    [b"", PLAIN[:60], PLAIN[:-1], PLAIN + PLAIN, PLAIN + b"\x00" * 20],
    ids=["empty", "short-of-a-header", "truncated", "two-batches", "trailing-bytes"],
)
def test_anything_but_exactly_one_whole_batch_is_an_invalid_record(records):
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(records), max_batch_size=MiB)


def test_magic_below_two_is_invalid_on_produce_and_unsupported_when_read():
    old = bytearray(PLAIN)
    old[16] = 1
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(old), max_batch_size=MiB)
    with pytest.raises(UnsupportedForMessageFormatError):
        read_header(old)


def test_magic_above_two_is_corrupt():
    new = bytearray(PLAIN)
    new[16] = 3
    with pytest.raises(CorruptMessageError):
        validate_batches(memoryview(new), max_batch_size=MiB)


def test_batch_length_smaller_than_a_header_is_corrupt():
    short = bytearray(PLAIN)
    struct.pack_into(">i", short, 8, BATCH_HEADER_SIZE - LOG_OVERHEAD - 1)
    with pytest.raises(CorruptMessageError):
        read_header(short)


def test_produced_base_offset_must_be_zero():
    buf = bytearray(PLAIN)
    assign_offsets(buf, 0, base_offset=3, partition_leader_epoch=0)
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(buf), max_batch_size=MiB)


def test_batch_over_max_message_bytes_is_too_large():
    validate_batches(memoryview(PLAIN), max_batch_size=len(PLAIN))
    with pytest.raises(MessageTooLargeError):
        validate_batches(memoryview(PLAIN), max_batch_size=len(PLAIN) - 1)


@pytest.mark.parametrize(
    "changes",
    [
        {"records_count": 0},
        {"records_count": 2},
        {"records_count": -1},
        {"records_count": 2**31 - 1},
        {"last_offset_delta": -1},
        {"last_offset_delta": 5},
    ],
)
def test_counts_inconsistent_with_offsets_are_invalid_records(changes):
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(reframe(PLAIN, **changes)), max_batch_size=MiB)


def test_unknown_codec_is_corrupt():
    with pytest.raises(CorruptMessageError):
        validate_batches(memoryview(reframe(PLAIN, attributes=5)), max_batch_size=MiB)


def test_clients_may_not_write_control_batches():
    marker = build_control_batch(True, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=1)
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(marker), max_batch_size=MiB)


def test_producer_id_without_sequence_is_invalid():
    batch = build_batch(SAMPLE[:1], producer_id=9, producer_epoch=0, base_sequence=-1)
    with pytest.raises(InvalidRecordError):
        validate_batches(memoryview(batch), max_batch_size=MiB)


# Hostile records: every count and length is checked against the bytes left before anything is allocated.


def raw_record(*, offset_delta=0, key_length=None, key=b"k", header_count=0, tail=b""):
    body = bytearray(1)  # attributes
    write_varlong(body, 0)
    write_varint(body, offset_delta)
    write_varint(body, len(key) if key_length is None else key_length)
    body += key
    write_varint(body, 1)
    body += b"v"
    write_varint(body, header_count)
    body += tail
    framed = bytearray()
    write_varint(framed, len(body))
    return bytes(framed + body)


def refuse_fast(batch):
    header = read_header(batch)
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(CorruptMessageError):
            list(iter_records(batch, 0, header, BUDGET))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 0.5
    assert peak < MiB


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD])
def test_huge_records_count_fails_fast(codec):
    batch = build_batch(SAMPLE[:2], compression=codec)
    refuse_fast(reframe(batch, records_count=2**31 - 1, last_offset_delta=2**31 - 2))


def test_huge_header_count_fails_fast():
    refuse_fast(reframe(PLAIN, records=raw_record(header_count=2**31 - 1, tail=b"\x00" * 10), records_count=1))


def test_huge_key_length_fails_fast():
    refuse_fast(reframe(PLAIN, records=raw_record(key_length=2**31 - 1), records_count=1))


def test_record_length_past_the_end_is_corrupt():
    record = raw_record()
    grown = bytes([record[0] + 10]) + record[1:]  # one-byte varint length, 10 more than there is
    refuse_fast(reframe(PLAIN, records=grown, records_count=1))


def test_bytes_after_the_declared_records_are_corrupt():
    refuse_fast(reframe(PLAIN, records=raw_record() + raw_record(offset_delta=1), records_count=1))


def test_record_length_disagreeing_with_its_fields_is_corrupt():
    record = raw_record()
    refuse_fast(reframe(PLAIN, records=bytes([record[0] - 2]) + record[1:], records_count=1))


def test_header_key_must_be_utf8():
    tail = b"\x04\xff\xfe" + b"\x00"  # key length 2 (zig-zag 4), invalid UTF-8, value length 0
    refuse_fast(reframe(PLAIN, records=raw_record(header_count=1, tail=tail), records_count=1))


def test_decompressed_records_are_bounded_by_the_budget():
    header = read_header(GZIPPED)
    with pytest.raises(MessageTooLargeError):
        list(iter_records(GZIPPED, 0, header, max_decompressed=1000))


# Header properties.


@settings(max_examples=50, deadline=None)
@given(
    base_sequence=st.integers(min_value=-1, max_value=2**31 - 1),
    last_offset_delta=st.integers(min_value=0, max_value=2**31 - 1),
)
def test_last_sequence_wraps_as_kafka_does(base_sequence, last_offset_delta):
    header = read_header(reframe(PLAIN, last_offset_delta=last_offset_delta))._replace(base_sequence=base_sequence)
    if base_sequence == -1:
        assert header.last_sequence == -1
    elif base_sequence + last_offset_delta <= 2**31 - 1:
        assert header.last_sequence == base_sequence + last_offset_delta
    else:
        assert header.last_sequence == base_sequence + last_offset_delta - 2**31


def test_attribute_properties():
    header = read_header(reframe(PLAIN, attributes=0x40 | 0x20 | 0x10 | 0x08 | CompressionType.ZSTD))
    assert header.compression == CompressionType.ZSTD
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.is_transactional and header.is_control and header.has_delete_horizon
    plain = read_header(PLAIN)
    assert plain.compression == CompressionType.NONE and plain.timestamp_type == TimestampType.CREATE_TIME
    assert not (plain.is_transactional or plain.is_control or plain.has_delete_horizon)
    assert isinstance(plain, BatchHeader) and plain.size == plain.batch_length + 12


# Control records.


@pytest.mark.parametrize("commit", [True, False])
def test_control_batch_round_trip(commit):
    marker = build_control_batch(commit, 77, 4, 12, base_offset=900, timestamp=1_700_000_000_000)
    header = read_header(marker)
    assert header.is_control and header.is_transactional
    assert (header.producer_id, header.producer_epoch, header.base_offset) == (77, 4, 900)
    [record] = iter_records(marker, 0, header, BUDGET)
    assert read_control_record(record) == (commit, 12)
    [theirs] = kafka_records.DefaultRecordBatch(marker)
    assert (theirs.commit, theirs.abort) == (commit, not commit)


@pytest.mark.parametrize(
    ("key", "value"),
    [(None, b"\x00\x00\x00\x00\x00\x01"), (b"\x00\x00", b"\x00\x00\x00\x00\x00\x01"),
     (b"\x00\x00\x00\x07", b"\x00\x00\x00\x00\x00\x01"), (b"\x00\x00\x00\x01", b"\x00\x00")],
    ids=["no-key", "short-key", "unknown-type", "short-value"],
)  # fmt: skip
def test_malformed_control_records_are_corrupt(key, value):
    with pytest.raises(CorruptMessageError):
        read_control_record(Record(0, 0, key, value, ()))


def test_file_region_is_a_sized_range_that_keeps_its_file(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(PLAIN)
    with path.open("rb") as file:
        region = FileRegion(fileno=file.fileno(), position=12, size=40, file=file)
        assert len(region) == 40
        assert region.file is file
        with pytest.raises(AttributeError):
            region.size = 1  # frozen
