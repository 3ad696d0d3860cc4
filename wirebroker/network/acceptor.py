"""The acceptor thread (Kafka's Acceptor): accepts connections on every listening socket and deals them out to
the network processors in turn.

Each accepted socket is made non-blocking with TCP_NODELAY and SO_KEEPALIVE (as Kafka does) and the configured send
buffer; the receive buffer comes from the listening socket. At max.connections the acceptor waits for a slot
before accepting again, leaving new clients in the listen backlog.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time
from collections.abc import Sequence

from wirebroker.network.connection_quotas import ConnectionQuotas
from wirebroker.network.processor import Processor
from wirebroker.network.wakeup import Wakeup

log = logging.getLogger(__name__)

ACCEPT_ERROR_BACKOFF_SECONDS = 0.1  # after a failed accept (e.g. out of file descriptors) the socket stays readable


class Acceptor(threading.Thread):
    def __init__(
        self,
        listen_sockets: Sequence[socket.socket],
        processors: Sequence[Processor],
        quotas: ConnectionQuotas,
        *,
        send_buffer_bytes: int = -1,
    ) -> None:
        super().__init__(name="wirebroker-acceptor", daemon=True)
        self._listen_sockets = list(listen_sockets)
        self._processors = list(processors)
        self._quotas = quotas
        self._send_buffer_bytes = send_buffer_bytes
        self._selector = selectors.DefaultSelector()
        self._wakeup = Wakeup()
        self._wakeup.register(self._selector)
        for sock in self._listen_sockets:
            self._selector.register(sock, selectors.EVENT_READ)
        self._next_processor = 0
        self._running = True

    def stop(self) -> None:
        """Stop accepting; the thread closes the listening sockets on its way out."""
        self._running = False
        self._quotas.close()
        self._wakeup.wakeup()

    def run(self) -> None:
        try:
            while self._running:
                try:
                    self._accept_ready()
                except Exception:
                    log.exception("Acceptor got an unexpected error; it keeps running")
        finally:
            for sock in self._listen_sockets:
                sock.close()
            self._selector.close()
            self._wakeup.close()

    def _accept_ready(self) -> None:
        for key, _ in self._selector.select():
            if key.data is self._wakeup:
                self._wakeup.clear()
            elif self._quotas.wait_for_slot() and self._running:
                self._accept(key.fileobj)

    def _accept(self, listen_socket: socket.socket) -> None:
        try:
            sock, _ = listen_socket.accept()
        except BlockingIOError:
            return
        except OSError as e:
            log.error("Error while accepting connection on %s: %s", listen_socket.getsockname(), e)
            time.sleep(ACCEPT_ERROR_BACKOFF_SECONDS)
            return
        try:
            self._configure(sock)
        except OSError as e:
            log.debug("Dropping a connection the client closed while it was being set up: %s", e)
            sock.close()
            return
        self._quotas.inc()
        processor = self._processors[self._next_processor]
        self._next_processor = (self._next_processor + 1) % len(self._processors)
        processor.accept(sock)

    def _configure(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if self._send_buffer_bytes != -1:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self._send_buffer_bytes)
