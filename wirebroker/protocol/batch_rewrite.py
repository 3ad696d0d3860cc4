"""What a log cleaner reads of a stored batch and how it rewrites one (Kafka's MemoryRecords.filterTo building
blocks), on top of records.py's layout.

  * `scan_batch`: each record's offset, timestamp, key, whether it has a value, and where its bytes lie in the
    (decompressed) body, without copying values or decoding headers: the cleaner decides on these alone;
  * `build_retained_batch`: the batch with only the surviving records, copied as they are but for their timestamp
    delta (re-encoded from the new base timestamp); each keeps its offset (gaps), the batch keeps its base and last
    offset, producer fields, flags and codec, and optionally gets the KIP-534 delete horizon;
  * `build_empty_batch`: the header alone, for a batch that keeps nothing but must keep its producer's sequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from wirebroker.protocol.compression import CompressionType
from wirebroker.protocol.errors import CorruptMessageError
from wirebroker.protocol.primitives import (
    DecodeError,
    read_varint,
    read_varlong,
    write_varint,
    write_varlong,
)
from wirebroker.protocol.records import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
    TimestampType,
    assemble_batch,
    end_of,
    records_body,
)


class ScannedRecord(NamedTuple):
    offset: int
    timestamp: int  # as stored: base timestamp + delta (for LogAppendTime the batch's max timestamp is the truth)
    key: bytes | None
    has_value: bool
    attributes: int  # the record's attributes byte (unused by Kafka, kept as it is)
    tail_start: int  # where the offsetDelta begins in the body: the record's bytes from there on are copied
    end: int


class ScannedBatch(NamedTuple):
    body: bytes
    records: list[ScannedRecord]


def scan_batch(buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader,
               max_decompressed: int) -> ScannedBatch:
    """The records of the batch at ``pos`` as a cleaner needs them; faults as ``records.iter_records``."""
    body = records_body(buf, pos, header, max_decompressed)
    if body is None:
        return ScannedBatch(b"", [])
    # The cleaner's hot loop: one-byte varints (most deltas and lengths) are read inline, from bytes (faster to
    # index and slice than a memoryview).
    data = bytes(body)
    records = []
    pos, limit = 0, len(data)
    try:
        for _ in range(header.records_count):
            length, pos = _varint_at(data, pos)
            end = end_of(length, pos, limit, "record")
            attributes = data[pos]
            timestamp_delta, tail_start = _varlong_at(data, pos + 1)
            offset_delta, pos = _varint_at(data, tail_start)
            key_length, pos = _varint_at(data, pos)
            key = None
            if key_length >= 0:
                key_end = end_of(key_length, pos, end, "key")
                key = data[pos:key_end]
                pos = key_end
            # A zig-zag varint is negative (a null value) exactly when the low bit of its first byte is set.
            records.append(ScannedRecord(header.base_offset + offset_delta, header.base_timestamp + timestamp_delta,
                                         key, not data[pos] & 1, attributes, tail_start, end))
            pos = end
    except (IndexError, DecodeError) as exc:
        raise CorruptMessageError(f"truncated or malformed record: {exc}") from exc
    if pos != limit:
        raise CorruptMessageError(f"{limit - pos} bytes remain after the {header.records_count} declared records")
    return ScannedBatch(data, records)


def _varint_at(data: bytes, pos: int) -> tuple[int, int]:
    raw = data[pos]
    if raw < 0x80:
        return (raw >> 1) ^ -(raw & 1), pos + 1
    return read_varint(data, pos)


def _varlong_at(data: bytes, pos: int) -> tuple[int, int]:
    raw = data[pos]
    if raw < 0x80:
        return (raw >> 1) ^ -(raw & 1), pos + 1
    return read_varlong(data, pos)


def build_retained_batch(original: BatchHeader, body: bytes, records: Sequence[ScannedRecord],
                         delete_horizon_ms: int | None) -> bytes:
    """The batch ``original`` rewritten with only ``records`` (scanned from its ``body``; Kafka's
    MemoryRecords.buildRetainedRecordsInto): same base and last offset (the last sequence of an idempotent producer
    stays), producer fields, flags, leader epoch and codec; each record keeps its offset and timestamp. With
    ``delete_horizon_ms`` (KIP-534) the batch has the delete-horizon attribute and baseTimestamp holds the horizon,
    the time after which a cleaner may drop its tombstones and markers (record timestamps are deltas from it)."""
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    out = bytearray()
    for record in records:
        rewritten = bytearray((record.attributes,))
        write_varlong(rewritten, record.timestamp - base_timestamp)
        rewritten += body[record.tail_start:record.end]
        write_varint(out, len(rewritten))
        out += rewritten
    if original.timestamp_type == TimestampType.LOG_APPEND_TIME:
        max_timestamp = original.max_timestamp
    else:
        max_timestamp = max(record.timestamp for record in records)
    attributes = original.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return assemble_batch(
        out, original.compression, original.base_offset, original.partition_leader_epoch, attributes,
        original.last_offset_delta, base_timestamp, max_timestamp, original.producer_id, original.producer_epoch,
        original.base_sequence, len(records))


def build_empty_batch(original: BatchHeader) -> bytes:
    """A header-only batch standing for ``original`` after a cleaner removed all its records (Kafka's
    DefaultRecordBatch.writeEmptyHeader): it keeps the offsets, producer id, epoch and sequences so that producer
    state survives compaction."""
    attributes = original.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    return assemble_batch(
        bytearray(), CompressionType.NONE, original.base_offset, original.partition_leader_epoch, attributes,
        original.last_offset_delta, original.max_timestamp, original.max_timestamp, original.producer_id,
        original.producer_epoch, original.base_sequence, 0)
