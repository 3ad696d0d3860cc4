"""The transaction markers' way to the partition leaders (Kafka's TransactionMarkerChannelManager and
TransactionMarkerRequestCompletionHandler).

Once PrepareCommit or PrepareAbort is in `__transaction_state`, the coordinator hands the transaction's markers here:
producer id, the epoch the markers carry, commit or abort, the coordinator epoch (the leader epoch of its
`__transaction_state` partition) and the partitions, the `__consumer_offsets` partition of AddOffsetsToTxn
included. One sender thread groups what is pending by partition leader and sends each leader one WriteTxnMarkers
(v2, as Kafka 4.3.1's brokers send it, each marker with its transaction version) over the inter-broker listener; on a single broker the leader is this broker
itself, reached over loopback as Kafka does, so a marker is always written by the leader's own WriteTxnMarkers
handler and never by reaching into a log. Per partition, as Kafka's completion handler:
- NONE: the marker is written there;
- NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
  KAFKA_STORAGE_ERROR, COORDINATOR_LOAD_IN_PROGRESS and an unreachable leader: retried after `retry_backoff_ms`
  with the leader looked up again;
- a partition whose topic was deleted: dropped (nobody reads it any more);
- INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED: this coordinator was superseded; the transaction is given
  up here (the new coordinator completes it from the log);
- anything else is a broker bug: logged, and retried so that the transaction is not left half-written.
When no partition is left, `on_done` runs on the sender thread (the coordinator writes CompleteCommit/CompleteAbort).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.network.client_security import ClientSecurity
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.write_txn_markers import (
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

log = logging.getLogger(__name__)

WRITE_TXN_MARKERS_VERSION = 2  # Kafka 4.3.1 serves v1-2 (KIP-896 removed v0; v2 carries the transaction version)
RETRIABLE = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_ENOUGH_REPLICAS,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
})
COORDINATOR_FENCED = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})

TopicPartition = tuple[str, int]
# (topic, partition) -> (leader's node id, host, port) on the inter-broker listener, None while it has no leader
LeaderLookup = Callable[[str, int], "tuple[int, str, int] | None"]


@dataclass(frozen=True, slots=True)
class TxnMarkers:
    """The markers of one transaction, as WriteTxnMarkers carries them."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool
    coordinator_epoch: int
    partitions: frozenset[TopicPartition]
    # the version the client ended the transaction with (0 for EndTxn v0-4, 2 for v5+: the partition leader then
    # checks that the marker's epoch is above the producer's)
    transaction_version: int = 0


@dataclass(slots=True, eq=False)
class _Pending:
    markers: TxnMarkers
    on_done: Callable[[], None]
    remaining: set[TopicPartition] = field(default_factory=set)
    given_up: bool = False


