"""FileRecords.search_for_offset_with_size: the header walk every fetch runs finds and refuses what `batches` does."""

import os
import struct

import pytest

from wirebroker.log.file_records import SEARCH_READ_BYTES, FileRecords
from wirebroker.protocol.errors import CorruptMessageError, UnsupportedForMessageFormatError
from wirebroker.protocol.records import build_batch

_BASE_OFFSET = struct.Struct(">q")


def write_batches(records: FileRecords, count: int, per_batch: int, value_size: int = 60) -> None:
    """`count` batches of `per_batch` records each, with consecutive offsets from 0."""
    for i in range(count):
        data = bytearray(build_batch([(1_700_000_000_000, None, b"v" * value_size, ())] * per_batch))
        _BASE_OFFSET.pack_into(data, 0, i * per_batch)
        records.append(data)


@pytest.fixture
def records(tmp_path):
    file_records = FileRecords(str(tmp_path / "00000000000000000000.log"))
    yield file_records
    file_records.close()


def test_finds_every_offset_as_the_batch_walk_does_past_one_read(records):
    write_batches(records, 200, per_batch=3)
    assert records.size > 2 * SEARCH_READ_BYTES  # the walk needs several reads
    batches = list(records.batches())
    for target in range(600):
        expected = next(b for b in batches if b.header.last_offset >= target)
        found = records.search_for_offset_with_size(target, 0)
        assert found == (expected.header.last_offset, expected.position, expected.header.size)
    assert records.search_for_offset_with_size(600, 0) is None


def test_starts_at_the_given_position(records):
    write_batches(records, 10, per_batch=1)
    batches = list(records.batches())
    found = records.search_for_offset_with_size(0, batches[4].position)  # an index floor past the target
    assert found.position == batches[4].position


def test_a_torn_last_batch_ends_the_walk(records):
    write_batches(records, 5, per_batch=2)
    last = list(records.batches())[-1]
    records.truncate_to(last.position + last.header.size - 10)
    assert records.search_for_offset_with_size(7, 0).offset == 7
    assert records.search_for_offset_with_size(8, 0) is None


@pytest.mark.parametrize(("magic", "error"), [(1, UnsupportedForMessageFormatError), (3, CorruptMessageError)])
def test_a_header_of_another_magic_raises_as_the_batch_walk_does(records, magic, error):
    write_batches(records, 3, per_batch=1)
    second = list(records.batches())[1].position
    os.pwrite(records.fileno, bytes([magic]), second + 16)
    assert records.search_for_offset_with_size(0, 0).offset == 0
    with pytest.raises(error):
        records.search_for_offset_with_size(1, 0)
    with pytest.raises(error):
        list(records.batches())


def test_a_batch_length_shorter_than_a_header_raises(records):
    write_batches(records, 2, per_batch=1)
    os.pwrite(records.fileno, struct.pack(">i", 20), 8)
    with pytest.raises(CorruptMessageError):
        records.search_for_offset_with_size(0, 0)
