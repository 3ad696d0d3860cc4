"""A blocking client for one broker-to-broker connection (Kafka's BlockingSend / NetworkClient for inter-broker use).

Follower fetchers and the controller's request channel each own one `BrokerClient` per remote broker and use it
from one thread: `send(request, version)` writes one size-prefixed request and waits for its response. A connection
that fails or times out is closed and reopened by the next `send`, so callers retry by calling again; they see
`BrokerUnreachable`, never a half-read frame. A response frame larger than `max_response_bytes` closes the
connection before anything is allocated for it.
"""

from __future__ import annotations

import logging
import socket
import struct

from wirebroker.network.client_security import ClientSecurity
from wirebroker.protocol.api_messages import response_class
from wirebroker.protocol.headers import request_header_version, response_header_version
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages.request_header import RequestHeader
from wirebroker.protocol.primitives import DecodeError, read_uvarint

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_CORRELATION_ID = struct.Struct(">i")
# A fetch response carries at most replica.fetch.response.max.bytes (10 MiB) of records; headroom for the rest.
DEFAULT_MAX_RESPONSE_BYTES = 100 * 1024 * 1024


class BrokerUnreachable(ConnectionError):
    """The remote broker could not be reached or answered nothing usable; the connection is closed."""


class BrokerClient:
    def __init__(self, host: str, port: int, client_id: str, timeout_s: float = 30.0,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES, security: ClientSecurity | None = None) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes
        self._sock: socket.socket | None = None
        self._security = security  # TLS and SASL to a secured inter-broker listener (network/client_security.py)
        self._correlation_id = 0

    def __repr__(self) -> str:
        return f"BrokerClient({self.host}:{self.port})"

    def send(self, request: Message, version: int, timeout_s: float | None = None) -> Message:
        """Send `request` at `version` and return the decoded response (BrokerUnreachable on any failure)."""
        try:
            sock = self._connected()  # first: a new connection's authentication sends requests of its own
        except (OSError, BrokerUnreachable) as exc:
            self.close()
            raise BrokerUnreachable(f"{self.host}:{self.port}: {exc}") from None
        self._correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        header = RequestHeader(request_api_key=request.API_KEY, request_api_version=version,
                               correlation_id=self._correlation_id, client_id=self.client_id)
        payload = header.encode(request_header_version(request.API_KEY, version)) + request.encode(version)
        try:
            sock.settimeout(timeout_s if timeout_s is not None else self.timeout_s)
            sock.sendall(_SIZE.pack(len(payload)) + payload)
            frame = self._read_frame(sock)
        except (OSError, BrokerUnreachable) as exc:
            self.close()
            raise BrokerUnreachable(f"{self.host}:{self.port}: {exc}") from None
        return self._decode(frame, request.API_KEY, version)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _connected(self) -> socket.socket:
        if self._sock is None:
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._security is None:
                self._sock = sock
            else:
                try:
                    self._sock = self._security.wrap(sock, self.host)
                except OSError:
                    sock.close()
                    raise
                self._security.authenticate(self.send)  # _sock is set: send() uses this connection
        return self._sock

    def _read_frame(self, sock: socket.socket) -> bytes:
        (size,) = _SIZE.unpack(self._read_exactly(sock, 4))
        if not 4 <= size <= self.max_response_bytes:
            raise BrokerUnreachable(f"response frame of {size} bytes is outside [4, {self.max_response_bytes}]")
        return self._read_exactly(sock, size)

    @staticmethod
    def _read_exactly(sock: socket.socket, size: int) -> bytes:
        buffer = bytearray(size)
        view = memoryview(buffer)
        received = 0
        while received < size:
            count = sock.recv_into(view[received:])
            if not count:
                raise BrokerUnreachable("the connection was closed by the remote broker")
            received += count
        return bytes(buffer)

    def _decode(self, frame: bytes, api_key: int, version: int) -> Message:
        (correlation_id,) = _CORRELATION_ID.unpack_from(frame)
        if correlation_id != self._correlation_id:
            self.close()
            raise BrokerUnreachable(f"{self.host}:{self.port} answered correlation id {correlation_id}, "
                                    f"expected {self._correlation_id}")
        try:
            position = 4
            if response_header_version(api_key, version) >= 1:
                tagged, position = read_uvarint(frame, position)
                if tagged:
                    raise DecodeError("tagged fields in a response header")
            return response_class(api_key).decode(memoryview(frame)[position:], version)
        except DecodeError as exc:
            self.close()
            raise BrokerUnreachable(f"{self.host}:{self.port} sent an unreadable response: {exc}") from None
