import os
import struct
import uuid
from pathlib import Path

import crc32c
import pytest

from wirebroker.log.checkpoints import (
    CorruptCheckpointError,
    EpochEntry,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    write_leader_epoch_checkpoint,
    write_offset_checkpoint,
)
from wirebroker.log.files import TopicPartition
from wirebroker.log.metadata_files import (
    MetadataFileError,
    MetaProperties,
    delete_clean_shutdown_file,
    has_clean_shutdown_file,
    read_meta_properties,
    read_partition_metadata,
    uuid_from_kafka_string,
    uuid_to_kafka_string,
    write_clean_shutdown_file,
    write_meta_properties,
    write_partition_metadata,
)
from wirebroker.log.producer_snapshot import (
    CorruptSnapshotError,
    SnapshotEntry,
    decode_snapshot,
    encode_snapshot,
    read_snapshot,
    write_snapshot,
)


def test_offset_checkpoint_round_trip_and_exact_text(tmp_path):
    path = str(tmp_path / "recovery-point-offset-checkpoint")
    offsets = {TopicPartition("orders", 1): 987, TopicPartition("orders", 0): 1234, TopicPartition("a-b.c", 12): 0}
    write_offset_checkpoint(path, offsets)
    assert Path(path).read_text() == "0\n3\na-b.c 12 0\norders 0 1234\norders 1 987\n"
    assert read_offset_checkpoint(path) == offsets
    assert not os.path.exists(path + ".tmp")


def test_missing_checkpoint_reads_empty(tmp_path):
    assert read_offset_checkpoint(str(tmp_path / "nope")) == {}


@pytest.mark.parametrize("text", ["1\n0\n", "0\n2\nt 0 5\n", "0\n1\nt 0\n", "0\n1\nt x 5\n", "", "0\nmany\n"])
def test_malformed_checkpoints_raise(tmp_path, text):
    path = tmp_path / "cp"
    path.write_text(text)
    with pytest.raises(CorruptCheckpointError):
        read_offset_checkpoint(str(path))


def test_leader_epoch_checkpoint_round_trip(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    entries = [EpochEntry(0, 0), EpochEntry(3, 120), EpochEntry(7, 5000)]
    write_leader_epoch_checkpoint(path, entries)
    assert Path(path).read_text() == "0\n3\n0 0\n3 120\n7 5000\n"
    assert read_leader_epoch_checkpoint(path) == entries


def test_uuid_uses_kafkas_base64_form():
    assert uuid_to_kafka_string(uuid.UUID(int=1)) == "AAAAAAAAAAAAAAAAAAAAAQ"
    value = uuid.uuid4()
    assert len(uuid_to_kafka_string(value)) == 22
    assert uuid_from_kafka_string(uuid_to_kafka_string(value)) == value
    with pytest.raises(MetadataFileError):
        uuid_from_kafka_string("AAAA")


def test_partition_metadata_round_trip(tmp_path):
    topic_id = uuid.UUID(int=1)
    write_partition_metadata(str(tmp_path), topic_id)
    assert (tmp_path / "partition.metadata").read_text() == "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert read_partition_metadata(str(tmp_path)) == topic_id
    assert read_partition_metadata(str(tmp_path / "missing")) is None
    (tmp_path / "partition.metadata").write_text("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    with pytest.raises(MetadataFileError):
        read_partition_metadata(str(tmp_path))


def test_meta_properties_round_trip(tmp_path):
    meta = MetaProperties("MkU3OEVBNTcwNTJENDM2Qk", 3, uuid.uuid4())
    write_meta_properties(str(tmp_path), meta)
    lines = (tmp_path / "meta.properties").read_text().splitlines()
    assert "version=1" in lines and "node.id=3" in lines and "cluster.id=MkU3OEVBNTcwNTJENDM2Qk" in lines
    assert read_meta_properties(str(tmp_path)) == meta
    assert read_meta_properties(str(tmp_path / "other")) is None


def test_clean_shutdown_file(tmp_path):
    assert not has_clean_shutdown_file(str(tmp_path))
    write_clean_shutdown_file(str(tmp_path), 5)
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":5}'
    assert has_clean_shutdown_file(str(tmp_path))
    delete_clean_shutdown_file(str(tmp_path))
    delete_clean_shutdown_file(str(tmp_path))
    assert not has_clean_shutdown_file(str(tmp_path))


ENTRY = SnapshotEntry(producer_id=1000, epoch=3, last_sequence=41, last_offset=777, offset_delta=9,
                      timestamp=1_700_000_000_123, coordinator_epoch=-1, current_txn_first_offset=-1)


def test_snapshot_bytes_follow_kafkas_layout():
    data = encode_snapshot([ENTRY])
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", *ENTRY)
    assert data == struct.pack(">hI", 1, crc32c.crc32c(body)) + body
    assert decode_snapshot(data) == [ENTRY]


def test_snapshot_file_round_trip(tmp_path):
    path = str(tmp_path / "00000000000000000778.snapshot")
    entries = [ENTRY, ENTRY._replace(producer_id=5, current_txn_first_offset=700, coordinator_epoch=2)]
    write_snapshot(path, entries)
    assert read_snapshot(path) == entries


@pytest.mark.parametrize("damage", ["flip", "truncate", "version", "extra"])
def test_damaged_snapshots_are_detected(damage):
    data = bytearray(encode_snapshot([ENTRY]))
    if damage == "flip":
        data[20] ^= 0x01
    elif damage == "truncate":
        del data[-3:]
    elif damage == "version":
        data[1] = 2
    else:
        data += b"\0"
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(bytes(data))
