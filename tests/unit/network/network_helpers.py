"""A real socket server on 127.0.0.1 and blocking client helpers for the network tests."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from wirebroker.network.handler_pool import HandlerPool
from wirebroker.network.request_channel import Request, RequestChannel, Response
from wirebroker.network.socket_server import SocketServer

SIZE = struct.Struct(">i")
CLIENT_TIMEOUT = 5.0


def echo(request: Request) -> Response:
    """Answer with the request's own payload, framed."""
    return Response(request, [SIZE.pack(len(request.frame)), request.frame])


@dataclass
class Broker:
    channel: RequestChannel
    server: SocketServer
    pool: HandlerPool

    @property
    def port(self) -> int:
        return self.server.bound_ports()[0]

    def connect(self, host: str = "127.0.0.1") -> socket.socket:
        sock = socket.create_connection((host, self.port), timeout=CLIENT_TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock


@contextmanager
def running_broker(
    handler: Callable[[Request], Response | None] = echo,
    *,
    num_io_threads: int = 2,
    max_queued: int = 500,
    host: str = "127.0.0.1",
    **server_options,
) -> Iterator[Broker]:
    channel = RequestChannel(max_queued=max_queued)
    server_options.setdefault("num_network_threads", 1)
    server = SocketServer([("PLAINTEXT", host, 0)], channel, **server_options)
    pool = HandlerPool(channel, handler, num_threads=num_io_threads)
    server.start()
    pool.start()
    try:
        yield Broker(channel, server, pool)
    finally:
        server.shutdown()
        pool.shutdown()


def frame(payload: bytes) -> bytes:
    return SIZE.pack(len(payload)) + payload


def recv_exactly(sock: socket.socket, count: int) -> bytes:
    chunks = []
    while count:
        chunk = sock.recv(min(count, 1 << 20))
        if not chunk:
            raise EOFError(f"connection closed with {count} bytes still expected")
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> bytes:
    (size,) = SIZE.unpack(recv_exactly(sock, SIZE.size))
    return recv_exactly(sock, size)


def request_reply(sock: socket.socket, payload: bytes) -> bytes:
    sock.sendall(frame(payload))
    return recv_frame(sock)


def is_closed_by_peer(sock: socket.socket, timeout: float = CLIENT_TIMEOUT) -> bool:
    """True if the server closes `sock` within `timeout` (EOF or reset), False if it stays silent and open."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def wait_until(predicate: Callable[[], bool], timeout: float = CLIENT_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.005)


class Gate:
    """Holds handler threads until opened; counts how many are waiting."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._lock = threading.Lock()
        self.arrived: list[bytes] = []

    def pass_through(self, request: Request) -> None:
        with self._lock:
            self.arrived.append(bytes(request.frame))
        assert self._open.wait(CLIENT_TIMEOUT)

    def open(self) -> None:
        self._open.set()
