"""Partitions a partition leader adds to a transaction (Kafka's AddPartitionsToTxnManager with the operation
ADD_PARTITION, KIP-890 part 2), or only verifies are in it (its operations DEFAULT_ERROR and GENERIC_ERROR_SUPPORTED,
KIP-890 part 1).

A producer of transaction protocol 2 (transaction.version 2: Produce v12+, TxnOffsetCommit v5) sends neither
AddPartitionsToTxn nor AddOffsetsToTxn: the leader of the partition its transactional records (or its offsets) go to
adds that partition to the transaction before appending, as Kafka's ReplicaManager does. `add` asks the transaction
coordinator of the transactional id (the leader of its `__transaction_state` partition):
- this broker (always, on a single broker): the in-process coordinator adds them, recorded as a protocol 2 add, with
  AddPartitionsToTxn's checks and errors (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS while
  the previous transaction completes, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS);
- another broker: one AddPartitionsToTxn v5 in its broker form (a transactions list, verify_only false) over the
  inter-broker listener, answered per partition. A top-level CLUSTER_AUTHORIZATION_FAILED becomes INVALID_TXN_STATE
  (the client must not see it), an unreachable coordinator NETWORK_EXCEPTION;
- none (its `__transaction_state` partition has no leader): COORDINATOR_NOT_AVAILABLE.
PRODUCER_FENCED is answered INVALID_PRODUCER_EPOCH, what a producer expects of a produce (Kafka's handler does so).
CONCURRENT_TRANSACTIONS, common right after a commit (the markers of the previous transaction are still being
written), is retried every add.partitions.to.txn.retry.backoff.ms (20 ms) for up to
add.partitions.to.txn.retry.backoff.max.ms (100 ms), Kafka's defaults, as its maybeRetryOnConcurrentTransactions;
then it is the answer.

The other operations only verify (a producer of transaction protocol 1, whose own AddPartitionsToTxn or
AddOffsetsToTxn should have put the partition in the transaction; transaction.partition.verification.enable): they
ask the same coordinator, in process or by AddPartitionsToTxn v5 with verify_only true, whether the partitions are in
the ongoing transaction, writing nothing. A partition that is not is TRANSACTION_ABORTABLE, or INVALID_TXN_STATE for
requests older than that error (DEFAULT_ERROR); CONCURRENT_TRANSACTIONS is not retried (Kafka retries only the adds).

Adds and verifications run on worker threads of their own, started on the first (a broker whose producers are not
transactional never starts them): a coordinator's write waits for its followers, a remote coordinator for the
network, neither on a request thread. `on_done` is called on the worker with the error of each partition that was
not added, or not verified (empty: all are in the transaction).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from enum import Enum
from typing import TYPE_CHECKING, Any

from wirebroker.coordinator.transaction_state import (
    TRANSACTION_VERSION_2,
    TopicPartition,
)
from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from wirebroker.coordinator.transaction_coordinator import TransactionCoordinator
    from wirebroker.network.client_security import ClientSecurity

log = logging.getLogger(__name__)

ADD_PARTITIONS_TO_TXN_VERSION = 5  # the broker form Kafka 4.3.1's brokers send (v4+: batched; v5 TRANSACTION_ABORTABLE)
RETRY_BACKOFF_S = 0.020  # add.partitions.to.txn.retry.backoff.ms, Kafka's default
RETRY_BACKOFF_MAX_S = 0.100  # add.partitions.to.txn.retry.backoff.max.ms, Kafka's default
# KIP-890 part 1: a producer of transaction protocol 1's partitions are verified (Kafka's key, default true)
VERIFICATION_KEY = "transaction.partition.verification.enable"
WORKERS = 4  # adds in flight at once (each holds its worker while the coordinator writes)



class TransactionSupportedOperation(Enum):
    """What a partition leader does for a transactional request, by its version (Kafka's enum of that name)."""
    DEFAULT_ERROR = "verify; a partition not in the transaction is INVALID_TXN_STATE"
    GENERIC_ERROR_SUPPORTED = "verify; a partition not in the transaction is TRANSACTION_ABORTABLE (KIP-890)"
    ADD_PARTITION = "add the partitions to the transaction (KIP-890 part 2)"


def operation_for_version(version: int, first_abortable_version: int,
                          first_add_version: int) -> TransactionSupportedOperation:
    """Kafka's produceRequestVersionToTransactionSupportedOperation (Produce: 11, 12) and its TxnOffsetCommit twin
    (4, 5)."""
    if version >= first_add_version:
        return TransactionSupportedOperation.ADD_PARTITION
    if version >= first_abortable_version:
        return TransactionSupportedOperation.GENERIC_ERROR_SUPPORTED
    return TransactionSupportedOperation.DEFAULT_ERROR


AddCallback = Callable[[dict[TopicPartition, int]], None]
# a `__transaction_state` partition -> its leader (node id, host, port) on the inter-broker listener, None: no leader
CoordinatorLookup = Callable[[int], "tuple[int, str, int] | None"]


class AddPartitionsToTxnManager:
    def __init__(self, coordinator: TransactionCoordinator, coordinator_of: CoordinatorLookup, node_id: int,
                 request_timeout_ms: int, security: ClientSecurity | None = None) -> None:
        self._coordinator = coordinator
        self._coordinator_of = coordinator_of
        self._node_id = node_id
        self._request_timeout_s = request_timeout_ms / 1000
        self._security = security
        self._lock = threading.Lock()
        self._workers: ThreadPoolExecutor | None = None
        self._clients: dict[tuple[int, str, int], tuple[BrokerClient, threading.Lock]] = {}

    def add(self, transactional_id: str, producer_id: int, producer_epoch: int,
            partitions: Collection[TopicPartition], on_done: AddCallback,
            operation: TransactionSupportedOperation = TransactionSupportedOperation.ADD_PARTITION) -> None:
        """Add the partitions to the producer's transaction (or, for the other operations, only ask whether they
        are in it), then call `on_done` (on a worker thread)."""
        self._executor().submit(self._add_with_retries, transactional_id, producer_id, producer_epoch,
                                frozenset(partitions), on_done, operation)

    def shutdown(self) -> None:
        with self._lock:
            workers, self._workers = self._workers, None
            clients, self._clients = list(self._clients.values()), {}
        if workers is not None:
            workers.shutdown(wait=False, cancel_futures=True)
        for client, _ in clients:
            client.close()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._workers is None:
                # only a broker with transactional producers loads and starts them
                from concurrent.futures import ThreadPoolExecutor

                self._workers = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="AddPartitionsToTxnSender")
            return self._workers

    def _add_with_retries(self, transactional_id: str, producer_id: int, producer_epoch: int,
                          partitions: frozenset[TopicPartition], on_done: AddCallback,
                          operation: TransactionSupportedOperation) -> None:
        verify_only = operation is not TransactionSupportedOperation.ADD_PARTITION
        deadline = time.monotonic() + min(RETRY_BACKOFF_MAX_S, self._request_timeout_s)
        try:
            while True:
                errors = self._add_once(transactional_id, producer_id, producer_epoch, partitions, verify_only)
                if (verify_only or ErrorCode.CONCURRENT_TRANSACTIONS not in errors.values()
                        or time.monotonic() >= deadline):
                    break
                time.sleep(RETRY_BACKOFF_S)
        except Exception:  # a bug must not leave the produce unanswered
            log.exception("Adding %s to the transaction of %r failed", sorted(partitions), transactional_id)
            errors = dict.fromkeys(partitions, ErrorCode.UNKNOWN_SERVER_ERROR)
        if operation is TransactionSupportedOperation.DEFAULT_ERROR:  # the request predates TRANSACTION_ABORTABLE
            errors = {tp: ErrorCode.INVALID_TXN_STATE if code == ErrorCode.TRANSACTION_ABORTABLE else code
                      for tp, code in errors.items()}
        if errors:
            log.debug("%s %s in the transaction of %r (producer id %d, epoch %d): %s",
                      "Verifying" if verify_only else "Adding", sorted(partitions),
                      transactional_id, producer_id, producer_epoch,
                      {tp: ErrorCode(code).name for tp, code in errors.items()})
        try:
            on_done(errors)
        except Exception:  # the caller's answer failed: say so, the worker goes on
            log.exception("Answering the add of %s to the transaction of %r failed", sorted(partitions),
                          transactional_id)

    def _add_once(self, transactional_id: str, producer_id: int, producer_epoch: int,
                  partitions: frozenset[TopicPartition], verify_only: bool) -> dict[TopicPartition, int]:
        coordinator = self._coordinator_of(self._coordinator.state_log.partition_for(transactional_id))
        if coordinator is None:
            return dict.fromkeys(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if coordinator[0] != self._node_id:
            return self._add_remotely(coordinator, transactional_id, producer_id, producer_epoch, partitions,
                                      verify_only)
        try:
            if verify_only:
                found = self._coordinator.verify_partitions(transactional_id, producer_id, producer_epoch,
                                                            set(partitions))
                return {tp: ErrorCode.TRANSACTION_ABORTABLE for tp, included in found.items() if not included}
            self._coordinator.add_partitions(transactional_id, producer_id, producer_epoch, set(partitions),
                                             TRANSACTION_VERSION_2)
        except KafkaError as exc:
            return dict.fromkeys(partitions, _as_produce_error(exc.code))
        return {}

    def _add_remotely(self, coordinator: tuple[int, str, int], transactional_id: str, producer_id: int,
                      producer_epoch: int, partitions: frozenset[TopicPartition],
                      verify_only: bool) -> dict[TopicPartition, int]:
        # the codec loads with the first add to another broker: a single broker never needs it
        from wirebroker.protocol.messages.add_partitions_to_txn import (
            AddPartitionsToTxnRequest,
            AddPartitionsToTxnResponse,
        )

        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)
        request = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction(
            transactional_id=transactional_id, producer_id=producer_id, producer_epoch=producer_epoch,
            verify_only=verify_only, topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=name, partitions=indexes)
                                       for name, indexes in by_topic.items()])])
        client, lock = self._client(coordinator)
        try:
            with lock:
                response: Any = client.send(request, ADD_PARTITIONS_TO_TXN_VERSION)
        except BrokerUnreachable as exc:
            log.warning("Cannot %s %s in the transaction of %r at its coordinator, broker %d (%s)",
                        "verify" if verify_only else "add", sorted(partitions), transactional_id, coordinator[0], exc)
            return dict.fromkeys(partitions, ErrorCode.NETWORK_EXCEPTION)
        assert isinstance(response, AddPartitionsToTxnResponse)
        if response.error_code != ErrorCode.NONE:
            log.error("AddPartitionsToTxn to broker %d for %r answered %s", coordinator[0], transactional_id,
                      ErrorCode(response.error_code).name)
            code = (ErrorCode.INVALID_TXN_STATE if response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                    else response.error_code)
            return dict.fromkeys(partitions, code)
        return {(topic.name, result.partition_index): _as_produce_error(result.partition_error_code)
                for txn in response.results_by_transaction for topic in txn.topic_results
                for result in topic.results_by_partition if result.partition_error_code != ErrorCode.NONE}

    def _client(self, coordinator: tuple[int, str, int]) -> tuple[BrokerClient, threading.Lock]:
        with self._lock:
            entry = self._clients.get(coordinator)
            if entry is None:
                entry = self._clients[coordinator] = (
                    BrokerClient(coordinator[1], coordinator[2], f"AddPartitionsToTxnSender-{self._node_id}",
                                 self._request_timeout_s, security=self._security), threading.Lock())
            return entry


def _as_produce_error(code: int) -> int:
    """Producers expect INVALID_PRODUCER_EPOCH where the coordinator says PRODUCER_FENCED."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED else code
