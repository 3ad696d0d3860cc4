"""Helpers for the log tests: small configs, batches, and reading back what a log holds."""

from __future__ import annotations

import os

from wirebroker.log.config import LogConfig
from wirebroker.log.log import Log
from wirebroker.protocol.records import build_batch, iter_records, read_header

NOW = 1_700_000_000_000  # a fixed "now" (ms) so that retention and timestamp checks do not depend on the clock


def small_config(**overrides: str) -> LogConfig:
    """Tiny segments and a dense index so that rolls and index entries happen within a few appends."""
    props = {"internal.segment.bytes": "4096", "index.interval.bytes": "200", "segment.index.bytes": "4096"}
    props.update({key.replace("_", "."): value for key, value in overrides.items()})
    return LogConfig.from_props(props)


def batch(timestamp: int = NOW, n: int = 1, value_size: int = 50, **kwargs: object) -> bytearray:
    """A produce batch of `n` records with timestamps timestamp, timestamp + 1, ..."""
    records = [(timestamp + i, b"key-%d" % i, b"v" * value_size, ()) for i in range(n)]
    return bytearray(build_batch(records, **kwargs))


def append_batches(log_: Log, count: int, timestamp: int = NOW, n: int = 1, **kwargs: object) -> list[int]:
    """Append `count` batches; the base offset of each."""
    offsets = []
    for i in range(count):
        info = log_.append_as_leader(batch(timestamp + i * n, n, **kwargs), leader_epoch=0, now_ms=NOW)
        offsets.append(info.first_offset)
    log_.update_high_watermark(log_.log_end_offset)
    return offsets


def read_all_offsets(log_: Log) -> list[int]:
    """Every record offset readable from the log start to the log end, decoded from the bytes a fetch would send."""
    offsets = []
    position = log_.log_start_offset
    while position < log_.log_end_offset:
        info = log_.read(position, 1 << 20)
        region = info.records
        data = os.pread(region.fileno, region.size, region.position)
        pos = 0
        while pos < len(data):
            header = read_header(data, pos)
            offsets.extend(r.offset for r in iter_records(data, pos, header, 1 << 24) if r.offset >= position)
            pos += header.size
        position = header.next_offset
    return offsets


def region_bytes(info) -> bytes:
    """The bytes a read's file region covers."""
    region = info.records
    return os.pread(region.fileno, region.size, region.position) if region else b""
