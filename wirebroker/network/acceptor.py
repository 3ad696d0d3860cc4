"""Acceptor threads (Kafka's Acceptor): one per listening socket, dealing connections out to the processors in turn.

Each acceptor blocks in accept() rather than polling a selector: a thread already waiting in the kernel takes each
connection the moment its handshake completes, while a select loop that must first win the GIL lets a burst of
clients overflow a listen backlog of Kafka's size (50) and wait a second for their SYN to be retried.

Each accepted socket is made non-blocking with TCP_NODELAY and SO_KEEPALIVE (as Kafka does) and the configured send
buffer; the receive buffer comes from the listening socket. At max.connections the acceptor waits for a slot
before accepting again, leaving new clients in the listen backlog; over max.connection.creation.rate it waits out the
throttle; a connection over max.connections.per.ip is closed at once, one over its IP's connection_creation_rate
once its throttle time is over (Kafka's DelayedCloseSocket).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import socket
import threading
import time
from collections.abc import Sequence

from wirebroker.network.connection import format_address
from wirebroker.network.connection_quotas import ConnectionQuotas, ConnectionRefused
from wirebroker.network.processor import Processor

log = logging.getLogger(__name__)

ACCEPT_ERROR_BACKOFF_SECONDS = 0.1  # after a failed accept (e.g. out of file descriptors) before trying again


class Acceptor(threading.Thread):
    def __init__(
        self,
        listen_socket: socket.socket,
        listener: str,
        processors: Sequence[Processor],
        quotas: ConnectionQuotas,
        *,
        send_buffer_bytes: int = -1,
    ) -> None:
        self._address = format_address(listen_socket.getsockname())
        super().__init__(name=f"wirebroker-acceptor-{self._address}", daemon=True)
        self._listen_socket = listen_socket
        self._listener = listener  # its name (PLAINTEXT, INTERNAL, ...): requests say which listener they came by
        self._processors = list(processors)
        self._quotas = quotas
        self._send_buffer_bytes = send_buffer_bytes
        self._next_processor = 0
        # Connections over their IP's creation rate, closed when their throttle ends: (when, sequence, socket).
        self._throttled: list[tuple[float, int, socket.socket]] = []
        self._sequence = itertools.count()
        self._running = True

    def stop(self) -> None:
        """Stop accepting: wakes the blocked accept(); the thread closes the listening socket on its way out."""
        self._running = False
        self._quotas.close()
        try:
            self._listen_socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # not every platform wakes accept() this way; close() below is what matters then

    def run(self) -> None:
        try:
            while self._quotas.wait_for_slot() and self._running:
                try:
                    self._accept_one()
                except Exception:
                    log.exception("Acceptor on %s got an unexpected error; it keeps running", self._address)
        finally:
            self._listen_socket.close()
            for _, _, sock in self._throttled:
                sock.close()

    def _close_throttled(self) -> None:
        """Close the connections whose IP was over its creation rate once their throttle is over; accept() waits
        no longer than the next of them."""
        now = time.monotonic()
        while self._throttled and self._throttled[0][0] <= now:
            heapq.heappop(self._throttled)[2].close()
        self._listen_socket.settimeout(self._throttled[0][0] - now if self._throttled else None)

    def _accept_one(self) -> None:
        if self._throttled or self._listen_socket.gettimeout() is not None:
            self._close_throttled()
        try:
            sock, _ = self._listen_socket.accept()
        except TimeoutError:
            return  # a throttled connection is due to be closed
        except OSError as e:
            if self._running:
                log.error("Error while accepting connection on %s: %s", self._address, e)
                time.sleep(ACCEPT_ERROR_BACKOFF_SECONDS)
            return
        try:
            self._configure(sock)
            ip = sock.getpeername()[0]
        except OSError as e:
            log.debug("Dropping a connection the client closed while it was being set up: %s", e)
            sock.close()
            return
        try:
            self._quotas.inc(sock, ip)
        except ConnectionRefused as e:
            if e.throttle_ms:
                log.debug("%s", e)
                heapq.heappush(self._throttled, (time.monotonic() + e.throttle_ms / 1000, next(self._sequence), sock))
            else:
                log.info("%s", e)
                sock.close()
            return
        processor = self._processors[self._next_processor]
        self._next_processor = (self._next_processor + 1) % len(self._processors)
        processor.accept(sock, self._listener)

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self._send_buffer_bytes != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer_bytes)
