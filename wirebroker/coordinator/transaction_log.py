"""The records of `__transaction_state`, in Kafka's exact format (Kafka's TransactionLog), so that Kafka's
`DumpLogSegments --transaction-log-decoder` reads them.

One record per transactional id and change; compaction keeps the last:

    key   = 0: int16 (the coordinator record type TRANSACTION_LOG), then TransactionLogKey v0 (transactional id)
    value = 0: int16 (the value version), then TransactionLogValue v0  (null: a tombstone, the id expired)

TransactionLogValue v0 holds producer id, epoch, timeout, status (TransactionState's id), the partitions (null in
Empty, grouped by topic otherwise), last-update and start timestamps. Kafka writes v1 (flexible, with the previous
and next producer ids and the client's transaction version as tagged fields) for a transaction ended under
transaction protocol 2 (KIP-890, EndTxn v5+) and v0 otherwise, as this module does; both are read. The codecs are the
ones generated from Kafka's own schemas (schemas/transaction-coordinator/), tagged fields included: like Kafka's
serializer they write a tagged field only when it differs from its default (a next producer id of -1 is left out),
and read an absent one as its default.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from wirebroker.coordinator.internal_records import with_fields
from wirebroker.coordinator.transaction_state import (
    NO_PRODUCER_EPOCH,
    TRANSACTION_VERSION_2,
    TransactionState,
    TxnTransit,
)
from wirebroker.protocol.messages.transaction_log_key import TransactionLogKey
from wirebroker.protocol.messages.transaction_log_value import TransactionLogValue
from wirebroker.protocol.primitives import DecodeError

_SHORT = struct.Struct(">h")
TRANSACTION_LOG_RECORD_TYPE = 0  # Kafka's CoordinatorRecordType.TRANSACTION_LOG
KEY_VERSION = 0
VALUE_VERSION = 0  # transaction protocol 1 (Kafka's TransactionVersion.TV_1.transactionLogValueVersion)
VALUE_VERSION_TV2 = 1  # transaction protocol 2 (TV_2.transactionLogValueVersion)


@dataclass(frozen=True, slots=True)
class TransactionLogRecord:
    transactional_id: str
    transit: TxnTransit | None  # None: a tombstone


def key_bytes(transactional_id: str) -> bytes:
    return _SHORT.pack(TRANSACTION_LOG_RECORD_TYPE) + TransactionLogKey(transactional_id=transactional_id).encode(
        KEY_VERSION)


def value_bytes(transit: TxnTransit) -> bytes | None:
    """The value of a state (None, a tombstone, for Dead)."""
    if transit.state is TransactionState.DEAD:
        return None
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(transit.partitions):
        by_topic.setdefault(topic, []).append(partition)
    value = with_fields(TransactionLogValue(
        producer_id=transit.producer_id, producer_epoch=transit.producer_epoch,
        transaction_timeout_ms=transit.txn_timeout_ms, transaction_status=int(transit.state),
        transaction_last_update_timestamp_ms=transit.txn_last_update_timestamp,
        transaction_start_timestamp_ms=transit.txn_start_timestamp,
        client_transaction_version=transit.client_transaction_version),
        transaction_partitions=None if transit.state is TransactionState.EMPTY else [
            TransactionLogValue.PartitionsSchema(topic=topic, partition_ids=ids) for topic, ids in by_topic.items()])
    version = VALUE_VERSION
    if transit.client_transaction_version >= TRANSACTION_VERSION_2:
        # v1's tagged fields, set only for it as Kafka's TransactionLog.valueToBytes does (v0 cannot carry them)
        version = VALUE_VERSION_TV2
        value.previous_producer_id = transit.previous_producer_id
        value.next_producer_id = transit.next_producer_id
    return _SHORT.pack(version) + value.encode(version)


def decode(key: bytes | memoryview, value: bytes | memoryview | None) -> TransactionLogRecord:
    """A record read back; DecodeError for bytes that do not parse or a key or value version Kafka does not write."""
    if len(key) < _SHORT.size:
        raise DecodeError("transaction log key shorter than its type")
    (record_type,) = _SHORT.unpack_from(key, 0)
    if record_type != TRANSACTION_LOG_RECORD_TYPE:
        raise DecodeError(f"unknown transaction log key version {record_type}")
    transactional_id = TransactionLogKey.decode(memoryview(key)[_SHORT.size:], KEY_VERSION).transactional_id
    if value is None:
        return TransactionLogRecord(transactional_id, None)
    if len(value) < _SHORT.size:
        raise DecodeError("transaction log value shorter than its version")
    (version,) = _SHORT.unpack_from(value, 0)
    if not TransactionLogValue.MIN_VERSION <= version <= TransactionLogValue.MAX_VERSION:
        raise DecodeError(f"unknown transaction log value version {version}")
    decoded = TransactionLogValue.decode(memoryview(value)[_SHORT.size:], version)
    try:
        state = TransactionState(decoded.transaction_status)
    except ValueError:
        raise DecodeError(f"unknown transaction state id {decoded.transaction_status}") from None
    partitions = frozenset() if state is TransactionState.EMPTY else frozenset(
        (entry.topic, partition) for entry in decoded.transaction_partitions or () for partition in entry.partition_ids)
    return TransactionLogRecord(transactional_id, TxnTransit(
        decoded.producer_id, decoded.previous_producer_id, decoded.producer_epoch, NO_PRODUCER_EPOCH,
        decoded.transaction_timeout_ms, state, partitions, decoded.transaction_start_timestamp_ms,
        decoded.transaction_last_update_timestamp_ms, decoded.next_producer_id, decoded.client_transaction_version))
