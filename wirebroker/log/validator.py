"""A leader's append checked and stamped in place (Kafka's LogValidator, without its rewrite and recompression paths).

A client's batches are checked whole first (protocol.records.validate_batches: lengths, magic, CRC, record counts);
the broker's own (coordinators, transaction markers) only for whole batches with valid CRCs (`scan_batches`). Then
`check_timestamps` applies message.timestamp.before/after.max.ms, `check_keys_for_compaction` refuses records without
a key on a compacted topic, and `assign_offsets_and_epoch` writes each batch's base offset and partition leader epoch
into the request's buffer, which goes to the segment as it is: both fields lie outside the CRC. On LogAppendTime
topics it also sets the batch's timestamp type and max timestamp, and the CRC again.

Idempotent and transactional producers are checked against producer state as Kafka's
UnifiedLog.analyzeAndValidateProducerState does: `find_duplicate` finds a retried batch, and
`analyze_and_validate_producer_state` checks epochs and sequences and returns the updates for the log to apply after
the write.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

from wirebroker.log.config import LogConfig
from wirebroker.log.files import TopicPartition
from wirebroker.log.producer_state import (
    NO_PRODUCER_ID,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    ProducerAppendInfo,
    ProducerStateManager,
)
from wirebroker.log.batch_records import MAX_DECOMPRESSED_RECORDS_BYTES
from wirebroker.log.verification_guard import VerificationGuard
from wirebroker.protocol.batch_rewrite import scan_batch
from wirebroker.protocol.errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidTimestampError,
    InvalidTxnStateError,
)
from wirebroker.protocol.records import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    assign_offsets,
    crc_is_valid,
    read_header,
    set_log_append_time,
    with_offsets,
)

log = logging.getLogger(__name__)


class ValidatedBatch(NamedTuple):
    position: int
    header: BatchHeader  # with the offsets and leader epoch assigned


def scan_batches(view: memoryview) -> list[BatchHeader]:
    """The batches of an append from inside the broker (coordinators, transaction markers): whole, with valid CRCs."""
    headers, position = [], 0
    while position < len(view):
        header = read_header(view, position)
        if not crc_is_valid(view, position, header):
            raise CorruptMessageError(f"Record batch at position {position} is incomplete or fails its CRC")
        headers.append(header)
        position += header.size
    if not headers:
        raise CorruptMessageError("An append must hold at least one record batch")
    return headers


def follower_batches(view: memoryview, log_end_offset: int) -> tuple[memoryview, list[ValidatedBatch]]:
    """The whole batches of a follower's fetch, as the leader numbered them, and the view cut after the last one.

    A fetch may end in a partial batch (the leader's max bytes cut it): it is left for the next fetch. Each whole
    batch must pass its CRC, and the offsets must start at or after the follower's log end offset and increase, else
    the follower would write over its own log (Kafka's UnexpectedAppendOffsetException / OffsetsOutOfOrderException).
    """
    batches: list[ValidatedBatch] = []
    position, next_offset = 0, log_end_offset
    while len(view) - position >= BATCH_HEADER_SIZE:
        header = read_header(view, position)
        if position + header.size > len(view):
            break
        if not crc_is_valid(view, position, header):
            raise CorruptMessageError(f"Record batch at offset {header.base_offset} fetched from the leader fails "
                                      f"its CRC")
        if header.base_offset < next_offset:
            raise CorruptMessageError(f"Fetched batch at offset {header.base_offset} is below the next expected "
                                      f"offset {next_offset}")
        batches.append(ValidatedBatch(position, header))
        position += header.size
        next_offset = header.next_offset
    return view[:position], batches


def check_timestamps(headers: list[BatchHeader], config: LogConfig, now: int) -> None:
    """message.timestamp.before/after.max.ms for CreateTime, checked on each batch's first and max timestamp
    (Kafka checks every record; producers stamp the first record as the base, so the range is the same)."""
    for header in headers:
        if header.is_control:
            continue
        if header.base_timestamp < now - config.message_timestamp_before_max_ms:
            raise InvalidTimestampError(
                f"Timestamp {header.base_timestamp} of message with offset {header.base_offset} is out of range: "
                f"it is more than {config.message_timestamp_before_max_ms} ms before the broker's time {now}")
        if header.max_timestamp > now + config.message_timestamp_after_max_ms:
            raise InvalidTimestampError(
                f"Timestamp {header.max_timestamp} of message with offset {header.base_offset} is out of range: "
                f"it is more than {config.message_timestamp_after_max_ms} ms after the broker's time {now}")


def check_keys_for_compaction(view: memoryview, headers: list[BatchHeader], topic_partition: TopicPartition) -> None:
    """A compacted topic refuses records without a key: the cleaner could never decide which to keep (Kafka's
    LogValidator.validateKey). The only check that decodes records, and only on compacted topics."""
    position = 0
    for header in headers:
        if not header.is_control:  # keys only: values are neither copied nor headers decoded (the cleaner's scan)
            for record in scan_batch(view, position, header, MAX_DECOMPRESSED_RECORDS_BYTES).records:
                if record.key is None:
                    raise InvalidRecordError(f"Compacted topic cannot accept message without key in topic partition "
                                             f"{topic_partition}.")
        position += header.size


def assign_offsets_and_epoch(view: memoryview, headers: list[BatchHeader], next_offset: int, leader_epoch: int,
                             config: LogConfig, now: int) -> list[ValidatedBatch]:
    """Number the batches from `next_offset` (the log end offset) and stamp the leader epoch, in place."""
    validated = []
    position = 0
    for header in headers:
        assign_offsets(view, position, next_offset, leader_epoch)
        if config.log_append_time:  # control batches too, as Kafka's LogValidator stamps every batch
            set_log_append_time(view, position, now)
            assigned = read_header(view, position)
        else:
            assigned = with_offsets(header, next_offset, leader_epoch)
        validated.append(ValidatedBatch(position, assigned))
        position += assigned.size
        next_offset = assigned.next_offset
    return validated


def find_duplicate(producer_state: ProducerStateManager, batches: list[ValidatedBatch],
                   topic_partition: TopicPartition) -> BatchMetadata | None:
    """A batch that producer state has seen already (a retry): the append answers with the original's offsets."""
    for batch in batches:
        header = batch.header
        if header.producer_id == NO_PRODUCER_ID:
            continue
        entry = producer_state.last_entry(header.producer_id)
        duplicate = entry.find_duplicate_batch(header.producer_epoch, header.base_sequence,
                                               header.last_sequence) if entry else None
        if duplicate is not None:
            log.debug("Duplicate batch of producer %d (sequences %d..%d) on %s, answering with offsets %d..%d",
                      header.producer_id, header.base_sequence, header.last_sequence, topic_partition,
                      duplicate.first_offset, duplicate.last_offset)
            return duplicate
    return None


def analyze_and_validate_producer_state(
        producer_state: ProducerStateManager, view: memoryview, batches: list[ValidatedBatch],
        origin: AppendOrigin, verification_guard: VerificationGuard | None = None,
) -> tuple[dict[int, ProducerAppendInfo], list[CompletedTxn]]:
    """Check each producer's epoch and sequences (and transaction markers) against producer state, without changing
    it: the updates per producer id and the transactions the append completes, to apply once the bytes are written.

    `verification_guard` is given for a client's transactional append when transaction verification is on (SENTINEL
    when the partition needed no verification): a transactional batch is refused unless its transaction is open here
    or the producer's pending verification still holds that very guard (Kafka's batchMissingRequiredVerification)."""
    updates: dict[int, ProducerAppendInfo] = {}
    completed = []
    for batch in batches:
        header = batch.header
        if header.producer_id == NO_PRODUCER_ID:
            continue
        if verification_guard is not None and header.is_transactional and not header.is_control:
            _check_verified(producer_state, header, verification_guard)
        append_info = updates.get(header.producer_id)
        if append_info is None:
            append_info = updates[header.producer_id] = producer_state.prepare_update(header.producer_id, origin)
        completed_txn = append_info.append(header, view[batch.position:batch.position + header.size])
        if completed_txn is not None:
            completed.append(completed_txn)
    return updates, completed


def _check_verified(producer_state: ProducerStateManager, header: BatchHeader,
                    request_guard: VerificationGuard) -> None:
    """The transaction ended (its marker was written, or the verification expired) between the coordinator's answer
    and this append: writing the batch would open a transaction the coordinator does not know of."""
    if producer_state.has_ongoing_transaction(header.producer_id, header.producer_epoch):
        return
    if not producer_state.verification_guard(header.producer_id).verify(request_guard):
        raise InvalidTxnStateError("Record was not part of an ongoing transaction")
