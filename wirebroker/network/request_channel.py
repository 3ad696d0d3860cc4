"""The seam between network threads and request handlers (Kafka's RequestChannel).

Processors put each complete request frame into a bounded queue (`queued.max.requests`); handler threads take them
out, and every answer comes back through `send_response`, which hands it to the processor that owns the connection
and wakes that processor's selector.

Back-pressure: when the queue is full `send_request` refuses the request instead of blocking (Kafka's processor
blocks in `put`); the processor keeps it, stops reading from its sockets, and is woken to retry as soon as a handler
takes a request out.

With no handler threads (`set_inline_handler`) `send_request` calls the handler directly on the network thread:
no queue, no hand-off between threads.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

QUEUED_MAX_REQUESTS = 500  # Kafka's default queued.max.requests


@dataclass(slots=True, eq=False)
class Request:
    """One request frame as read off a connection; the header is not decoded here."""

    processor: int  # id of the network processor that owns the connection
    connection_id: str  # Kafka's "localHost:localPort-remoteHost:remotePort-index", unique while the broker runs
    client_address: str  # "host:port" of the peer ("[host]:port" for IPv6)
    frame: memoryview  # the payload (request header, then body), writable, owned by this request
    received_ns: int  # time.monotonic_ns() when the last byte arrived
    listener: str = ""  # the name of the listener the connection came in by (Kafka's ListenerName)
    principal: str = "User:ANONYMOUS"  # who the connection authenticated as (Kafka's KafkaPrincipal, "type:name")
    security_protocol: str = "PLAINTEXT"  # the listener's: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    context: Any = field(default=None)  # free for the dispatcher (decoded header, principal, ...)


@dataclass(slots=True, eq=False)
class Response:
    """What to do with a connection once its request has been handled.

    parts: written in order; bytes-like parts are sent as they are, any other part is a file range with attributes
    `fileno`, `position` and `size` (protocol.records.FileRegion) sent with os.sendfile. None: send nothing and read
    the next request (produce with acks=0).
    close_connection: close the connection after writing `parts` (at once if there are none).
    throttle_ms: keep the connection muted this long after `parts` are written (a client over its quota).
    """

    request: Request
    parts: Sequence[Any] | None
    close_connection: bool = False
    throttle_ms: int = 0


class ResponseReceiver(Protocol):
    """A network processor as the channel sees it."""

    id: int

    def enqueue_response(self, response: Response) -> None: ...

    def wakeup(self) -> None: ...


class RequestChannel:
    """Bounded request queue plus the route back to each request's processor."""

    def __init__(self, max_queued: int = QUEUED_MAX_REQUESTS) -> None:
        if max_queued < 1:
            raise ValueError(f"queued.max.requests must be >= 1, got {max_queued}")
        self.max_queued = max_queued
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._queue: deque[Request | None] = deque()  # None: a handler thread is asked to stop
        self._waiting_processors: set[int] = set()  # refused by a full queue; woken when a slot frees
        self._processors: dict[int, ResponseReceiver] = {}
        self._inline_handler: Callable[[Request], None] | None = None
        # Told the id of each connection that closes (share sessions end with their connection, as Kafka's
        # connectionDisconnectListeners); called on the network thread, so a listener must not block.
        self.connection_close_listeners: list[Callable[[str], None]] = []

    def connection_closed(self, connection_id: str) -> None:
        for listener in self.connection_close_listeners:
            listener(connection_id)

    def register_processor(self, processor: ResponseReceiver) -> None:
        with self._lock:
            if processor.id in self._processors:
                raise ValueError(f"processor id {processor.id} is already registered")
            self._processors[processor.id] = processor

    def unregister_processor(self, processor_id: int) -> None:
        with self._lock:
            self._processors.pop(processor_id, None)
            self._waiting_processors.discard(processor_id)

    def set_inline_handler(self, handler: Callable[[Request], None] | None) -> None:
        """Handle every request on the network thread that read it (None: queue them again)."""
        with self._lock:
            self._inline_handler = handler

    def send_request(self, request: Request) -> bool:
        """Hand a request to the handlers; False if the queue is full (the caller is woken when it has room)."""
        inline = self._inline_handler  # set once as the handler pool starts and stops: read without the lock
        if inline is not None:
            inline(request)
            return True
        with self._lock:
            if len(self._queue) >= self.max_queued:
                self._waiting_processors.add(request.processor)
                return False
            self._queue.append(request)
            self._not_empty.notify()
            return True

    def receive_request(self, timeout: float | None = None) -> Request | None:
        """The oldest queued request; None on timeout or when this handler thread is asked to stop."""
        with self._not_empty:
            if not self._not_empty.wait_for(lambda: self._queue, timeout):
                return None
            request = self._queue.popleft()
            if self._waiting_processors:
                to_wake = [self._processors[i] for i in self._waiting_processors if i in self._processors]
                self._waiting_processors.clear()
            else:
                to_wake = []
        for processor in to_wake:
            processor.wakeup()
        return request

    def send_shutdown_requests(self, count: int) -> None:
        """Ask `count` handler threads to stop once they reach this point of the queue (Kafka's ShutdownRequest)."""
        with self._lock:
            self._queue.extend([None] * count)
            self._not_empty.notify(count)

    def send_response(self, response: Response) -> None:
        """Route a response to the processor owning its connection; callable from any thread."""
        processor = self._processors.get(response.request.processor)
        if processor is None:
            log.debug("Dropping response for %s: its network processor has stopped", response.request.client_address)
            return
        processor.enqueue_response(response)

    @property
    def queue_size(self) -> int:
        return len(self._queue)
