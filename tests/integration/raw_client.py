"""A minimal blocking Kafka client on our own codecs: exact bytes and error codes, no client library in between."""

from __future__ import annotations

import socket
import struct

from wirebroker.protocol.api_messages import request_class, response_class
from wirebroker.protocol.headers import request_header_version, response_header_version
from wirebroker.protocol.messages.request_header import RequestHeader
from wirebroker.protocol.primitives import read_uvarint


class RawClient:
    def __init__(self, bootstrap: str, client_id: str = "raw-test-client") -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=15)
        self.client_id = client_id
        self.correlation_id = 0

    @classmethod
    def over(cls, sock: socket.socket, client_id: str = "raw-test-client") -> RawClient:
        """A client on a socket that is already connected."""
        client = cls.__new__(cls)
        client.sock, client.client_id, client.correlation_id = sock, client_id, 0
        return client

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def read_frame(self) -> bytes:
        size = struct.unpack(">i", self._read_exactly(4))[0]
        return self._read_exactly(size)

    def _read_exactly(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self.sock.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            chunks += chunk
        return bytes(chunks)

    def request(self, api_key: int, version: int, **fields):
        """Send a request built from keyword fields; return the decoded response."""
        body = request_class(api_key)(**fields)
        self.correlation_id += 1
        header = RequestHeader(request_api_key=api_key, request_api_version=version,
                               correlation_id=self.correlation_id, client_id=self.client_id)
        self.send_frame(header.encode(request_header_version(api_key, version)) + body.encode(version))
        frame = self.read_frame()
        assert struct.unpack_from(">i", frame)[0] == self.correlation_id
        position = 4
        if response_header_version(api_key, version) >= 1:
            count, position = read_uvarint(frame, position)
            assert count == 0
        return response_class(api_key).decode(frame[position:], version)
