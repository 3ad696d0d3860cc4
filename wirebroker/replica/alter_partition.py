"""The leader's channel to the controller for ISR changes (Kafka's AlterPartitionManager).

A partition leader proposes a new ISR with `submit(partition, proposed_isr)`; one sender thread batches every
proposal waiting into one AlterPartition v2 request (topics by id; each partition carries the leader epoch and the
partition epoch the proposal is based on, and the new ISR) to the current controller, found through
`controller_endpoint()` (the metadata cache: controller id and its inter-broker endpoint). Per-partition answers go
back to `Partition.on_alter_partition_response`: the committed ISR and partition epoch, or an error
(INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, ...) that drops the proposal. A controller that is unknown,
unreachable or answers a top-level error (NOT_CONTROLLER, STALE_BROKER_EPOCH) is retried after
`retry_backoff_ms`, with the proposals kept; a newer proposal for a partition replaces a queued one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.network.client_security import ClientSecurity
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.alter_partition import (
    AlterPartitionRequest,
    AlterPartitionResponse,
)
from wirebroker.replica.partition import LeaderAndIsr, Partition

log = logging.getLogger(__name__)

ALTER_PARTITION_VERSION = 2  # topic ids, new_isr as broker ids (v3 adds broker epochs per ISR member)
LEADER_RECOVERY_RECOVERED = 0
RETRY_BACKOFF_MS = 100  # Kafka's AlterPartitionManager retries after 50-500 ms

# (controller id, host, port), or None while no controller is known
ControllerEndpoint = Callable[[], tuple[int, str, int] | None]


class AlterPartitionManager:
    def __init__(self, node_id: int, controller_endpoint: ControllerEndpoint,
                 broker_epoch: Callable[[], int] = lambda: -1, request_timeout_ms: int = 30000,
                 retry_backoff_ms: int = RETRY_BACKOFF_MS, security: ClientSecurity | None = None) -> None:
        self.node_id = node_id
        self._security = security  # TLS/SASL to a secured inter-broker listener
        self._controller_endpoint = controller_endpoint
        self.broker_epoch = broker_epoch  # the ZooKeeper registration's czxid, once registered
        self._timeout_s = request_timeout_ms / 1000
        self._backoff_s = retry_backoff_ms / 1000
        self._pending: dict[tuple[str, int], tuple[Partition, tuple[int, ...]]] = {}
        self._wakeup = threading.Condition()
        self._running = True
        self._client: BrokerClient | None = None
        self._client_controller: tuple[int, str, int] | None = None
        self._thread = threading.Thread(target=self._run, name="alter-partition-sender", daemon=True)
        self._thread.start()

    def submit(self, partition: Partition, proposed_isr: tuple[int, ...]) -> None:
        with self._wakeup:
            self._pending[(partition.topic, partition.index)] = (partition, proposed_isr)
            self._wakeup.notify()

    def shutdown(self) -> None:
        with self._wakeup:
            self._running = False
            self._wakeup.notify()
        if self._client is not None:
            self._client.close()

    def _run(self) -> None:
        while True:
            with self._wakeup:
                while self._running and not self._pending:
                    self._wakeup.wait()
                if not self._running:
                    return
                batch = dict(self._pending)
            if not self._send(batch):
                with self._wakeup:
                    self._wakeup.wait(self._backoff_s)

    def _send(self, batch: dict[tuple[str, int], tuple[Partition, tuple[int, ...]]]) -> bool:
        """One AlterPartition round trip for `batch`; False when it must be retried."""
        client = self._controller_client()
        if client is None:
            log.debug("no controller known yet; %d ISR proposals wait", len(batch))
            return False
        request = _request(self.node_id, self.broker_epoch(), batch.values())
        try:
            response = client.send(request, ALTER_PARTITION_VERSION, self._timeout_s)
        except BrokerUnreachable as exc:
            log.warning("AlterPartition to controller %s failed (%s); retrying", self._client_controller, exc)
            return False
        assert isinstance(response, AlterPartitionResponse)
        if response.error_code:
            log.warning("Controller %s refused AlterPartition for %d partitions: %s; retrying",
                        self._client_controller, len(batch), ErrorCode(response.error_code).name)
            return False
        with self._wakeup:
            for key, sent in batch.items():
                if self._pending.get(key) is sent:
                    del self._pending[key]
        by_id = {(p.topic_id, p.index): (p, proposed) for p, proposed in batch.values()}
        for topic in response.topics:
            for answer in topic.partitions:
                entry = by_id.pop((topic.topic_id, answer.partition_index), None)
                if entry is None:
                    continue
                partition, proposed = entry
                result = None if answer.error_code else LeaderAndIsr(answer.leader_id, answer.leader_epoch,
                                                                     tuple(answer.isr), answer.partition_epoch)
                partition.on_alter_partition_response(proposed, answer.error_code, result)
        for partition, proposed in by_id.values():  # the controller said nothing of it: try again from scratch
            partition.on_alter_partition_response(proposed, ErrorCode.UNKNOWN_SERVER_ERROR, None)
        return True

    def _controller_client(self) -> BrokerClient | None:
        controller = self._controller_endpoint()
        if controller != self._client_controller:
            if self._client is not None:
                self._client.close()
            self._client = None if controller is None else BrokerClient(
                controller[1], controller[2], f"broker-{self.node_id}-alter-partition", self._timeout_s,
                security=self._security)
            self._client_controller = controller
        return self._client


def _request(node_id: int, broker_epoch: int, proposals) -> AlterPartitionRequest:
    topics: dict[bytes, AlterPartitionRequest.TopicData] = {}
    for partition, proposed in proposals:
        topic = topics.setdefault(partition.topic_id, AlterPartitionRequest.TopicData(topic_id=partition.topic_id))
        topic.partitions.append(AlterPartitionRequest.PartitionData(
            partition_index=partition.index, leader_epoch=partition.leader_epoch, new_isr=list(proposed),
            leader_recovery_state=LEADER_RECOVERY_RECOVERED, partition_epoch=partition.partition_epoch))
    return AlterPartitionRequest(broker_id=node_id, broker_epoch=broker_epoch, topics=list(topics.values()))
