"""A transactional id's state (Kafka's TransactionState, TransactionMetadata and TxnTransitMetadata).

States and the ones each may follow (Kafka's validPreviousStates, transaction protocol 1):

| state (id)             | from                                          | how                                   |
|------------------------|-----------------------------------------------|---------------------------------------|
| Empty (0)              | Empty, CompleteCommit, CompleteAbort          | InitProducerId: epoch bump or new id  |
| Ongoing (1)            | Empty, Ongoing, CompleteCommit, CompleteAbort | AddPartitionsToTxn, AddOffsetsToTxn   |
| PrepareCommit (2)      | Ongoing                                       | EndTxn(commit)                        |
| PrepareAbort (3)       | Ongoing, PrepareEpochFence, Empty, Complete*  | EndTxn(abort), a fence, a time-out    |
| CompleteCommit (4)     | PrepareCommit                                 | every marker written                  |
| CompleteAbort (5)      | PrepareAbort                                  | every marker written                  |
| Dead (6)               | Empty, CompleteCommit, CompleteAbort          | transactional.id.expiration.ms        |
| PrepareEpochFence (7)  | Ongoing                                       | never written: see below              |

A change is made as Kafka makes it, in two steps: `prepare_*` returns the new state (a TxnTransit) and marks the
metadata with the pending state; the transit is written to `__transaction_state`; then `complete_transition`
applies it (or `abort_transition` drops it when the write failed). While a state is pending, other requests for the
same transactional id are CONCURRENT_TRANSACTIONS, and nothing in memory has changed that the log does not have.
Fencing an open transaction (a new producer with the same transactional id, a time-out) bumps the epoch and aborts
in one write, `prepare_fenced_abort`, so the abort markers carry the bumped epoch and fence the old producer on every
partition; Kafka reaches the same by way of its in-memory PrepareEpochFence, which therefore never shows here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
MAX_PRODUCER_EPOCH = 2**15 - 1  # Short.MAX_VALUE
TRANSACTION_VERSION_2 = 2  # KIP-890 part 2: EndTxn v5+ (Kafka's TransactionVersion.TV_2)

TopicPartition = tuple[str, int]


class TransactionState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def state_name(self) -> str:
        """The name DescribeTransactions and ListTransactions use ("Ongoing", "PrepareCommit", ...)."""
        return _STATE_NAMES[self]

    @property
    def expiration_allowed(self) -> bool:
        """A transactional id in this state may expire (nothing of it is open)."""
        return self in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)

    @classmethod
    def from_name(cls, name: str) -> TransactionState | None:
        return next((state for state, state_name in _STATE_NAMES.items() if state_name == name), None)


_STATE_NAMES = {
    TransactionState.EMPTY: "Empty",
    TransactionState.ONGOING: "Ongoing",
    TransactionState.PREPARE_COMMIT: "PrepareCommit",
    TransactionState.PREPARE_ABORT: "PrepareAbort",
    TransactionState.COMPLETE_COMMIT: "CompleteCommit",
    TransactionState.COMPLETE_ABORT: "CompleteAbort",
    TransactionState.DEAD: "Dead",
    TransactionState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}

_S = TransactionState
_COMPLETE_OR_EMPTY = frozenset({_S.EMPTY, _S.COMPLETE_COMMIT, _S.COMPLETE_ABORT})
VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    _S.EMPTY: _COMPLETE_OR_EMPTY,
    _S.ONGOING: _COMPLETE_OR_EMPTY | {_S.ONGOING},
    _S.PREPARE_COMMIT: frozenset({_S.ONGOING}),
    _S.PREPARE_ABORT: _COMPLETE_OR_EMPTY | {_S.ONGOING, _S.PREPARE_EPOCH_FENCE},
    _S.COMPLETE_COMMIT: frozenset({_S.PREPARE_COMMIT}),
    _S.COMPLETE_ABORT: frozenset({_S.PREPARE_ABORT}),
    _S.DEAD: _COMPLETE_OR_EMPTY,
    _S.PREPARE_EPOCH_FENCE: frozenset({_S.ONGOING}),
}


class IllegalTransitionError(RuntimeError):
    """A state change Kafka's state machine does not allow: a coordinator bug, never a client's error."""


def is_epoch_exhausted(epoch: int) -> bool:
    """Kafka bumps the producer id instead of the epoch one short of the maximum, so that a fence can still bump."""
    return epoch >= MAX_PRODUCER_EPOCH - 1


@dataclass(frozen=True, slots=True)
class TxnTransit:
    """A state as written to `__transaction_state` (Kafka's TxnTransitMetadata)."""

    producer_id: int
    previous_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState
    partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int
    # Transaction protocol 2 (KIP-890): the producer id the transaction's end rotates to (its epoch was exhausted),
    # and the version of the EndTxn that ended it (2: the epoch was bumped, the markers carry version 2).
    next_producer_id: int = NO_PRODUCER_ID
    client_transaction_version: int = 0


class TransactionMetadata:
    """The coordinator's view of one transactional id. The coordinator's lock guards it."""

    def __init__(self, transactional_id: str, transit: TxnTransit) -> None:
        self.transactional_id = transactional_id
        self.pending_state: TransactionState | None = None
        self._apply(transit)

    @classmethod
    def new(cls, transactional_id: str, producer_id: int, txn_timeout_ms: int, now_ms: int) -> TransactionMetadata:
        """A transactional id seen for the first time: Empty, no epoch yet (the first InitProducerId bumps to 0)."""
        return cls(transactional_id, TxnTransit(producer_id, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_PRODUCER_EPOCH,
                                                txn_timeout_ms, TransactionState.EMPTY, frozenset(), -1, now_ms))

    def __repr__(self) -> str:
        return (f"TransactionMetadata({self.transactional_id!r}, producer_id={self.producer_id}, "
                f"epoch={self.producer_epoch}, state={self.state.state_name}, pending={self.pending_state}, "
                f"partitions={sorted(self.partitions)})")

    def _apply(self, transit: TxnTransit) -> None:
        self.producer_id = transit.producer_id
        self.previous_producer_id = transit.previous_producer_id
        self.producer_epoch = transit.producer_epoch
        self.last_producer_epoch = transit.last_producer_epoch
        self.txn_timeout_ms = transit.txn_timeout_ms
        self.state = transit.state
        self.partitions = set(transit.partitions)
        self.txn_start_timestamp = transit.txn_start_timestamp
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.next_producer_id = transit.next_producer_id
        self.client_transaction_version = transit.client_transaction_version

    @property
    def current(self) -> TxnTransit:
        return TxnTransit(self.producer_id, self.previous_producer_id, self.producer_epoch, self.last_producer_epoch,
                          self.txn_timeout_ms, self.state, frozenset(self.partitions), self.txn_start_timestamp,
                          self.txn_last_update_timestamp, self.next_producer_id, self.client_transaction_version)

    @property
    def is_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    # ---- the two steps of every change -------------------------------------------------------------------------

    def _prepare(self, transit: TxnTransit) -> TxnTransit:
        if self.pending_state is not None:
            raise IllegalTransitionError(f"{self.transactional_id}: a change to {transit.state.state_name} while "
                                         f"{self.pending_state.state_name} is pending")
        if self.state not in VALID_PREVIOUS_STATES[transit.state]:
            raise IllegalTransitionError(f"{self.transactional_id}: {self.state.state_name} cannot become "
                                         f"{transit.state.state_name}")
        self.pending_state = transit.state
        return transit

    def complete_transition(self, transit: TxnTransit) -> None:
        """The transit is in the log: make it the state."""
        if self.pending_state is not transit.state:
            raise IllegalTransitionError(f"{self.transactional_id}: completing {transit.state.state_name} while "
                                         f"{self.pending_state} is pending")
        self.pending_state = None
        self._apply(transit)

    def abort_transition(self) -> None:
        """The transit could not be written: the state stays as it was."""
        self.pending_state = None

    # ---- the changes (Kafka's prepare* methods) -----------------------------------------------------------------

    def prepare_increment_producer_epoch(self, txn_timeout_ms: int, expected_epoch: int | None,
                                         now_ms: int) -> TxnTransit | None:
        """InitProducerId on a transactional id with nothing open: the next epoch, Empty. With the epoch the
        producer expects (KIP-360), a retry of the last bump gets the same epoch again; None: that producer is
        fenced (it is neither the current epoch nor the one before)."""
        bumped = self.producer_epoch + 1
        if expected_epoch is None:
            epoch, last_epoch = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == self.producer_epoch:
            epoch, last_epoch = bumped, self.producer_epoch
        elif expected_epoch == self.last_producer_epoch:
            epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            return None
        return self._prepare(replace(self.current, producer_epoch=epoch, last_producer_epoch=last_epoch,
                                     txn_timeout_ms=txn_timeout_ms, state=TransactionState.EMPTY,
                                     partitions=frozenset(), txn_start_timestamp=-1,
                                     txn_last_update_timestamp=now_ms))

    def prepare_producer_id_rotation(self, new_producer_id: int, txn_timeout_ms: int, now_ms: int,
                                     record_last_epoch: bool) -> TxnTransit:
        """InitProducerId when the epoch is exhausted: a new producer id at epoch 0."""
        return self._prepare(replace(self.current, producer_id=new_producer_id,
                                     previous_producer_id=self.producer_id, producer_epoch=0,
                                     last_producer_epoch=self.producer_epoch if record_last_epoch
                                     else NO_PRODUCER_EPOCH,
                                     txn_timeout_ms=txn_timeout_ms, state=TransactionState.EMPTY,
                                     partitions=frozenset(), txn_start_timestamp=-1,
                                     txn_last_update_timestamp=now_ms))

    def prepare_add_partitions(self, partitions: set[TopicPartition], now_ms: int,
                               transaction_version: int = 0) -> TxnTransit:
        """AddPartitionsToTxn, AddOffsetsToTxn, a partition leader's implicit add (transaction protocol 2):
        Ongoing with these partitions too; a new transaction starts now. The version of the add is recorded, as
        Kafka's prepareAddPartitions does (2 for an add from a partition leader: the markers of a transaction fenced
        before its end then carry version 2)."""
        starts = self.state in (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                                TransactionState.COMPLETE_ABORT)
        return self._prepare(replace(self.current, state=TransactionState.ONGOING,
                                     partitions=frozenset(self.partitions | partitions),
                                     client_transaction_version=transaction_version,
                                     txn_start_timestamp=now_ms if starts else self.txn_start_timestamp,
                                     txn_last_update_timestamp=now_ms))

    def prepare_abort_or_commit(self, state: TransactionState, now_ms: int, transaction_version: int = 0,
                                next_producer_id: int = NO_PRODUCER_ID) -> TxnTransit:
        """EndTxn: PrepareCommit or PrepareAbort, the partitions kept for the markers. Under transaction protocol 2
        every end bumps the epoch (the markers carry it; the epoch ended with is kept as the last one, so that a
        retry can be recognised), and an abort may come with no transaction open (its start is then now)."""
        if transaction_version < TRANSACTION_VERSION_2:
            return self._prepare(replace(self.current, state=state, client_transaction_version=transaction_version,
                                         txn_last_update_timestamp=now_ms))
        # at Short.MAX_VALUE (only after a bug) an abort goes through unbumped, so that the producer can recover
        epoch = self.producer_epoch if self.producer_epoch >= MAX_PRODUCER_EPOCH else self.producer_epoch + 1
        opened = self.state is TransactionState.ONGOING
        return self._prepare(replace(self.current, state=state, producer_epoch=epoch,
                                     last_producer_epoch=self.producer_epoch, next_producer_id=next_producer_id,
                                     client_transaction_version=transaction_version,
                                     txn_start_timestamp=self.txn_start_timestamp if opened else now_ms,
                                     txn_last_update_timestamp=now_ms))

    def prepare_fenced_abort(self, now_ms: int) -> TxnTransit:
        """Abort the open transaction with the epoch bumped (a new producer took the transactional id over, or the
        transaction timed out): the markers carry the new epoch, so the old producer is fenced everywhere."""
        if self.producer_epoch >= MAX_PRODUCER_EPOCH:
            raise IllegalTransitionError(f"{self.transactional_id}: epoch {self.producer_epoch} cannot be bumped")
        return self._prepare(replace(self.current, producer_epoch=self.producer_epoch + 1,
                                     last_producer_epoch=NO_PRODUCER_EPOCH, state=TransactionState.PREPARE_ABORT,
                                     txn_last_update_timestamp=now_ms))

    def prepare_complete(self, now_ms: int) -> TxnTransit:
        """Every marker is written: CompleteCommit or CompleteAbort, no partitions left."""
        state = (TransactionState.COMPLETE_COMMIT if self.state is TransactionState.PREPARE_COMMIT
                 else TransactionState.COMPLETE_ABORT)
        rotated: dict[str, int] = {}
        if self.client_transaction_version >= TRANSACTION_VERSION_2 and self.next_producer_id != NO_PRODUCER_ID:
            # the epoch was exhausted: the producer goes on with the next producer id at epoch 0 (the last epoch
            # stays the one the client last saw, so that its retry is recognised)
            rotated = {"producer_id": self.next_producer_id, "previous_producer_id": self.producer_id,
                       "producer_epoch": 0}
        return self._prepare(replace(self.current, state=state, partitions=frozenset(),
                                     next_producer_id=NO_PRODUCER_ID, txn_last_update_timestamp=now_ms, **rotated))

    def prepare_dead(self) -> TxnTransit:
        """transactional.id.expiration.ms passed with nothing open: the id goes (a tombstone in the log)."""
        return self._prepare(replace(self.current, state=TransactionState.DEAD, partitions=frozenset()))
