"""What the log cleaner tracks of transactions while it walks a log (Kafka's CleanedTransactionMetadata).

The aborted transactions of the range being cleaned come from the segments' transaction indexes. Walking the
batches in offset order:
  * a transactional data batch of a producer whose aborted transaction has begun (first offset reached) and whose
    ABORT marker is not yet read is aborted: the cleaner drops it (and never maps its keys);
  * a COMMIT marker may go (after its delete horizon) once no batch of its transaction remains to be read: the
    cleaner never saw one since the transaction began here;
  * an ABORT marker may go likewise when none of the aborted data batches were read in this cleaning; if any were
    (they are being removed now), the marker stays this time and its transaction goes into the cleaned segment's
    transaction index, so that read_committed consumers still skip whatever of it a producer's last batch retains.
"""

from __future__ import annotations

import heapq

from wirebroker.log.batch_records import end_txn_marker
from wirebroker.log.txn_index import AbortedTxn, TransactionIndex
from wirebroker.protocol.records import BatchHeader


class _AbortedTransaction:
    __slots__ = ("aborted_txn", "last_observed_batch_offset")

    def __init__(self, aborted_txn: AbortedTxn) -> None:
        self.aborted_txn = aborted_txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    def __init__(self) -> None:
        self._aborted: list[tuple[int, int, AbortedTxn]] = []  # heap by first offset
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedTransaction] = {}
        self.cleaned_index: TransactionIndex | None = None  # the segment being written, for retained ABORT markers

    def add_aborted_transactions(self, aborted: list[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._aborted, (txn.first_offset, txn.last_offset, txn))

    def on_control_batch_read(self, header: BatchHeader, batch: bytes | memoryview) -> bool:
        """Whether the marker may be discarded (once its delete horizon has passed)."""
        self._consume_aborted_up_to(header.last_offset)
        marker = end_txn_marker(batch, header)
        if marker is None:
            return True  # an empty control batch: nothing to keep it for
        producer_id = header.producer_id
        if not marker.is_commit:
            ongoing = self._ongoing_aborted.pop(producer_id, None)
            if ongoing is not None and ongoing.last_observed_batch_offset is not None:
                if self.cleaned_index is not None:
                    self.cleaned_index.append(ongoing.aborted_txn)
                return False
            return True
        if producer_id in self._ongoing_committed:
            self._ongoing_committed.discard(producer_id)
            return False
        return True

    def on_batch_read(self, header: BatchHeader) -> bool:
        """Whether the data batch belongs to an aborted transaction (the cleaner drops it)."""
        self._consume_aborted_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        ongoing = self._ongoing_aborted.get(header.producer_id)
        if ongoing is not None:
            ongoing.last_observed_batch_offset = header.last_offset
            return True
        self._ongoing_committed.add(header.producer_id)
        return False

    def _consume_aborted_up_to(self, offset: int) -> None:
        while self._aborted and self._aborted[0][0] <= offset:
            _, _, txn = heapq.heappop(self._aborted)
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTransaction(txn))
