"""A partition's proof that a transactional append was verified at the transaction coordinator (Kafka's
VerificationGuard and VerificationStateEntry, KIP-890 part 1).

When a leader asks the coordinator whether a partition is in a producer's transaction, the partition's producer state
keeps a verification entry for that producer holding a fresh guard; the verified append carries the guard back down to
the log. Writing the transaction's first batch or a marker clears the entry (and an unused one expires), so a
verification answered before the transaction ended no longer matches when its append arrives: the append is refused
rather than opening a transaction the coordinator does not know of (a hanging transaction). Each guard is a distinct
object compared by identity, so a stale verification cannot match a newer one of the same producer (the ABA case).
"""

from __future__ import annotations


class VerificationGuard:
    """One verification of one producer on one partition; only the very same object verifies."""

    __slots__ = ()

    def verify(self, request_guard: VerificationGuard) -> bool:
        """Whether the append carrying `request_guard` is the one this partition's entry holds (never SENTINEL)."""
        return request_guard is self and request_guard is not SENTINEL

    def __repr__(self) -> str:
        return "VerificationGuard(SENTINEL)" if self is SENTINEL else f"VerificationGuard({id(self):#x})"


# The guard of an append that needed no verification (its transaction was open here) and of a producer with no entry.
SENTINEL = VerificationGuard()


class VerificationStateEntry:
    """A producer's pending verification on a partition: its guard, when it started (for expiry), the epoch it was
    for, and whether the producer bumps its epoch at every transaction end (transaction protocol 2)."""

    __slots__ = ("epoch", "guard", "supports_epoch_bump", "timestamp")

    def __init__(self, timestamp: int, epoch: int, supports_epoch_bump: bool) -> None:
        self.timestamp = timestamp
        self.epoch = epoch
        self.supports_epoch_bump = supports_epoch_bump
        self.guard = VerificationGuard()

    def maybe_update_epoch(self, epoch: int) -> None:
        """A later verification at a newer epoch of the same producer keeps the guard, with the newer epoch."""
        self.epoch = max(self.epoch, epoch)
