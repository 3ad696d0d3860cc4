"""The few record-level facts the log needs from inside a stored batch (decoded with protocol.records.iter_records).

The log works on batch headers almost everywhere. Three things need the records themselves:
  * ListOffsets by timestamp wants the first *record* with timestamp >= T (`record_timestamps`);
  * ListOffsets MAX_TIMESTAMP (KIP-734) wants the offset of the record holding the batch's max timestamp;
  * producer state needs the COMMIT/ABORT marker of a control batch (`end_txn_marker`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from wirebroker.protocol.records import (
    BatchHeader,
    TimestampType,
    iter_records,
    read_control_record,
)

# Bound on a stored batch's decompressed records when the log decodes them (a batch is at most max.message.bytes
# compressed; this only stops a pathological stream from expanding without limit).
MAX_DECOMPRESSED_RECORDS_BYTES = 256 * 1024 * 1024


class EndTransactionMarker(NamedTuple):
    """The single control record of a COMMIT or ABORT batch."""

    is_commit: bool
    coordinator_epoch: int


def record_timestamps(batch: bytes | memoryview, header: BatchHeader) -> Iterator[tuple[int, int]]:
    """(offset, timestamp) of each record of the batch at the start of `batch`."""
    for record in iter_records(batch, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES):
        yield record.offset, record.timestamp


def offset_of_max_timestamp(batch: bytes | memoryview, header: BatchHeader) -> int | None:
    """Offset of the first record whose timestamp is the batch's max timestamp (Kafka's offsetOfMaxTimestamp)."""
    if header.timestamp_type == TimestampType.LOG_APPEND_TIME:
        return header.base_offset
    return next((offset for offset, timestamp in record_timestamps(batch, header)
                 if timestamp == header.max_timestamp), None)


def end_txn_marker(batch: bytes | memoryview, header: BatchHeader) -> EndTransactionMarker | None:
    """The COMMIT/ABORT marker of a control batch, or None for an empty one (its transaction was cleaned away)."""
    record = next(iter_records(batch, 0, header, MAX_DECOMPRESSED_RECORDS_BYTES), None)
    if record is None:
        return None
    is_commit, coordinator_epoch = read_control_record(record)
    return EndTransactionMarker(is_commit, coordinator_epoch)
