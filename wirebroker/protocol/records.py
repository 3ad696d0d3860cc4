"""RecordBatch v2 (magic 2): the unit that producers send, the log stores and consumers fetch, as raw bytes.

Layout (big-endian; Kafka's DefaultRecordBatch)::

    baseOffset            int64   offset of the first record; 0 from producers, assigned by the broker
    batchLength           int32   bytes after this field, to the end of the batch
    partitionLeaderEpoch  int32   set by the broker on append
    magic                 int8    2
    crc                   uint32  CRC-32C (Castagnoli) of attributes .. end of batch
    attributes            int16   bits 0-2 compression codec, 3 timestamp type (1 = LogAppendTime),
                                  4 transactional, 5 control, 6 delete horizon set (baseTimestamp holds it)
    lastOffsetDelta       int32   offset of the last record minus baseOffset
    baseTimestamp         int64   timestamp of the first record
    maxTimestamp          int64   largest record timestamp, or the broker's time for LogAppendTime
    producerId            int64   -1 without idempotence
    producerEpoch         int16
    baseSequence          int32   -1 without idempotence
    recordsCount          int32
    records               the records, compressed as one stream when the codec is not 0

The CRC covers attributes through the end of the batch; it excludes baseOffset, batchLength, partitionLeaderEpoch,
magic and itself, so the broker assigns offsets and the leader epoch without recomputing it (only LogAppendTime,
which rewrites attributes and maxTimestamp, needs a new CRC).

Each record::

    length          varint    bytes after this field
    attributes      int8      unused
    timestampDelta  varlong   from baseTimestamp
    offsetDelta     varint    from baseOffset
    keyLength       varint    -1 for a null key
    key             bytes
    valueLength     varint    -1 for a null value
    value           bytes
    headersCount    varint
    headers         [keyLength varint, key UTF-8, valueLength varint (-1 null), value bytes] * headersCount

The produce path checks batches with ``validate_batches`` and assigns offsets with ``assign_offsets`` without ever
decoding records; ``iter_records`` decodes them for the cold paths (coordinators, compaction, tests), checking every
declared length and count against the bytes left before it allocates anything.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, NamedTuple

from wirebroker.protocol import checksum
from wirebroker.protocol.compression import CompressionType, compress, decompress
from wirebroker.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    MessageTooLargeError,
    UnsupportedForMessageFormatError,
)
from wirebroker.protocol.primitives import (
    DecodeError,
    read_varint,
    read_varlong,
    write_varint,
    write_varlong,
)

MAGIC = 2

_HEADER = struct.Struct(
    ">"
    "q"  # baseOffset
    "i"  # batchLength: bytes after this field
    "i"  # partitionLeaderEpoch (outside the CRC)
    "b"  # magic
    "I"  # crc: CRC-32C of attributes .. end
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

NO_SEQUENCE = -1
NO_PRODUCER_ID = -1
_INT32_MAX = 2**31 - 1
_CODEC_IDS = frozenset(CompressionType)

# The smallest record: length, attributes, timestampDelta, offsetDelta, keyLength, valueLength, headersCount, one
# byte each. A records count above bytes-left / 7 cannot be real.
_MIN_RECORD_SIZE = 7
# The smallest header: a key length and a value length, one byte each.
_MIN_HEADER_SIZE = 2


class TimestampType(enum.IntEnum):
    """Kafka's TimestampType of a v2 batch (attribute bit 3)."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class BatchHeader(NamedTuple):
    """The 61-byte header of a v2 record batch; field order is the wire order of ``_HEADER``."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1

    @property
    def size(self) -> int:
        """Bytes of the whole batch, from baseOffset to the end."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_sequence(self) -> int:
        """Sequence of the last record, wrapping past int32 max to 0 as Kafka's incrementSequence does."""
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        if self.base_sequence > _INT32_MAX - self.last_offset_delta:
            return self.last_offset_delta - (_INT32_MAX - self.base_sequence) - 1
        return self.base_sequence + self.last_offset_delta


