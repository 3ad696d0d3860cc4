"""The transaction index of a segment (Kafka's TransactionIndex): the transactions aborted in it.

File format (<base offset, 20 digits>.txnindex), a sequence of 34-byte big-endian entries (Kafka's AbortedTxn):

    version            int16   0
    producer_id        int64
    first_offset       int64   first offset of the aborted transaction (may lie in an earlier segment)
    last_offset        int64   offset of the ABORT marker; entries are in increasing last_offset order
    last_stable_offset int64   the partition's last stable offset when the marker was written

An entry sits in the segment that holds its ABORT marker. A read_committed fetch collects the entries whose range
overlaps the fetched offsets so that the consumer can drop the aborted records. As in Kafka, the file is created only
when the first entry is appended; a segment without aborted transactions has no .txnindex file.
"""

from __future__ import annotations

import os
import struct
import threading
from typing import NamedTuple

from wirebroker.log.files import delete_file_if_exists, rename_file_if_exists
from wirebroker.log.index_file import CorruptIndexError

ABORTED_TXN = struct.Struct(">hqqqq")
ABORTED_TXN_VERSION = 0


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TxnIndexSearchResult(NamedTuple):
    aborted_transactions: list[AbortedTxn]
    is_complete: bool  # True when no later segment can hold an entry overlapping the range


class TransactionIndex:
    def __init__(self, path: str, start_offset: int) -> None:
        self.path = path
        self.start_offset = start_offset
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._entries: list[AbortedTxn] | None = None

    def _loaded(self) -> list[AbortedTxn]:
        entries = self._entries
        if entries is None:
            with self._lock:
                if self._entries is None:
                    self._entries = self._read_file()
                entries = self._entries
        return entries

    def _read_file(self) -> list[AbortedTxn]:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return []
        whole = len(data) - len(data) % ABORTED_TXN.size
        entries = []
        for version, *fields in ABORTED_TXN.iter_unpack(data[:whole]):
            if version > ABORTED_TXN_VERSION:
                raise CorruptIndexError(f"Unexpected aborted transaction version {version} in transaction index "
                                        f"{self.path}, current version is {ABORTED_TXN_VERSION}")
            entries.append(AbortedTxn(*fields))
        return entries

    def _file(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        return self._fd

    def append(self, txn: AbortedTxn) -> None:
        entries = self._loaded()
        if entries and entries[-1].last_offset >= txn.last_offset:
            raise ValueError(f"The last offset of appended transactions must increase sequentially, but "
                             f"{txn.last_offset} is not greater than current last offset {entries[-1].last_offset} "
                             f"of index {self.path}")
        fd = self._file()
        os.pwrite(fd, ABORTED_TXN.pack(ABORTED_TXN_VERSION, *txn), len(entries) * ABORTED_TXN.size)
        entries.append(txn)

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return list(self._loaded())

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """Aborted transactions overlapping [fetch_offset, upper_bound_offset)."""
        found = []
        for txn in self._loaded():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def truncate_to(self, offset: int) -> None:
        """Remove the entries whose marker is at or after `offset`."""
        entries = self._loaded()
        keep = next((i for i, txn in enumerate(entries) if txn.last_offset >= offset), len(entries))
        self._truncate_to_entries(keep)

    def reset(self) -> None:
        self._truncate_to_entries(0)

    def _truncate_to_entries(self, count: int) -> None:
        entries = self._loaded()
        if os.path.exists(self.path):
            os.truncate(self.path, count * ABORTED_TXN.size)
        self._entries = entries[:count]

    def sanity_check(self) -> None:
        for txn in self._read_file():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(f"Last offset of aborted transaction {txn} in index {self.path} is less "
                                        f"than start offset {self.start_offset}")

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def rename_to(self, path: str) -> None:
        rename_file_if_exists(self.path, path)
        self.path = path

    def delete_if_exists(self) -> bool:
        self.close()
        return delete_file_if_exists(self.path)
