"""The log cleaner's key -> latest offset map (Kafka's OffsetMap / SkimpyOffsetMap).

Kafka's SkimpyOffsetMap is an open-addressing table in a fixed buffer of log.cleaner.dedupe.buffer.size / threads
bytes: each slot holds an MD5 hash of a key (16 bytes) and an offset (8 bytes), so the buffer bounds how many keys
one cleaning can take in (`slots`), and the cleaner stops filling the map at slots * log.cleaner.io.buffer.load.factor
entries and cleans only up to where it got. Keys are never stored, only their hashes: two keys whose MD5 collide
count as one (as in Kafka, accepted as vanishingly rare).

Here a dict from digest to offset stands for the table; the slot count is computed as Kafka does, so the same
configuration cleans the same ranges.
"""

from __future__ import annotations

HASH_SIZE = 16  # MD5, Kafka's default hash algorithm for the map
BYTES_PER_ENTRY = HASH_SIZE + 8  # the hash and a long offset


class SkimpyOffsetMap:
    def __init__(self, memory: int) -> None:
        self.slots = memory // BYTES_PER_ENTRY
        if self.slots < 1:
            raise ValueError(f"An offset map of {memory} bytes holds no entry (each takes {BYTES_PER_ENTRY} bytes)")
        # imported with the first map (a cleaning, in the cleaner process): hashlib loads OpenSSL, ~3 ms that a
        # broker's start-up need not pay
        import hashlib

        self._md5 = hashlib.md5
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1
        self.start_offset = 0  # the first offset whose keys were mapped (the first dirty offset)
        self._latest_offsets: set[int] | None = None

    def __len__(self) -> int:
        return len(self._offsets)

    def put(self, key: bytes, offset: int) -> None:
        """Record that `key` was last seen at `offset` (offsets arrive in increasing order)."""
        self._offsets[self._md5(key).digest()] = offset
        self.latest_offset = offset
        self._latest_offsets = None

    def get(self, key: bytes) -> int:
        """The latest offset of `key`, or -1 if the map has not seen it."""
        return self._offsets.get(self._md5(key).digest(), -1)

    def update_latest_offset(self, offset: int) -> None:
        """Move the end of the mapped range past records without keys (control batches, gaps)."""
        self.latest_offset = max(self.latest_offset, offset)

    def latest_offsets(self) -> set[int]:
        """Every offset that is the latest of its key: a mapped record at any other offset has a later one."""
        if self._latest_offsets is None:
            self._latest_offsets = set(self._offsets.values())
        return self._latest_offsets

    def clear(self, start_offset: int = 0) -> None:
        self._offsets.clear()
        self.latest_offset = -1
        self.start_offset = start_offset
        self._latest_offsets = None

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.slots