def _field_offset(name: str) -> int:
    return struct.calcsize(_HEADER.format[: 1 + BatchHeader._fields.index(name)])


_new_header = tuple.__new__  # BatchHeader._make without its Python frame: a header is read per append
LOG_OVERHEAD = _field_offset("partition_leader_epoch")  # baseOffset + batchLength, before the length-counted part
BATCH_HEADER_SIZE = _HEADER.size
_PARTITION_LEADER_EPOCH_OFFSET = _field_offset("partition_leader_epoch")
_CRC_OFFSET = _field_offset("crc")
_ATTRIBUTES_OFFSET = _field_offset("attributes")
_MAX_TIMESTAMP_OFFSET = _field_offset("max_timestamp")
_BASE_OFFSET = struct.Struct(">q")
_PARTITION_LEADER_EPOCH = struct.Struct(">i")
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_MAX_TIMESTAMP = struct.Struct(">q")


class Record(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


@dataclass(slots=True, frozen=True)
class FileRegion:
    """A range of an open log file standing for records bytes; the network layer sends it with os.sendfile.

    Message codecs treat any records value that is not bytes-like as such a part.
    """

    fileno: int
    position: int
    size: int
    file: BinaryIO  # held so the descriptor stays open until the region is sent

    def __len__(self) -> int:
        return self.size


def read_header(buf: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """The batch header at ``pos``; reads only its 61 bytes, so the body may be absent, and checks no CRC.

    Magic below 2 is UnsupportedForMessageFormatError; fewer than 61 bytes, magic above 2 (as Kafka's batch
    iterator) or a batchLength too small for the header are CorruptMessageError.
    """
    if len(buf) - pos < BATCH_HEADER_SIZE:
        raise CorruptMessageError(f"{len(buf) - pos} bytes left at position {pos}, less than a batch header")
    header = _new_header(BatchHeader, _HEADER.unpack_from(buf, pos))
    if header.magic < MAGIC:
        raise UnsupportedForMessageFormatError(f"record batch magic {header.magic}: only v2 is supported")
    if header.magic > MAGIC:
        raise CorruptMessageError(f"invalid record batch magic {header.magic}")
    if header.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
        raise CorruptMessageError(f"record batch length {header.batch_length} is smaller than its header")
    return header


def with_offsets(header: BatchHeader, base_offset: int, partition_leader_epoch: int) -> BatchHeader:
    """The header as `assign_offsets` leaves it in the buffer, without reading it again."""
    return _new_header(BatchHeader, (base_offset, header[1], partition_leader_epoch, *header[3:]))


def crc_is_valid(buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader) -> bool:
    """Whether the batch at ``pos`` is whole in ``buf`` and its CRC matches attributes .. end."""
    end = pos + header.size
    if end > len(buf):
        return False
    return checksum.crc32c(memoryview(buf)[pos + _ATTRIBUTES_OFFSET : end]) == header.crc


def validate_batches(buf: memoryview, max_batch_size: int) -> list[BatchHeader]:
    """Check a produce request's records field for one partition, as Kafka's broker does, without decoding records.

    Returns the headers of its batches: exactly one, since Kafka (ProduceRequest.validateRecords) accepts exactly one
    v2 batch per partition. In Kafka's order:
    - no whole batch, magic other than 2, a second batch or trailing bytes -> InvalidRecordError (Kafka ignores a
      partial trailing batch and trims it; we refuse it, since the field is appended to the log as it is);
    - magic above 2, a batchLength too small for a header, an unknown codec id -> CorruptMessageError;
    - baseOffset other than 0 -> InvalidRecordError;
    - a batch larger than ``max_batch_size`` (max.message.bytes) -> MessageTooLargeError;
    - a CRC mismatch -> CorruptMessageError;
    - what LogValidator.validateBatch refuses from clients -> InvalidRecordError: recordsCount < 1 or unlike
      lastOffsetDelta + 1, a control batch, a producer id without a base sequence.
    Checks that need more than the batch (zstd before produce v7, timestamps, producer state) are the caller's.
    """
    view = memoryview(buf)
    if len(view) < BATCH_HEADER_SIZE:
        raise InvalidRecordError(f"the {len(view)} bytes of records hold no whole record batch")
    try:
        header = read_header(view)
    except UnsupportedForMessageFormatError as exc:
        raise InvalidRecordError(f"produce requests may only carry record batches of magic v2: {exc}") from exc
    if header.size > len(view):
        raise InvalidRecordError(f"a record batch of {header.size} bytes overruns the {len(view)} bytes of records")
    if header.size < len(view):
        raise InvalidRecordError("produce requests may carry exactly one record batch per partition")
    if header.compression not in _CODEC_IDS:
        raise CorruptMessageError(f"unknown compression codec id {header.compression}")
    if header.base_offset != 0:
        raise InvalidRecordError(f"the baseOffset of a produced record batch must be 0, not {header.base_offset}")
    if header.size > max_batch_size:
        raise MessageTooLargeError(
            f"the record batch size {header.size} exceeds the maximum configured value of {max_batch_size}"
        )
    if not crc_is_valid(view, 0, header):
        raise CorruptMessageError(f"record batch is corrupt (stored crc = {header.crc})")
    _check_client_batch(header)
    return [header]


def _check_client_batch(header: BatchHeader) -> None:
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        raise InvalidRecordError(f"record batch has an invalid lastOffsetDelta {header.last_offset_delta}")
    if header.records_count <= 0:
        raise InvalidRecordError(f"invalid reported count for record batch: {header.records_count}")
    if count_from_offsets != header.records_count:
        raise InvalidRecordError(
            f"inconsistent batch offset range (lastOffsetDelta {header.last_offset_delta}) "
            f"and count of records {header.records_count}"
        )
    if header.is_control:
        raise InvalidRecordError("clients are not allowed to write control records")
    if header.producer_id > NO_PRODUCER_ID and header.base_sequence < 0:
        raise InvalidRecordError(
            f"invalid sequence number {header.base_sequence} in record batch with producerId {header.producer_id}"
        )


def assign_offsets(buf: bytearray | memoryview, pos: int, base_offset: int, partition_leader_epoch: int) -> None:
    """Set baseOffset and partitionLeaderEpoch in place; both are outside the CRC, which stays valid."""
    _BASE_OFFSET.pack_into(buf, pos, base_offset)
    _PARTITION_LEADER_EPOCH.pack_into(buf, pos + _PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def set_log_append_time(buf: bytearray | memoryview, pos: int, timestamp: int) -> None:
    """Mark the batch at ``pos`` LogAppendTime with maxTimestamp ``timestamp``, in place, and recompute its CRC."""
    header = read_header(buf, pos)
    _ATTRIBUTES.pack_into(buf, pos + _ATTRIBUTES_OFFSET, header.attributes | TIMESTAMP_TYPE_MASK)
    _MAX_TIMESTAMP.pack_into(buf, pos + _MAX_TIMESTAMP_OFFSET, timestamp)
    _write_crc(buf, pos, header.size)


def _write_crc(buf: bytearray | memoryview, pos: int, size: int) -> None:
    _CRC.pack_into(buf, pos + _CRC_OFFSET, checksum.crc32c(memoryview(buf)[pos + _ATTRIBUTES_OFFSET : pos + size]))


def iter_records(
    buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader, max_decompressed: int
) -> Iterator[Record]:
    """The records of the batch at ``pos``, decoded lazily; compressed records are first decompressed whole, to at
    most ``max_decompressed`` bytes (MessageTooLargeError past it).

    Any structural fault is CorruptMessageError (Kafka's record iterator says INVALID_RECORD; here the batch comes
    from the log or a test, so a fault means corrupt bytes). Counts and lengths are checked against the bytes left
    before anything is allocated for them.
    """
    body = records_body(buf, pos, header, max_decompressed)
    return iter(()) if body is None else _decode_records(body, header)


def records_body(buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader,
                 max_decompressed: int) -> memoryview | None:
    """The (decompressed) records of the batch at ``pos``, checked against its count; None when it has none."""
    body = memoryview(buf)[pos + BATCH_HEADER_SIZE : pos + header.size]
    if len(body) != header.size - BATCH_HEADER_SIZE:
        raise CorruptMessageError(f"record batch of {header.size} bytes overruns the buffer at position {pos}")
    if header.records_count < 0:
        raise CorruptMessageError(f"invalid record count {header.records_count}")
    if header.records_count == 0:
        return None
    if header.compression != CompressionType.NONE:
        body = memoryview(decompress(header.compression, body, max_decompressed))
    if header.records_count > len(body) // _MIN_RECORD_SIZE:
        raise CorruptMessageError(f"record count {header.records_count} cannot fit in {len(body)} bytes")
    return body


def _decode_records(data: memoryview, header: BatchHeader) -> Iterator[Record]:
    log_append_time = header.max_timestamp if header.timestamp_type == TimestampType.LOG_APPEND_TIME else None
    pos = 0
    try:
        for _ in range(header.records_count):
            length, pos = read_varint(data, pos)
            end = end_of(length, pos, len(data), "record")
            timestamp_delta, pos = read_varlong(data, pos + 1)  # + 1: the unused record attributes
            offset_delta, pos = read_varint(data, pos)
            key, pos = _read_nullable_bytes(data, pos, end, "key")
            value, pos = _read_nullable_bytes(data, pos, end, "value")
            headers, pos = _read_headers(data, pos, end)
            if pos != end:
                raise CorruptMessageError(f"record length {length} disagrees with its fields ({pos - end:+} bytes)")
            timestamp = log_append_time if log_append_time is not None else header.base_timestamp + timestamp_delta
            yield Record(header.base_offset + offset_delta, timestamp, key, value, headers)
    except (IndexError, DecodeError) as exc:
        raise CorruptMessageError(f"truncated or malformed record: {exc}") from exc
    if pos != len(data):
        raise CorruptMessageError(f"{len(data) - pos} bytes remain after the {header.records_count} declared records")


def end_of(length: int, pos: int, limit: int, what: str) -> int:
    """Where a field of `length` bytes at `pos` ends; CorruptMessageError if it would pass `limit`."""
    if length < 0 or length > limit - pos:
        raise CorruptMessageError(f"{what} length {length} does not fit the {limit - pos} bytes left")
    return pos + length


def _read_nullable_bytes(data: memoryview, pos: int, limit: int, what: str) -> tuple[bytes | None, int]:
    length, pos = read_varint(data, pos)
    if length < 0:  # Kafka reads any negative length as null
        return None, pos
    end = end_of(length, pos, limit, what)
    return bytes(data[pos:end]), end


def _read_headers(data: memoryview, pos: int, limit: int) -> tuple[tuple[tuple[str, bytes | None], ...], int]:
    count, pos = read_varint(data, pos)
    if count < 0 or count > (limit - pos) // _MIN_HEADER_SIZE:
        raise CorruptMessageError(f"header count {count} cannot fit in the {limit - pos} bytes left of the record")
    headers = []
    for _ in range(count):
        key_length, pos = read_varint(data, pos)
        end = end_of(key_length, pos, limit, "header key")
        try:
            key = str(data[pos:end], "utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptMessageError(f"header key is not UTF-8: {exc}") from exc
        value, pos = _read_nullable_bytes(data, end, limit, "header value")
        headers.append((key, value))
    return tuple(headers), pos


def build_batch(
    records: Sequence[tuple[int, bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]],
    *,
    base_offset: int = 0,
    compression: int = CompressionType.NONE,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = -1,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    timestamp_type: int = TimestampType.CREATE_TIME,
) -> bytes:
    """A v2 batch of ``(timestamp, key, value, headers)`` records with consecutive offsets from ``base_offset``."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    base_timestamp = records[0][0]
    body = bytearray()
    for offset_delta, (timestamp, key, value, headers) in enumerate(records):
        _write_record(body, offset_delta, timestamp - base_timestamp, key, value, headers)
    attributes = (
        (TIMESTAMP_TYPE_MASK if timestamp_type == TimestampType.LOG_APPEND_TIME else 0)
        | (TRANSACTIONAL_FLAG_MASK if is_transactional else 0)
        | (CONTROL_FLAG_MASK if is_control else 0)
    )
    return assemble_batch(
        body, compression, base_offset, partition_leader_epoch, attributes, len(records) - 1, base_timestamp,
        max(record[0] for record in records), producer_id, producer_epoch, base_sequence, len(records))


def assemble_batch(body: bytearray, compression: int, base_offset: int, partition_leader_epoch: int, attributes: int,
                   last_offset_delta: int, base_timestamp: int, max_timestamp: int, producer_id: int,
                   producer_epoch: int, base_sequence: int, records_count: int) -> bytes:
    """Header + (compressed) records, with the batch length and the CRC computed."""
    batch = bytearray(BATCH_HEADER_SIZE)
    if body:
        batch += compress(compression, body)
    header = BatchHeader(
        base_offset=base_offset,
        batch_length=len(batch) - LOG_OVERHEAD,
        partition_leader_epoch=partition_leader_epoch,
        magic=MAGIC,
        crc=0,  # written once the rest of the batch is in place
        attributes=attributes | compression,
        last_offset_delta=last_offset_delta,
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=records_count,
    )
    _HEADER.pack_into(batch, 0, *header)
    _write_crc(batch, 0, len(batch))
    return bytes(batch)


def _write_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes | None]],
) -> None:
    """Append one record (its length first) to a batch body being built."""
    record = bytearray(1)  # attributes: unused
    write_varlong(record, timestamp_delta)
    write_varint(record, offset_delta)
    _write_nullable_bytes(record, key)
    _write_nullable_bytes(record, value)
    write_varint(record, len(headers))
    for header_key, header_value in headers:
        _write_nullable_bytes(record, header_key.encode())
        _write_nullable_bytes(record, header_value)
    write_varint(out, len(record))
    out += record


def _write_nullable_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        write_varint(out, -1)
    else:
        write_varint(out, len(data))
        out += data


# Control records: Kafka's transaction markers (EndTransactionMarker), alone in a transactional control batch.
class ControlRecordType(enum.IntEnum):
    ABORT = 0
    COMMIT = 1


_TXN_MARKER_TYPES = frozenset(ControlRecordType)
_CONTROL_RECORD_KEY = struct.Struct(">hh")  # version (0), ControlRecordType
_END_TXN_MARKER_VALUE = struct.Struct(">hi")  # version (0), coordinatorEpoch


def build_control_batch(
    commit: bool,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    base_offset: int = 0,
    *,
    timestamp: int,
) -> bytes:
    """A transaction marker batch, as the transaction coordinator has partition leaders write it."""
    record_type = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    key = _CONTROL_RECORD_KEY.pack(0, record_type)
    value = _END_TXN_MARKER_VALUE.pack(0, coordinator_epoch)
    return build_batch(
        [(timestamp, key, value, ())],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
    )


def read_control_record(record: Record) -> tuple[bool, int]:
    """``(is_commit, coordinator_epoch)`` of a transaction marker; CorruptMessageError if it is not one.

    Like Kafka, a newer version than 0 is read by its version 0 fields.
    """
    if record.key is None or len(record.key) < _CONTROL_RECORD_KEY.size:
        raise CorruptMessageError("control record key is shorter than version and type")
    key_version, record_type = _CONTROL_RECORD_KEY.unpack_from(record.key)
    if key_version < 0 or record_type not in _TXN_MARKER_TYPES:
        raise CorruptMessageError(f"not a transaction marker: key version {key_version}, type {record_type}")
    if record.value is None or len(record.value) < _END_TXN_MARKER_VALUE.size:
        raise CorruptMessageError("transaction marker value is shorter than version and coordinator epoch")
    value_version, coordinator_epoch = _END_TXN_MARKER_VALUE.unpack_from(record.value)
    if value_version < 0:
        raise CorruptMessageError(f"invalid transaction marker version {value_version}")
    return record_type == ControlRecordType.COMMIT, coordinator_epoch
