"""WriteTxnMarkers: API key 27, versions 1-2 (Kafka 4 removed v0, KIP-896); sent by a transaction coordinator to the
leaders of a transaction's partitions once the transaction commits or aborts.

Behaviour (Kafka's KafkaApis.handleWriteTxnMarkersRequest):
- For each marker (producer id, producer epoch, COMMIT/ABORT, coordinator epoch) and each of its partitions hosted
  here, one control batch (attributes isControl + isTransactional; one control record: key version 0 and the type,
  value the EndTransactionMarker version 0 with the coordinator epoch) is appended as the leader through
  `ReplicaManager.append_txn_markers` (origin COORDINATOR, acks=all): a partition's answer comes once the high
  watermark passes its marker, within the broker's request.timeout.ms (REQUEST_TIMED_OUT after).
- Per partition errors: UNKNOWN_TOPIC_OR_PARTITION for a partition not hosted here; NOT_LEADER_OR_FOLLOWER when this
  broker does not lead it; NOT_ENOUGH_REPLICAS(_AFTER_APPEND) below min.insync.replicas; INVALID_PRODUCER_EPOCH when
  the marker's producer epoch is older than the partition's producer state has; TRANSACTION_COORDINATOR_FENCED for
  an older coordinator epoch than the last marker's.
- A marker of transaction version 2 (v2's `transaction_version`, KIP-890 part 2) must carry a producer epoch above
  the one the partition has (the coordinator bumped it when the transaction ended), else INVALID_PRODUCER_EPOCH, as
  Kafka's ProducerAppendInfo.appendEndTxnMarker checks it; at versions 0 and 1 the same epoch is enough.
- Markers for `__consumer_offsets` go to the group coordinator (Kafka's completeTransaction), which writes the
  marker and makes the producer's pending transactional offsets committed or drops them; its "not ready" errors
  (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS) are answered NOT_LEADER_OR_FOLLOWER, the
  error the transaction coordinator retries on. In a cluster that work runs on the group request thread
  (apis/group_requests.py says why).
- The answer groups the partitions by producer id, as Kafka's does. It is an inter-broker API; served (and
  advertised, as Kafka 4.3.1's brokers list it) on every listener, as ZooKeeper-era Kafka did.
Version notes: v1 flexible; v2 each marker's `transaction_version` (KIP-890 part 2), checked as above.

In-process callers (a transaction coordinator on this broker) can call `ReplicaManager.append_txn_markers`
directly for data partitions, and `GroupCoordinator.complete_transaction` for `__consumer_offsets` partitions.
- With an authorizer the sender (a transaction coordinator) needs CLUSTER_ACTION on the cluster, else every
  partition is CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from wirebroker.apis.context import RequestContext
from wirebroker.apis.registry import serve
from wirebroker.cluster.acls import AclOperation
from wirebroker.coordinator.offsets_topic import OFFSETS_TOPIC
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.write_txn_markers import (
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from wirebroker.replica.partition import Partition

log = logging.getLogger(__name__)

API_KEY = 27
# The group coordinator's "not ready" errors, as the transaction coordinator expects them (it retries).
GROUP_COORDINATOR_NOT_READY = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                                         ErrorCode.COORDINATOR_LOAD_IN_PROGRESS})

TRANSACTION_VERSION_2 = 2  # transaction.version 2: ending a transaction bumps the producer epoch
_Marker = WriteTxnMarkersRequest.WritableTxnMarker
Errors = dict[tuple[str, int], int]


class _Answer:
    """Collects the error of every partition of every marker and answers once the last one is known."""

    def __init__(self, ctx: RequestContext, markers: list[_Marker], outstanding: int) -> None:
        self._ctx = ctx
        self._markers = markers
        self._errors: list[Errors] = [{} for _ in markers]
        self._outstanding = outstanding
        self._lock = threading.Lock()

    def add(self, index: int, errors: Errors) -> None:
        with self._lock:
            self._errors[index].update(errors)

    def done(self, index: int | None, errors: Errors) -> None:
        """One outstanding part of marker `index` is answered (None: the handler's own part, planning)."""
        with self._lock:
            if index is not None:
                self._errors[index].update(errors)
            self._outstanding -= 1
            if self._outstanding:
                return
        self._ctx.respond(self._response())

    def _response(self) -> WriteTxnMarkersResponse:
        by_producer: dict[int, Errors] = {}
        for marker, errors in zip(self._markers, self._errors):
            by_producer.setdefault(marker.producer_id, {}).update(errors)
        results = []
        for producer_id, errors in by_producer.items():
            by_topic: dict[str, list[WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult]] = {}
            for (topic, index), code in errors.items():
                by_topic.setdefault(topic, []).append(
                    WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult(partition_index=index, error_code=code))
            results.append(WriteTxnMarkersResponse.WritableTxnMarkerResult(producer_id=producer_id, topics=[
                WriteTxnMarkersResponse.WritableTxnMarkerTopicResult(name=topic, partitions=partitions)
                for topic, partitions in by_topic.items()]))
        return WriteTxnMarkersResponse(markers=results)


def handle(ctx: RequestContext, request: WriteTxnMarkersRequest) -> None:
    if not ctx.authorize(AclOperation.CLUSTER_ACTION):  # only a transaction coordinator writes markers
        refused = _Answer(ctx, request.markers, 1)
        for i, marker in enumerate(request.markers):
            refused.add(i, {(t.name, index): ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                            for t in marker.topics for index in t.partition_indexes})
        refused.done(None, {})
        return
    replica_manager = ctx.broker.replica_manager
    timeout_ms = ctx.broker.config["request.timeout.ms"]  # Kafka's acks=all wait for the markers
    plans = []
    for marker in request.markers:
        refused, data, offsets = {}, [], []
        for topic in marker.topics:
            for index in topic.partition_indexes:
                partition = replica_manager.partition(topic.name, index)
                if partition is None:
                    refused[(topic.name, index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                elif _epoch_not_bumped(partition, marker):
                    refused[(topic.name, index)] = ErrorCode.INVALID_PRODUCER_EPOCH
                elif topic.name == OFFSETS_TOPIC:
                    offsets.append(index)
                else:
                    data.append((topic.name, index))
        plans.append((marker, refused, data, offsets))
    answer = _Answer(ctx, request.markers, 1 + sum(bool(data) + bool(offsets) for _, _, data, offsets in plans))
    for i, (marker, refused, data, offsets) in enumerate(plans):
        answer.add(i, refused)
        if data:
            replica_manager.append_txn_markers(marker.producer_id, marker.producer_epoch, marker.coordinator_epoch,
                                               marker.transaction_result, data, timeout_ms,
                                               lambda errors, i=i: answer.done(i, errors))
        if offsets:
            _off_network_thread(ctx, lambda i=i, marker=marker, offsets=offsets: answer.done(
                i, _complete_offsets_transaction(ctx, marker, offsets)))
    answer.done(None, {})  # answered now if nothing waits


def _epoch_not_bumped(partition: Partition, marker: _Marker) -> bool:
    """A transaction version 2 marker whose epoch is not above the producer's on this partition."""
    if marker.transaction_version < TRANSACTION_VERSION_2:
        return False
    entry = partition.log.producer_state.last_entry(marker.producer_id)
    return entry is not None and entry.producer_epoch >= marker.producer_epoch


def _complete_offsets_transaction(ctx: RequestContext, marker: _Marker, partitions: list[int]) -> Errors:
    errors = {}
    for index in partitions:
        try:
            code = ctx.broker.group_coordinator.complete_transaction(
                index, marker.producer_id, marker.producer_epoch, marker.coordinator_epoch, marker.transaction_result)
        except Exception:  # answered all the same: the transaction coordinator retries
            log.exception("writing the marker of producer %d to %s-%d failed", marker.producer_id, OFFSETS_TOPIC,
                          index)
            code = ErrorCode.UNKNOWN_SERVER_ERROR
        errors[(OFFSETS_TOPIC, index)] = ErrorCode.NOT_LEADER_OR_FOLLOWER if code in GROUP_COORDINATOR_NOT_READY \
            else code
    return errors


def _off_network_thread(ctx: RequestContext, work: Callable[[], None]) -> None:
    executor = ctx.broker.group_requests
    if executor is None:
        work()
    else:
        executor.submit(work)


serve(API_KEY, handle)
