"""What a partition leader knows of a producer's transaction before its records are appended (Kafka's
ReplicaManager.handleProduceAppend and UnifiedLog.maybeStartTransactionVerification, KIP-890).

A transactional append needs its partition in the transaction at the coordinator: a producer of transaction
protocol 2 has the leader add it there, one of protocol 1 has it verified there (transaction.partition.verification
.enable). The partition's own producer state tells whether that was done: a transaction of this producer id open
here at this very epoch was added or verified before (its first batch went through the coordinator), so only the
first append of each transaction on a partition asks the coordinator (Kafka's hasOngoingTransaction). An epoch older than the partition has seen is refused at once
(INVALID_PRODUCER_EPOCH), as Kafka does before asking anyone.

Asking the coordinator starts a verification in the partition's producer state: its guard (VerificationGuard) goes
with the append, which the log refuses (INVALID_TXN_STATE) if the transaction ended meanwhile (see
log/verification_guard.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from wirebroker.protocol.errors import (
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    KafkaError,
)
from wirebroker.protocol.records import read_header

if TYPE_CHECKING:
    from wirebroker.log.log import Log
    from wirebroker.log.verification_guard import VerificationGuard
    from wirebroker.replica.manager import ReplicaManager


def transactional_producer(records: Iterable[memoryview | bytes | None]) -> tuple[int, int] | None:
    """The (producer id, epoch) of the transactional batches among these partitions' records (each partition's
    first batch tells, as a producer sends one batch per partition); None if there are none. Two producers (or two
    epochs) in one request: INVALID_PRODUCER_ID_MAPPING, as Kafka refuses it."""
    producers = set()
    for batch in records:
        try:
            header = read_header(batch) if batch else None
        except KafkaError:
            continue  # too short to tell: the log refuses it
        if header is not None and header.is_transactional:
            producers.add((header.producer_id, header.producer_epoch))
    if len(producers) > 1:  # Kafka counts (id, epoch) pairs
        raise InvalidProducerIdMappingError("Transactional records contained more than one producer ID")
    return next(iter(producers), None)


def in_transaction_here(replica_manager: ReplicaManager, topic: str, index: int, producer_id: int,
                        producer_epoch: int) -> bool:
    """Whether this partition has the producer's transaction open at this epoch (nothing to add). Raises what
    the partition lookup raises (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION) and INVALID_PRODUCER_EPOCH for
    an epoch below the one the partition has seen."""
    log = _leader_log_at_epoch(replica_manager, topic, index, producer_id, producer_epoch)
    return log.producer_state.has_ongoing_transaction(producer_id, producer_epoch)


def start_verification(replica_manager: ReplicaManager, topic: str, index: int, producer_id: int,
                       producer_epoch: int, supports_epoch_bump: bool) -> VerificationGuard:
    """The guard the append of this partition carries: SENTINEL if the transaction is open here (nothing to ask the
    coordinator), else that of the verification started in the partition's producer state. Raises as
    in_transaction_here does."""
    log = _leader_log_at_epoch(replica_manager, topic, index, producer_id, producer_epoch)
    return log.maybe_start_transaction_verification(producer_id, producer_epoch, supports_epoch_bump)


def _leader_log_at_epoch(replica_manager: ReplicaManager, topic: str, index: int, producer_id: int,
                         producer_epoch: int) -> Log:
    log = replica_manager.leader_partition(topic, index).log
    entry = log.producer_state.last_entry(producer_id)
    if entry is not None and producer_epoch < entry.producer_epoch:
        raise InvalidProducerEpochError(f"Epoch of producer {producer_id} is {producer_epoch}, which is smaller than "
                                        f"the last seen epoch {entry.producer_epoch}")
    return log
