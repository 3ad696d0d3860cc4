"""The share-partition leader's way to the share coordinators in a cluster (KIP-932; Kafka's DefaultStatePersister and
PersisterStateManager).

In a cluster the state of a share-partition `group:topic id:partition` lives with the share coordinator that leads
the key's `__share_group_state` partition, most often another broker. Every read and write of the state goes there
as Kafka's persister RPCs, over the inter-broker listener, as Kafka's share-partition leaders send them (to
themselves too, over loopback, when they lead that partition):
- the coordinator is found with FindCoordinator (key type SHARE = 2, asked of this broker, which creates
  `__share_group_state` on the first ask) and remembered per key;
- ReadShareGroupState (a never-initialised key is INVALID_REQUEST, as Kafka answers it: None here),
  WriteShareGroupState (the share-partition's whole in-flight window, which the coordinator merges into its state),
  InitializeShareGroupState
  (a fresh state, the admin's reset with the next state epoch), DeleteShareGroupState, ReadShareGroupStateSummary;
- NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and an unreachable coordinator forget it and find it again;
  COORDINATOR_LOAD_IN_PROGRESS and UNKNOWN_TOPIC_OR_PARTITION (its metadata behind a topic just created) ask the
  same one again; each after a back-off that doubles from
  REQUEST_BACKOFF_MS up to REQUEST_BACKOFF_MAX_MS, at most MAX_ATTEMPTS times (Kafka's PersisterStateManager), so
  a coordinator's move (its broker killed: the new leader loads the partition) is waited out. Any other error is
  the call's, raised as its Kafka exception (FENCED_STATE_EPOCH: an admin reset the share-partition meanwhile;
  FENCED_LEADER_EPOCH: a newer leader of the topic partition has read the state).

The calls block: the share-partition manager makes them from the share request threads (never a network thread,
whose follower fetches the coordinator's acks=all write may wait for) and from the group coordinator's timer, and
the group coordinator's initialisations from a thread of their own (apis/share_services.py).
`shutdown` (with the broker, Kafka's persister stop) ends the retries at once and closes the connections.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from wirebroker.coordinator.share_coordinator import (
    ShareKey,
    ShareState,
    coordinator_key,
)
from wirebroker.coordinator.share_partition import StateBatch
from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.network.client_security import ClientSecurity
from wirebroker.protocol.errors import (
    CoordinatorNotAvailableError,
    ErrorCode,
    error_class,
)
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages.delete_share_group_state import (
    DeleteShareGroupStateRequest,
)
from wirebroker.protocol.messages.find_coordinator import FindCoordinatorRequest
from wirebroker.protocol.messages.initialize_share_group_state import (
    InitializeShareGroupStateRequest,
)
from wirebroker.protocol.messages.read_share_group_state import (
    ReadShareGroupStateRequest,
)
from wirebroker.protocol.messages.read_share_group_state_summary import (
    ReadShareGroupStateSummaryRequest,
)
from wirebroker.protocol.messages.write_share_group_state import (
    WriteShareGroupStateRequest,
)

log = logging.getLogger(__name__)

SHARE_KEY_TYPE = 2  # FindCoordinator's key type for a share-partition key
FIND_COORDINATOR_VERSION = 6  # batched keys (v4+), as Kafka 4.3.1's brokers send it
WRITE_VERSION = 1  # v1 carries DeliveryCompleteCount
SUMMARY_VERSION = 1
STATE_VERSION = 0  # Initialize, Read and Delete: their only version
UNINITIALIZED_START_OFFSET = -1
NO_LEADER_EPOCH = -1
REQUEST_BACKOFF_MS = 1000  # Kafka's PersisterStateManager.REQUEST_BACKOFF_MS
REQUEST_BACKOFF_MAX_MS = 30_000  # its REQUEST_BACKOFF_MAX_MS
MAX_ATTEMPTS = 5  # its MAX_FIND_COORD_ATTEMPTS and maxRPCRetryAttempts
FIND_AGAIN = frozenset({ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE})
# the coordinator's metadata may not name a topic created a moment ago yet
ASK_AGAIN = frozenset({ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION})
UNINITIALIZED = frozenset({ErrorCode.INVALID_REQUEST})  # ReadShareGroupState's answer for a key never initialised

Endpoint = tuple[int, str, int]  # node id, host, port on the inter-broker listener


class _Again(Exception):
    """A retriable failure of one attempt: its reason, for the log and the final error."""


class RemoteStatePersister:
    def __init__(self, own_endpoint: Callable[[], Endpoint | None], client_id: str, request_timeout_ms: int,
                 security: ClientSecurity | None = None,
                 backoff_ms: int = REQUEST_BACKOFF_MS) -> None:
        self._own_endpoint = own_endpoint  # this broker on the inter-broker listener: asked FindCoordinator
        self._client_id = client_id
        self._timeout_s = request_timeout_ms / 1000
        self._security = security
        self._backoff_s = backoff_ms / 1000
        self._lock = threading.Lock()  # one request at a time on each connection
        self._clients: dict[Endpoint, BrokerClient] = {}
        self._coordinators: dict[str, Endpoint] = {}
        self._stopped = threading.Event()  # set by shutdown: no retry waits out its backoff, no new request starts

    def shutdown(self) -> None:
        """The broker shuts down: calls still retrying give up, and once the request in flight (if any) is
        answered, the connections close."""
        self._stopped.set()
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()

    # ---- the persister (what the share-partition manager asks of the share coordinator) ----------------------

    def read(self, key: ShareKey, leader_epoch: int = NO_LEADER_EPOCH) -> ShareState | None:
        group_id, topic_id, partition = key
        result = self._call(key, ReadShareGroupStateRequest(group_id=group_id, topics=[
            ReadShareGroupStateRequest.ReadStateData(topic_id=topic_id, partitions=[
                ReadShareGroupStateRequest.PartitionData(partition=partition, leader_epoch=leader_epoch)])]),
            STATE_VERSION, answered=UNINITIALIZED)
        if result.error_code in UNINITIALIZED:
            return None
        return ShareState(result.start_offset, result.state_epoch, tuple(
            StateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
            for b in result.state_batches))

    def write(self, key: ShareKey, start_offset: int, batches: Iterable[StateBatch], delivery_complete_count: int = -1,
              state_epoch: int | None = None, leader_epoch: int = NO_LEADER_EPOCH) -> None:
        group_id, topic_id, partition = key
        self._call(key, WriteShareGroupStateRequest(group_id=group_id, topics=[
            WriteShareGroupStateRequest.WriteStateData(topic_id=topic_id, partitions=[
                WriteShareGroupStateRequest.PartitionData(
                    partition=partition, state_epoch=state_epoch or 0, leader_epoch=leader_epoch,
                    start_offset=start_offset, delivery_complete_count=delivery_complete_count,
                    state_batches=[WriteShareGroupStateRequest.StateBatch(
                        first_offset=b.first_offset, last_offset=b.last_offset, delivery_state=b.delivery_state,
                        delivery_count=b.delivery_count) for b in batches])])]), WRITE_VERSION)

    def initialize(self, key: ShareKey, state_epoch: int, start_offset: int) -> None:
        group_id, topic_id, partition = key
        self._call(key, InitializeShareGroupStateRequest(group_id=group_id, topics=[
            InitializeShareGroupStateRequest.InitializeStateData(topic_id=topic_id, partitions=[
                InitializeShareGroupStateRequest.PartitionData(partition=partition, state_epoch=state_epoch,
                                                               start_offset=start_offset)])]), STATE_VERSION)

    def summaries(self, group_id: str, partitions: Iterable[tuple[bytes, int]]) -> dict[tuple[bytes, int], ShareState]:
        """The start offset and done count of the group's share-partitions named (ReadShareGroupStateSummary of
        each: the group coordinator names those it initialised, as Kafka's does); one without state is left out."""
        states = {}
        for topic_id, partition in partitions:
            result = self._call((group_id, topic_id, partition), ReadShareGroupStateSummaryRequest(
                group_id=group_id, topics=[ReadShareGroupStateSummaryRequest.ReadStateSummaryData(
                    topic_id=topic_id, partitions=[ReadShareGroupStateSummaryRequest.PartitionData(
                        partition=partition, leader_epoch=NO_LEADER_EPOCH)])]), SUMMARY_VERSION)
            states[(topic_id, partition)] = ShareState(result.start_offset, result.state_epoch,
                                                       delivery_complete_count=result.delivery_complete_count)
        return states

    def delete(self, keys: Iterable[ShareKey]) -> None:
        for key in keys:
            group_id, topic_id, partition = key
            self._call(key, DeleteShareGroupStateRequest(group_id=group_id, topics=[
                DeleteShareGroupStateRequest.DeleteStateData(topic_id=topic_id, partitions=[
                    DeleteShareGroupStateRequest.PartitionData(partition=partition)])]), STATE_VERSION)

    # ---- one RPC, with its coordinator found and its retries ---------------------------------------------------

    def _call(self, key: ShareKey, request: Message, version: int, answered: frozenset[int] = frozenset()) -> Any:
        """The key's partition result, once its coordinator answers without a retriable error (or with one of the
        `answered` errors, which the caller reads)."""
        name = coordinator_key(key)
        backoff = self._backoff_s
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self._lock:
                    if self._stopped.is_set():
                        raise CoordinatorNotAvailableError(f"the broker is shutting down: no {type(request).__name__}")
                    return self._attempt(name, request, version, answered)
            except _Again as again:
                if attempt == MAX_ATTEMPTS:
                    log.warning("%s for share-partition %s failed %d times (last: %s); giving up", type(request).__name__,
                                name, attempt, again)
                    raise CoordinatorNotAvailableError(f"the share coordinator of {name} did not answer: {again}"
                                                       ) from None
                log.info("%s for share-partition %s: %s; retrying in %d ms", type(request).__name__, name, again,
                         round(backoff * 1000))
            self._stopped.wait(backoff)
            backoff = min(backoff * 2, REQUEST_BACKOFF_MAX_MS / 1000)
        raise AssertionError("unreachable")

    def _attempt(self, name: str, request: Message, version: int, answered: frozenset[int]) -> Any:
        coordinator = self._coordinators.get(name) or self._find(name)
        try:
            response = self._client(coordinator).send(request, version, self._timeout_s)
        except BrokerUnreachable as exc:
            self._coordinators.pop(name, None)
            raise _Again(f"broker {coordinator[0]} unreachable ({exc})") from None
        result = response.results[0].partitions[0]
        if result.error_code == ErrorCode.NONE or result.error_code in answered:
            return result
        if result.error_code in FIND_AGAIN:
            self._coordinators.pop(name, None)
        if result.error_code in FIND_AGAIN or result.error_code in ASK_AGAIN:
            raise _Again(f"broker {coordinator[0]} answered {ErrorCode(result.error_code).name}")
        raise error_class(result.error_code)(result.error_message or "")

    def _find(self, name: str) -> Endpoint:
        """FindCoordinator(SHARE) asked of this broker: the key's share coordinator on the inter-broker listener."""
        own = self._own_endpoint()
        if own is None:
            raise _Again("this broker has no inter-broker endpoint yet")
        try:
            response = self._client(own).send(FindCoordinatorRequest(key_type=SHARE_KEY_TYPE, coordinator_keys=[name]),
                                              FIND_COORDINATOR_VERSION, self._timeout_s)
        except BrokerUnreachable as exc:
            raise _Again(f"FindCoordinator unanswered ({exc})") from None
        found = response.coordinators[0]
        if found.error_code != ErrorCode.NONE:
            raise _Again(f"FindCoordinator answered {ErrorCode(found.error_code).name}")
        endpoint = self._coordinators[name] = (found.node_id, found.host, found.port)
        return endpoint

    def _client(self, endpoint: Endpoint) -> BrokerClient:
        client = self._clients.get(endpoint)
        if client is None:
            client = self._clients[endpoint] = BrokerClient(endpoint[1], endpoint[2], self._client_id, self._timeout_s,
                                                            security=self._security)
        return client
