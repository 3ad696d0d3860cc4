"""Producer state snapshot files (the file format of Kafka's ProducerStateManager), <offset, 20 digits>.snapshot.

A snapshot holds the producer state of the log up to (not including) the offset in its name. Layout, big-endian:

    version                   int16    1
    crc                       uint32   CRC-32C of everything after this field
    producer_entries          int32 count, then count entries of:
        producer_id               int64
        epoch                     int16
        last_sequence             int32   last sequence of the producer's last batch (-1 if none)
        last_offset               int64   last offset of that batch (-1 if none)
        offset_delta              int32   last_offset - first offset of that batch
        timestamp                 int64   max timestamp of that batch
        coordinator_epoch         int32   epoch of the transaction coordinator of the last marker (-1 if none)
        current_txn_first_offset  int64   first offset of the open transaction (-1 if none)

Only the producer's latest batch survives a snapshot (as in Kafka), so after a restart a retried batch is recognised
as a duplicate only if it is that latest batch.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from wirebroker.log.checkpoints import write_file_atomically
from wirebroker.protocol import checksum

SNAPSHOT_VERSION = 1
_CRC_END = 6  # version (2) + crc (4): the CRC covers the bytes after this


@functools.cache
def _snapshot_layout() -> Any:
    """The layout above as a `construct` declaration, built at the first snapshot read or written: a fresh broker
    has none, and importing the library costs its start-up ~10 ms."""
    import construct

    entry = construct.Struct(
        "producer_id" / construct.Int64sb,
        "epoch" / construct.Int16sb,
        "last_sequence" / construct.Int32sb,
        "last_offset" / construct.Int64sb,
        "offset_delta" / construct.Int32sb,
        "timestamp" / construct.Int64sb,
        "coordinator_epoch" / construct.Int32sb,
        "current_txn_first_offset" / construct.Int64sb,
    )
    return construct.Struct(
        "version" / construct.Int16sb,
        "crc" / construct.Int32ub,
        "producer_entries" / construct.PrefixedArray(construct.Int32sb, entry),
        construct.Terminated,
    )


class SnapshotEntry(NamedTuple):
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


class CorruptSnapshotError(Exception):
    """A snapshot whose version, layout or CRC is wrong; the loader deletes it and falls back to an older one."""


def encode_snapshot(entries: list[SnapshotEntry]) -> bytes:
    body = _snapshot_layout().build({"version": SNAPSHOT_VERSION, "crc": 0,
                            "producer_entries": [entry._asdict() for entry in entries]})
    crc = checksum.crc32c(body[_CRC_END:])
    return body[:2] + crc.to_bytes(4, "big") + body[_CRC_END:]


def decode_snapshot(data: bytes) -> list[SnapshotEntry]:
    import construct  # loaded by _snapshot_layout

    try:
        parsed = _snapshot_layout().parse(data)
    except construct.ConstructError as exc:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {exc}") from None
    if parsed.version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {parsed.version}")
    computed = checksum.crc32c(data[_CRC_END:])
    if parsed.crc != computed:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {parsed.crc}. "
                                   f"Computed crc: {computed}")
    return [SnapshotEntry(**{field: entry[field] for field in SnapshotEntry._fields})
            for entry in parsed.producer_entries]


def write_snapshot(path: str, entries: list[SnapshotEntry]) -> None:
    """Write a snapshot durably: a crash leaves no partial file under `path`."""
    write_file_atomically(path, encode_snapshot(entries))


def read_snapshot(path: str) -> list[SnapshotEntry]:
    with open(path, "rb") as f:
        return decode_snapshot(f.read())
