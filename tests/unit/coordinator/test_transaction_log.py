"""`__transaction_state` values under transaction protocol 2 (TransactionLogValue v1): its tagged fields through the
generated codec, the bytes Kafka's serializer writes, and records written by the earlier hand-packing read alike."""

from __future__ import annotations

import struct

from wirebroker.coordinator import transaction_log
from wirebroker.coordinator.transaction_state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionState,
    TxnTransit,
)

KEY = transaction_log.key_bytes("tx")


def _transit(previous: int, next_id: int, version: int = 2) -> TxnTransit:
    return TxnTransit(producer_id=8, previous_producer_id=previous, producer_epoch=0,
                      last_producer_epoch=NO_PRODUCER_EPOCH, txn_timeout_ms=60_000,
                      state=TransactionState.COMPLETE_COMMIT, partitions=frozenset({("t", 1)}),
                      txn_start_timestamp=100, txn_last_update_timestamp=200, next_producer_id=next_id,
                      client_transaction_version=version)


def _v1_head() -> bytes:
    """Value version 1, then the untagged fields of the transit above (one topic "t" with partition 1)."""
    partitions = bytes([2, 2]) + b"t" + bytes([2]) + struct.pack(">i", 1) + b"\x00"
    return struct.pack(">hqhib", 1, 8, 0, 60_000, int(TransactionState.COMPLETE_COMMIT)) + partitions + \
        struct.pack(">qq", 200, 100)


def _old_hand_packed(previous: int, next_id: int) -> bytes:
    """What this module wrote before the codec carried the tagged fields: all three, defaults included."""
    return _v1_head() + bytes([3, 0, 8]) + struct.pack(">q", previous) + bytes([1, 8]) + struct.pack(">q", next_id) + \
        bytes([2, 2]) + struct.pack(">h", 2)


def test_a_rotation_writes_every_tagged_field_as_before():
    transit = _transit(previous=7, next_id=9)
    assert transaction_log.value_bytes(transit) == _old_hand_packed(7, 9)  # nothing at its default: same bytes
    assert transaction_log.decode(KEY, transaction_log.value_bytes(transit)).transit == transit


def test_tagged_fields_at_their_default_are_left_out_as_kafka_leaves_them():
    transit = _transit(previous=7, next_id=NO_PRODUCER_ID)
    kafka = _v1_head() + bytes([2, 0, 8]) + struct.pack(">q", 7) + bytes([2, 2]) + struct.pack(">h", 2)
    assert transaction_log.value_bytes(transit) == kafka
    assert transaction_log.decode(KEY, kafka).transit == transit


def test_records_written_the_old_way_read_back_the_same():
    for previous, next_id in ((7, NO_PRODUCER_ID), (NO_PRODUCER_ID, NO_PRODUCER_ID), (7, 9)):
        transit = _transit(previous, next_id)
        assert transaction_log.decode(KEY, _old_hand_packed(previous, next_id)).transit == transit


def test_transaction_protocol_1_writes_v0_without_tagged_fields():
    transit = _transit(previous=NO_PRODUCER_ID, next_id=NO_PRODUCER_ID, version=0)
    value = transaction_log.value_bytes(transit)
    assert value[:2] == b"\x00\x00"
    assert transaction_log.decode(KEY, value).transit == transit
