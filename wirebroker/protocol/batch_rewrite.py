"""What a log cleaner reads of a stored batch and how it rewrites one (Kafka's MemoryRecords.filterTo building
blocks), on top of records.py's layout.

  * `iter_record_keys`: each record's offset, key and whether it has a value, without copying values or decoding
    headers: the cleaner decides on these alone, and decodes a batch whole only to rebuild it;
  * `build_retained_batch`: the batch with only the surviving records, each at its own offset (gaps), the same last
    offset, producer fields, flags and codec, optionally with the KIP-534 delete horizon;
  * `build_empty_batch`: the header alone, for a batch that keeps nothing but must keep its producer's sequence.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wirebroker.protocol.compression import CompressionType
from wirebroker.protocol.errors import CorruptMessageError
from wirebroker.protocol.primitives import DecodeError, read_varint, read_varlong
from wirebroker.protocol.records import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    BatchHeader,
    Record,
    TimestampType,
    assemble_batch,
    end_of,
    records_body,
    write_record,
)


def iter_record_keys(
    buf: bytes | bytearray | memoryview, pos: int, header: BatchHeader, max_decompressed: int
) -> Iterator[tuple[int, bytes | None, bool]]:
    """``(offset, key, has_value)`` of each record of the batch at ``pos``: what a log cleaner decides on, read
    without copying values or decoding headers (each record is skipped by its length). Faults as ``iter_records``."""
    body = records_body(buf, pos, header, max_decompressed)
    return iter(()) if body is None else _scan_keys(body, header)


def _scan_keys(body: memoryview, header: BatchHeader) -> Iterator[tuple[int, bytes | None, bool]]:
    # The cleaner's hot loop: one-byte varints (most deltas and lengths) are read inline, from bytes (faster to
    # index and slice than a memoryview).
    data = bytes(body)
    pos, limit = 0, len(data)
    try:
        for _ in range(header.records_count):
            length, pos = _varint_at(data, pos)
            end = end_of(length, pos, limit, "record")
            pos += 1  # the unused record attributes
            if data[pos] < 0x80:  # timestampDelta
                pos += 1
            else:
                _, pos = read_varlong(data, pos)
            offset_delta, pos = _varint_at(data, pos)
            key_length, pos = _varint_at(data, pos)
            key = None
            if key_length >= 0:
                key_end = end_of(key_length, pos, end, "key")
                key = data[pos:key_end]
                pos = key_end
            # A zig-zag varint is negative (a null value) exactly when the low bit of its first byte is set.
            yield header.base_offset + offset_delta, key, not data[pos] & 1
            pos = end
    except (IndexError, DecodeError) as exc:
        raise CorruptMessageError(f"truncated or malformed record: {exc}") from exc
    if pos != limit:
        raise CorruptMessageError(f"{limit - pos} bytes remain after the {header.records_count} declared records")


def _varint_at(data: bytes, pos: int) -> tuple[int, int]:
    raw = data[pos]
    if raw < 0x80:
        return (raw >> 1) ^ -(raw & 1), pos + 1
    return read_varint(data, pos)


def build_retained_batch(original: BatchHeader, records: Sequence[Record], delete_horizon_ms: int | None) -> bytes:
    """The batch ``original`` rewritten with only ``records`` (a log cleaner's survivors; Kafka's
    MemoryRecords.buildRetainedRecordsInto): same base and last offset (the last sequence of an idempotent producer
    stays), producer fields, flags, leader epoch and codec; each record keeps its offset and timestamp. With
    ``delete_horizon_ms`` (KIP-534) the batch has the delete-horizon attribute and baseTimestamp holds the horizon,
    the time after which a cleaner may drop its tombstones and markers (record timestamps are deltas from it)."""
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    body = bytearray()
    for record in records:
        write_record(body, record.offset - original.base_offset, record.timestamp - base_timestamp, record.key,
                     record.value, record.headers)
    if original.timestamp_type == TimestampType.LOG_APPEND_TIME:
        max_timestamp = original.max_timestamp
    else:
        max_timestamp = max(record.timestamp for record in records)
    attributes = original.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG_MASK
    return assemble_batch(
        body, original.compression, original.base_offset, original.partition_leader_epoch, attributes,
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
