"""Fields declared with taggedVersions only (no `versions`) exist in their tagged versions, as in Kafka's FieldSpec.

The expected bytes are laid out here by the schema rules, as Kafka's own serializer writes them: the untagged fields
in order, then the tagged-field section (a count, then tag, size and value in ascending tag order), a tagged field
written only when it differs from its default, an absent one read as its default.
"""

import struct

import pytest

from wirebroker.protocol.codegen.schema import Versions, field_versions
from wirebroker.protocol.messages.streams_group_metadata_value import (
    StreamsGroupMetadataValue,
)
from wirebroker.protocol.messages.transaction_log_value import TransactionLogValue


def _untagged_v1(producer_id: int = 7, epoch: int = 3) -> bytes:
    """TransactionLogValue v1's untagged fields: ids, timeout, status, one topic with partitions 0 and 2, times."""
    partitions = bytes([2, 4]) + b"txn" + bytes([3]) + struct.pack(">ii", 0, 2) + b"\x00"  # compact, then no tags
    return struct.pack(">qhib", producer_id, epoch, 60_000, 4) + partitions + struct.pack(">qq", 1_000, 900)


def _value(**tagged: int) -> TransactionLogValue:
    return TransactionLogValue(
        producer_id=7, producer_epoch=3, transaction_timeout_ms=60_000, transaction_status=4,
        transaction_partitions=[TransactionLogValue.PartitionsSchema(topic="txn", partition_ids=[0, 2])],
        transaction_last_update_timestamp_ms=1_000, transaction_start_timestamp_ms=900, **tagged)


def test_a_field_with_tagged_versions_only_exists_in_them():
    assert field_versions({"name": "X", "taggedVersions": "1+"}) == Versions.parse("1+")
    assert field_versions({"name": "X", "versions": "0+", "taggedVersions": "1+"}) == Versions.parse("0+")
    with pytest.raises(ValueError):
        field_versions({"name": "X"})


def test_every_tagged_field_is_written_in_tag_order_with_its_size():
    value = _value(previous_producer_id=5, next_producer_id=9, client_transaction_version=2, next_producer_epoch=0)
    tags = (bytes([4]) + bytes([0, 8]) + struct.pack(">q", 5) + bytes([1, 8]) + struct.pack(">q", 9)
            + bytes([2, 2]) + struct.pack(">h", 2) + bytes([3, 2]) + struct.pack(">h", 0))
    expected = _untagged_v1() + tags
    assert value.encode(1) == expected
    assert TransactionLogValue.decode(expected, 1) == value


def test_a_tagged_field_at_its_default_is_left_out_and_read_back_as_the_default():
    value = _value(previous_producer_id=5, client_transaction_version=2)  # next id and next epoch at -1
    expected = _untagged_v1() + bytes([2, 0, 8]) + struct.pack(">q", 5) + bytes([2, 2]) + struct.pack(">h", 2)
    assert value.encode(1) == expected
    decoded = TransactionLogValue.decode(expected, 1)
    assert (decoded.previous_producer_id, decoded.next_producer_id, decoded.client_transaction_version,
            decoded.next_producer_epoch) == (5, -1, 2, -1)
    assert decoded.unknown_tagged_fields is None
    assert _value().encode(1) == _untagged_v1() + b"\x00"  # every tagged field at its default: an empty section


def test_a_version_without_the_tagged_fields_reads_their_defaults_and_writes_none_of_them():
    v0 = struct.pack(">qhib", 7, 3, 60_000, 4) + struct.pack(">i", 1) + struct.pack(">h", 3) + b"txn" + \
        struct.pack(">iii", 2, 0, 2) + struct.pack(">qq", 1_000, 900)
    decoded = TransactionLogValue.decode(v0, 0)
    assert (decoded.previous_producer_id, decoded.next_producer_id, decoded.client_transaction_version,
            decoded.next_producer_epoch) == (-1, -1, 0, -1)
    # Kafka's TransactionLog sets ClientTransactionVersion at v0 too: v0 cannot carry it, and it is not refused
    assert _value(client_transaction_version=1).encode(0) == v0


def test_unknown_tags_keep_their_place_among_the_known_ones():
    wire = _untagged_v1() + bytes([2, 0, 8]) + struct.pack(">q", 5) + bytes([5, 1]) + b"z"  # tag 5: unknown
    decoded = TransactionLogValue.decode(wire, 1)
    assert decoded.previous_producer_id == 5 and decoded.unknown_tagged_fields == [(5, b"z")]
    assert decoded.encode(1) == wire


def test_a_tagged_only_nullable_array_of_structs():
    untagged = struct.pack(">iq", 4, 99)
    assert StreamsGroupMetadataValue.decode(untagged + b"\x00", 0).last_assignment_configs is None
    value = StreamsGroupMetadataValue(epoch=4, metadata_hash=99, last_assignment_configs=[
        StreamsGroupMetadataValue.LastAssignmentConfig(key="k", value="vv")])
    config = bytes([2]) + bytes([2]) + b"k" + bytes([3]) + b"vv" + b"\x00"  # one element: key, value, no tags
    expected = untagged + bytes([1, 1, len(config)]) + config
    assert value.encode(0) == expected
    assert StreamsGroupMetadataValue.decode(expected, 0) == value
    empty = StreamsGroupMetadataValue(epoch=4, metadata_hash=99, last_assignment_configs=[])
    assert empty.encode(0) == untagged + bytes([1, 1, 1, 1])  # an empty array differs from the default null
