"""What a log read returns (Kafka's LogOffsetMetadata and FetchDataInfo)."""

from __future__ import annotations

from typing import NamedTuple

from wirebroker.log.txn_index import AbortedTxn
from wirebroker.protocol.records import FileRegion

UNKNOWN_OFFSET = -1


class LogOffsetMetadata(NamedTuple):
    """An offset and, when known, where it sits: the segment's base offset and the byte position in that segment."""

    message_offset: int
    segment_base_offset: int = UNKNOWN_OFFSET
    relative_position_in_segment: int = UNKNOWN_OFFSET

    @property
    def message_offset_only(self) -> bool:
        return self.segment_base_offset == UNKNOWN_OFFSET and self.relative_position_in_segment == UNKNOWN_OFFSET


class FetchDataInfo(NamedTuple):
    """The records of a read: a range of a segment file (sent with os.sendfile) or b"" when there is nothing to send.

    `fetch_offset_metadata` locates the first batch read (the fetch purgatory compares positions with it);
    `first_entry_incomplete` is set when max_bytes cut the first batch short (min_one_message was off);
    `aborted_transactions` is filled for read_committed reads only.
    """

    fetch_offset_metadata: LogOffsetMetadata
    records: FileRegion | bytes
    first_entry_incomplete: bool = False
    aborted_transactions: list[AbortedTxn] | None = None
