"""File and directory names of Kafka's on-disk layout (Kafka's LogFileUtils and the partition-dir naming of UnifiedLog).

    <log.dir>/<topic>-<partition>/                 one directory per partition replica
        00000000000000000000.log                   record batches; the name is the segment's base offset, 20 digits
        00000000000000000000.index                 offset index          (offset_index.py)
        00000000000000000000.timeindex             time index            (time_index.py)
        00000000000000000000.txnindex              aborted transactions  (txn_index.py), created on first entry
        00000000000000000042.snapshot              producer state at offset 42 (producer_snapshot.py)
        leader-epoch-checkpoint                    (checkpoints.py)
        partition.metadata                         topic id (metadata_files.py)
    <log.dir>/<topic>-<partition>.<uuid hex>-delete/   a deleted partition waiting for asynchronous removal

Suffixes appended to a file name while it is in transit: ".deleted" (waiting for deferred removal), ".cleaned" and
".swap" (written by a log cleaner or segment split; removed or completed by the loader after a crash).
"""

from __future__ import annotations

import os
import re
import uuid
from typing import NamedTuple

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"

OFFSET_DIGITS = 20
_DELETE_DIR_PATTERN = re.compile(r"^(.+)-(\d+)\.([0-9a-f]{32})-delete$")
_PARTITION_DIR_PATTERN = re.compile(r"^(.+)-(\d+)$")


def filename_prefix_from_offset(offset: int) -> str:
    return f"{offset:0{OFFSET_DIGITS}d}"


def log_file(directory: str, offset: int, suffix: str = "") -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + LOG_FILE_SUFFIX + suffix)


def offset_index_file(directory: str, offset: int, suffix: str = "") -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + INDEX_FILE_SUFFIX + suffix)


def time_index_file(directory: str, offset: int, suffix: str = "") -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + TIME_INDEX_FILE_SUFFIX + suffix)


def txn_index_file(directory: str, offset: int, suffix: str = "") -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + TXN_INDEX_FILE_SUFFIX + suffix)


def producer_snapshot_file(directory: str, offset: int) -> str:
    return os.path.join(directory, filename_prefix_from_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX)


def offset_from_file_name(name: str) -> int:
    """The base offset a segment, index or snapshot file name starts with; ValueError if it has none."""
    prefix = os.path.basename(name).split(".", 1)[0]
    if len(prefix) != OFFSET_DIGITS or not prefix.isdigit():
        raise ValueError(f"{name} is not named after an offset")
    return int(prefix)


def is_log_file(name: str) -> bool:
    return name.endswith(LOG_FILE_SUFFIX) and _has_offset_prefix(name)


def is_index_file(name: str) -> bool:
    return name.endswith((INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX)) and _has_offset_prefix(name)


def is_snapshot_file(name: str) -> bool:
    return name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX) and _has_offset_prefix(name)


def _has_offset_prefix(name: str) -> bool:
    try:
        offset_from_file_name(name)
    except ValueError:
        return False
    return True


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def partition_dir_name(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def delete_dir_name(tp: TopicPartition) -> str:
    """The name a partition dir takes while it waits for asynchronous deletion (Kafka's logDeleteDirName)."""
    return f"{tp.topic}-{tp.partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """The topic-partition of a live partition dir name, or None for any other name (delete/future/stray dirs too)."""
    if name.endswith((DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)):
        return None
    match = _PARTITION_DIR_PATTERN.match(name)
    if not match:
        return None
    return TopicPartition(match.group(1), int(match.group(2)))


def parse_delete_dir_name(name: str) -> TopicPartition | None:
    match = _DELETE_DIR_PATTERN.match(name)
    if not match:
        return None
    return TopicPartition(match.group(1), int(match.group(2)))


def delete_file_if_exists(path: str) -> bool:
    """Remove a file; False if it was already gone."""
    try:
        os.remove(path)
    except FileNotFoundError:
        return False
    return True


def rename_file_if_exists(path: str, new_path: str) -> None:
    """Rename a file that may not have been created yet (a lazily created index)."""
    if os.path.exists(path):
        os.replace(path, new_path)


def read_text_or_none(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None
