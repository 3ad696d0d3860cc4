"""The socket server (Kafka's SocketServer): listening sockets, an acceptor thread each, N network processor threads.

    channel = RequestChannel(max_queued=500)
    server = SocketServer([("PLAINTEXT", "127.0.0.1", 0)], channel, num_network_threads=1)
    pool = HandlerPool(channel, handler=dispatch, num_threads=8)
    server.start(); pool.start()
    ...
    server.shutdown(); pool.shutdown()

Limits and their Kafka config keys are the keyword arguments; each default is Kafka's.
"""

from __future__ import annotations

import logging
import resource
import socket
from collections.abc import Mapping, Sequence
from typing import Any

from wirebroker.network.acceptor import Acceptor
from wirebroker.network.connection_quotas import (
    MAX_CONNECTION_CREATION_RATE,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_IP,
    ConnectionQuotas,
)
from wirebroker.network.listeners import SOCKET_LISTEN_BACKLOG_SIZE, open_listener
from wirebroker.network.processor import Processor
from wirebroker.network.request_channel import RequestChannel

log = logging.getLogger(__name__)

NUM_NETWORK_THREADS = 1  # the broker's num.network.threads (Kafka's is 3: see config.py)
SOCKET_REQUEST_MAX_BYTES = 100 * 1024 * 1024  # Kafka's default socket.request.max.bytes
CONNECTIONS_MAX_IDLE_MS = 10 * 60 * 1000  # Kafka's default connections.max.idle.ms
SOCKET_SEND_BUFFER_BYTES = 100 * 1024  # Kafka's default socket.send.buffer.bytes (-1: the OS default)
SOCKET_RECEIVE_BUFFER_BYTES = 100 * 1024  # Kafka's default socket.receive.buffer.bytes (-1: the OS default)
_UNLIMITED_FILES_CAP = 1 << 20  # soft limit to use when the hard one is "unlimited" (Linux's default nr_open)


class SocketServer:
    def __init__(
        self,
        listeners: Sequence[tuple[str, str, int]],  # (name, host, port), Kafka's EndPoint
        channel: RequestChannel,
        *,
        num_network_threads: int = NUM_NETWORK_THREADS,
        socket_request_max_bytes: int = SOCKET_REQUEST_MAX_BYTES,
        connections_max_idle_ms: int = CONNECTIONS_MAX_IDLE_MS,
        socket_send_buffer_bytes: int = SOCKET_SEND_BUFFER_BYTES,
        socket_receive_buffer_bytes: int = SOCKET_RECEIVE_BUFFER_BYTES,
        socket_listen_backlog_size: int = SOCKET_LISTEN_BACKLOG_SIZE,
        max_connections: int = MAX_CONNECTIONS,
        max_connections_per_ip: int = MAX_CONNECTIONS_PER_IP,
        max_connections_per_ip_overrides: Mapping[str, int] | None = None,  # IP -> its own maximum
        max_connection_creation_rate: int = MAX_CONNECTION_CREATION_RATE,
        listener_security: Mapping[str, Any] | None = None,  # name -> ListenerSecurity, for non-PLAINTEXT listeners
    ) -> None:
        if not listeners:
            raise ValueError("at least one listener (name, host, port) is needed")
        if num_network_threads < 1:
            raise ValueError(f"num.network.threads must be >= 1, got {num_network_threads}")
        self._listeners = list(listeners)
        self._channel = channel
        self._num_network_threads = num_network_threads
        self._socket_request_max_bytes = socket_request_max_bytes
        self._connections_max_idle_ms = connections_max_idle_ms
        self._socket_send_buffer_bytes = socket_send_buffer_bytes
        self._socket_receive_buffer_bytes = socket_receive_buffer_bytes
        self._socket_listen_backlog_size = socket_listen_backlog_size
        self.connection_quotas = ConnectionQuotas(max_connections, max_connections_per_ip=max_connections_per_ip,
                                                  per_ip_overrides=max_connections_per_ip_overrides,
                                                  max_connection_creation_rate=max_connection_creation_rate)
        self._listener_security = listener_security
        self._listen_sockets: list[list[socket.socket]] = []  # per listener
        self._bound_addresses: list[list[tuple[str, int]]] = []  # per listener, kept after shutdown for logs
        self._processors: list[Processor] = []
        self._acceptors: list[Acceptor] = []

    def start(self) -> None:
        """Bind every listener and start serving; raises OSError if a listener cannot be bound."""
        if self._processors:
            raise RuntimeError("the socket server is already started")
        raise_open_files_limit()
        try:
            for _, host, port in self._listeners:
                self._listen_sockets.append(
                    open_listener(
                        host,
                        port,
                        backlog=self._socket_listen_backlog_size,
                        receive_buffer_bytes=self._socket_receive_buffer_bytes,
                    )
                )
        except OSError:
            self._close_listen_sockets()
            raise
        self._bound_addresses = [[sock.getsockname()[:2] for sock in socks] for socks in self._listen_sockets]
        self._processors = [
            Processor(
                processor_id,
                self._channel,
                self.connection_quotas,
                max_request_size=self._socket_request_max_bytes,
                connections_max_idle_ms=self._connections_max_idle_ms,
                listener_security=self._listener_security,
            )
            for processor_id in range(self._num_network_threads)
        ]
        for processor in self._processors:
            self._channel.register_processor(processor)
            processor.start()
        self._acceptors = [
            Acceptor(sock, name, self._processors, self.connection_quotas,
                     send_buffer_bytes=self._socket_send_buffer_bytes)
            for (name, _, _), socks in zip(self._listeners, self._listen_sockets, strict=True)
            for sock in socks
        ]
        for acceptor in self._acceptors:
            acceptor.start()

    def bound_ports(self) -> list[int]:
        """The port each listener is bound to, in the order the listeners were given."""
        return [addresses[0][1] for addresses in self._bound_addresses]

    def bound_addresses(self) -> list[list[tuple[str, int]]]:
        """Every (address, port) each listener is bound to (localhost has two)."""
        return [list(addresses) for addresses in self._bound_addresses]

    @property
    def connection_count(self) -> int:
        """Connections accepted and not yet closed, across all processors."""
        return self.connection_quotas.count

    def connections_per_listener(self) -> dict[str, int]:
        """Open connections by listener name, every listener named (Kafka's connection-count per listener)."""
        counts = {name: 0 for name, _, _ in self._listeners}
        for processor in list(self._processors):
            for listener, count in processor.connections_per_listener().items():
                counts[listener] = counts.get(listener, 0) + count
        return counts

    def shutdown(self) -> None:
        """Stop accepting, close every connection, and wait for the threads; safe to call more than once."""
        for acceptor in self._acceptors:
            acceptor.stop()
        for acceptor in self._acceptors:
            acceptor.join()
        self._acceptors = []
        for processor in self._processors:
            processor.stop()
        for processor in self._processors:
            processor.join()
            self._channel.unregister_processor(processor.id)
        self._processors = []
        self._close_listen_sockets()

    def _close_listen_sockets(self) -> None:
        for socks in self._listen_sockets:
            for sock in socks:
                sock.close()


def raise_open_files_limit() -> None:
    """Lift the soft RLIMIT_NOFILE to the hard limit: each connection holds a file descriptor."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _UNLIMITED_FILES_CAP if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as e:
            log.warning("Could not raise the open files limit from %d to %d (%s); the broker may refuse "
                        "connections beyond it", soft, target, e)
