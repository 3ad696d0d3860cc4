"""Kafka's versioned text checkpoint files (CheckpointFile, OffsetCheckpointFile, LeaderEpochCheckpointFile).

Format (UTF-8, "\\n" line ends), the same for every checkpoint kind:

    0                   version, always 0
    2                   number of entry lines that follow
    orders 0 1234       one entry per line, fields separated by single spaces
    orders 1 987

Entry kinds:
    <log.dir>/recovery-point-offset-checkpoint     "topic partition offset": offset up to which the log is flushed
    <log.dir>/log-start-offset-checkpoint          "topic partition offset": first offset still readable
    <log.dir>/replication-offset-checkpoint        "topic partition offset": the high watermark
    <partition dir>/leader-epoch-checkpoint        "epoch start_offset": first offset written in each leader epoch

Writes are atomic: the lines go to "<file>.tmp", which is fsynced and renamed over the file; a reader therefore sees
either the old or the new file, never a torn one. A file that does not parse raises CorruptCheckpointError.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple, TypeVar

from wirebroker.log.files import TopicPartition, read_text_or_none

CHECKPOINT_VERSION = 0
RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"

T = TypeVar("T")


class CorruptCheckpointError(ValueError):
    """A checkpoint file that exists but does not follow the format."""


def write_file_atomically(path: str, content: str | bytes) -> None:
    """Replace `path` with `content` (text is written as UTF-8) so that a crash leaves the old or the new file."""
    tmp_path = path + ".tmp"
    with open(tmp_path, "wb") as tmp:
        tmp.write(content.encode("utf-8") if isinstance(content, str) else content)
        tmp.flush()
        os.fsync(tmp.fileno())
    os.replace(tmp_path, path)
    fsync_dir(os.path.dirname(path) or ".")


def fsync_dir(directory: str) -> None:
    """Make a rename or file creation in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_checkpoint(path: str, lines: Iterable[str]) -> None:
    entries = list(lines)
    write_file_atomically(path, "".join(f"{line}\n" for line in [str(CHECKPOINT_VERSION), str(len(entries)), *entries]))


def read_checkpoint(path: str, fields_per_line: int, parse: Callable[[list[str]], T]) -> list[T]:
    """The entries of a checkpoint, each line's fields turned into a value by `parse`; [] if there is no file."""
    text = read_text_or_none(path)
    if text is None:
        return []
    lines = text.splitlines()
    if len(lines) < 2 or lines[0].strip() != str(CHECKPOINT_VERSION):
        raise CorruptCheckpointError(f"Unrecognized version or missing count in checkpoint file {path}")
    try:
        expected = int(lines[1].strip())
        entries = [line.split() for line in lines[2:] if line.strip()]
        if len(entries) != expected or any(len(fields) != fields_per_line for fields in entries):
            raise ValueError(f"expected {expected} entries of {fields_per_line} fields, found {entries!r}")
        return [parse(fields) for fields in entries]
    except ValueError as exc:
        raise CorruptCheckpointError(f"Malformed checkpoint file {path}: {exc}") from None


def write_offset_checkpoint(path: str, offsets: Mapping[TopicPartition, int]) -> None:
    write_checkpoint(path, (f"{tp.topic} {tp.partition} {offset}" for tp, offset in sorted(offsets.items())))


def read_offset_checkpoint(path: str) -> dict[TopicPartition, int]:
    entries = read_checkpoint(path, 3, lambda f: (TopicPartition(f[0], int(f[1])), int(f[2])))
    return dict(entries)


class EpochEntry(NamedTuple):
    """Leader epoch `epoch` began at `start_offset`."""

    epoch: int
    start_offset: int


def write_leader_epoch_checkpoint(path: str, entries: Iterable[EpochEntry]) -> None:
    write_checkpoint(path, (f"{entry.epoch} {entry.start_offset}" for entry in entries))


def read_leader_epoch_checkpoint(path: str) -> list[EpochEntry]:
    return read_checkpoint(path, 2, lambda f: EpochEntry(int(f[0]), int(f[1])))
