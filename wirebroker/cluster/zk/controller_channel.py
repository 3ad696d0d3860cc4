"""The controller's connections to the brokers (Kafka's ControllerChannelManager and RequestSendThread).

Per live broker one queue and one sender thread with its own BrokerClient on the inter-broker listener: requests to
one broker leave in the order the controller queued them, and a slow or dead broker holds up nobody else. A request
that cannot be delivered (connection refused, timeout) is retried after a short backoff for as long as the broker
stays registered; when the controller learns the broker is gone (its /brokers/ids znode vanished) it removes it
here, which ends the thread and drops what was still queued, as Kafka does. A response goes to the callback queued
with the request, on the sender thread: callbacks that touch controller state hand the work to the controller's
event thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from wirebroker.cluster.zk.controller_requests import endpoint_for
from wirebroker.cluster.zk.data import BrokerInfo
from wirebroker.network.broker_client import BrokerClient, BrokerUnreachable
from wirebroker.network.client_security import ClientSecurity
from wirebroker.protocol.message import Message

log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.1  # Kafka's RequestSendThread waits 100 ms before it sends a failed request again
REQUEST_TIMEOUT_S = 30.0  # Kafka's controller.socket.timeout.ms

Callback = Callable[[Message], None]


@dataclass(frozen=True)
class _QueueItem:
    request: Message
    version: int
    callback: Callback | None


_STOP = object()


class _RequestSendThread:
    """Sends one broker's queue, in order, each request until it is answered or the broker is removed."""

    def __init__(self, controller_id: int, info: BrokerInfo, listener_name: str | None,
                 security: ClientSecurity | None = None) -> None:
        endpoint = endpoint_for(info, listener_name)
        self.broker_id = info.broker_id
        self.queue: queue.Queue[_QueueItem | object] = queue.Queue()
        self.client = BrokerClient(endpoint.host, endpoint.port, f"controller-{controller_id}",
                                   timeout_s=REQUEST_TIMEOUT_S, security=security)
        self._running = threading.Event()
        self._running.set()
        self.thread = threading.Thread(target=self._run, name=f"controller-{controller_id}-to-broker-{info.broker_id}",
                                       daemon=True)

    def stop(self) -> None:
        self._running.clear()
        self.queue.put(_STOP)

    def _run(self) -> None:
        while self._running.is_set():
            item = self.queue.get()
            if item is _STOP:
                break
            response = self._send_until_answered(item)
            if response is not None and item.callback is not None:
                try:
                    item.callback(response)
                except Exception:
                    log.exception("Controller callback for %s to broker %d failed", type(item.request).__name__,
                                  self.broker_id)
        self.client.close()

    def _send_until_answered(self, item: _QueueItem) -> Message | None:
        failures = 0
        while self._running.is_set():
            try:
                return self.client.send(item.request, item.version)
            except BrokerUnreachable as exc:
                failures += 1
                if failures == 1 or failures % 50 == 0:  # once, then every ~5 s: a dead broker is removed soon
                    log.warning("Controller's %s to broker %d failed (%s); retrying every %.1fs while it is "
                                "registered", type(item.request).__name__, self.broker_id, exc, RETRY_BACKOFF_S)
                time.sleep(RETRY_BACKOFF_S)
        return None


class ControllerChannelManager:
    def __init__(self, controller_id: int, listener_name: str | None, security: ClientSecurity | None = None) -> None:
        self.controller_id = controller_id
        self.listener_name = listener_name
        self._security = security  # TLS/SASL to a secured inter-broker listener
        self._senders: dict[int, _RequestSendThread] = {}
        self._lock = threading.Lock()

    def add_broker(self, info: BrokerInfo) -> None:
        """Open a channel to a broker that registered (a re-registered one gets a fresh channel)."""
        self.remove_broker(info.broker_id)
        sender = _RequestSendThread(self.controller_id, info, self.listener_name, self._security)
        with self._lock:
            self._senders[info.broker_id] = sender
        sender.thread.start()

    def remove_broker(self, broker_id: int) -> None:
        """Close the channel of a broker that left: its thread ends, its queued requests are dropped."""
        with self._lock:
            sender = self._senders.pop(broker_id, None)
        if sender is not None:
            sender.stop()

    def send(self, broker_id: int, request: Message, version: int, callback: Callback | None = None) -> None:
        """Queue `request` for `broker_id`; ignored (with a log line) when the broker has no channel."""
        with self._lock:
            sender = self._senders.get(broker_id)
        if sender is None:
            log.info("Controller %d not sending %s to broker %d: it is not registered", self.controller_id,
                     type(request).__name__, broker_id)
            return
        sender.queue.put(_QueueItem(request, version, callback))

    def shutdown(self) -> None:
        with self._lock:
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.stop()