class TransactionMarkerChannel:
    def __init__(self, leader_of: LeaderLookup, topic_exists: Callable[[str], bool], client_id: str,
                 request_timeout_ms: int, retry_backoff_ms: int, security: ClientSecurity | None = None) -> None:
        self._leader_of = leader_of
        self._topic_exists = topic_exists
        self._client_id = client_id
        self._request_timeout_s = request_timeout_ms / 1000
        self._retry_backoff_s = retry_backoff_ms / 1000
        self._security = security  # TLS/SASL to a secured inter-broker listener
        self._pending: list[_Pending] = []
        self._clients: dict[tuple[int, str, int], BrokerClient] = {}
        self._cond = threading.Condition()
        self._running = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._cond:
            self._running = True
        self._thread = threading.Thread(target=self._run, name="transaction-marker-sender", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self._request_timeout_s + 1)
        for client in self._clients.values():
            client.close()

    def send(self, markers: TxnMarkers, on_done: Callable[[], None]) -> None:
        """Write the markers on every partition, then call `on_done` (on the sender thread)."""
        with self._cond:
            self._pending.append(_Pending(markers, on_done, set(markers.partitions)))
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._running and not self._pending:
                    self._cond.wait()
                if not self._running:
                    return
                pending = list(self._pending)
            try:
                retry = self._send_round(pending)
            except Exception:  # a bug must not stop the sender: every transaction after it would hang
                log.exception("sending transaction markers failed; retrying")
                retry = True
            with self._cond:
                done = [p for p in pending if not p.remaining or p.given_up]
                self._pending = [p for p in self._pending if p not in done]
            for entry in done:
                if entry.given_up:
                    continue
                try:
                    entry.on_done()
                except Exception:
                    log.exception("completing transaction %r after its markers failed",
                                  entry.markers.transactional_id)
            if retry:
                with self._cond:
                    self._cond.wait(self._retry_backoff_s)

    def _send_round(self, pending: list[_Pending]) -> bool:
        """Send one WriteTxnMarkers per leader for what is pending; whether something is left to retry."""
        by_leader: dict[tuple[int, str, int], list[tuple[_Pending, list[TopicPartition]]]] = {}
        retry = False
        for entry in pending:
            for topic, index in sorted(entry.remaining):
                if not self._topic_exists(topic):
                    log.info("Dropping the %s marker of transaction %r for %s-%d: the topic was deleted",
                             _result(entry.markers), entry.markers.transactional_id, topic, index)
                    entry.remaining.discard((topic, index))
                    continue
                leader = self._leader_of(topic, index)
                if leader is None:
                    retry = True
                    continue
                group = by_leader.setdefault(leader, [])
                if not group or group[-1][0] is not entry:
                    group.append((entry, []))
                group[-1][1].append((topic, index))
        for leader, entries in by_leader.items():
            retry |= self._send_to(leader, entries)
        return retry

    def _send_to(self, leader: tuple[int, str, int], entries: list[tuple[_Pending, list[TopicPartition]]]) -> bool:
        request = WriteTxnMarkersRequest(markers=[_marker(entry.markers, partitions) for entry, partitions in entries])
        client = self._clients.get(leader)
        if client is None:
            client = self._clients[leader] = BrokerClient(leader[1], leader[2], self._client_id,
                                                          self._request_timeout_s, security=self._security)
        try:
            response = client.send(request, WRITE_TXN_MARKERS_VERSION)
        except BrokerUnreachable as exc:
            log.warning("Cannot send transaction markers to broker %d (%s); retrying", leader[0], exc)
            return True
        assert isinstance(response, WriteTxnMarkersResponse)
        retry = False
        for (entry, _), result in zip(entries, response.markers, strict=False):
            for topic in result.topics:
                for partition in topic.partitions:
                    retry |= self._handle(entry, leader[0], topic.name, partition.partition_index,
                                          partition.error_code)
        return retry

    def _handle(self, entry: _Pending, node_id: int, topic: str, index: int, code: int) -> bool:
        markers = entry.markers
        if code == ErrorCode.NONE:
            entry.remaining.discard((topic, index))
            return False
        if code in COORDINATOR_FENCED:
            log.warning("Giving up the %s markers of transaction %r (producer id %d, epoch %d): broker %d answered %s "
                        "for %s-%d, so another coordinator has taken the transaction over", _result(markers),
                        markers.transactional_id, markers.producer_id, markers.producer_epoch, node_id,
                        ErrorCode(code).name, topic, index)
            entry.given_up = True
            return False
        level = logging.DEBUG if code in RETRIABLE else logging.ERROR
        log.log(level, "Writing the %s marker of transaction %r on %s-%d at broker %d failed with %s; retrying",
                _result(markers), markers.transactional_id, topic, index, node_id, ErrorCode(code).name)
        return True


def _marker(markers: TxnMarkers, partitions: list[TopicPartition]) -> WriteTxnMarkersRequest.WritableTxnMarker:
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return WriteTxnMarkersRequest.WritableTxnMarker(
        producer_id=markers.producer_id, producer_epoch=markers.producer_epoch,
        transaction_result=markers.committed, coordinator_epoch=markers.coordinator_epoch,
        transaction_version=markers.transaction_version,
        topics=[WriteTxnMarkersRequest.WritableTxnMarkerTopic(name=name, partition_indexes=indexes)
                for name, indexes in by_topic.items()])


def _result(markers: TxnMarkers) -> str:
    return "COMMIT" if markers.committed else "ABORT"
