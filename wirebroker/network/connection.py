"""One client connection as a network processor keeps it: socket, frame reader, mute state, response in flight."""

from __future__ import annotations

import socket
from typing import Any

from wirebroker.network.request_channel import Request
from wirebroker.network.response_send import ResponseSend
from wirebroker.protocol.frames import FrameReader


def format_address(address: tuple) -> str:
    """ "host:port", with the host in brackets when it is IPv6."""
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class SecurityClose(Exception):
    """The connection's TLS or SASL layer refuses the client; the message says why (logged, then closed)."""


class Connection:
    """State of one socket owned by one processor thread; never touched by another thread."""

    __slots__ = (
        "id",
        "listener",
        "sock",
        "client_address",
        "reader",
        "muted",
        "send",
        "close_after_send",
        "throttle_ms",
        "waiting_request",
        "registered_events",
        "last_active",
        "principal",
        "security_protocol",
        "security",
    )

    def __init__(self, sock: socket.socket, listener: str, index: int, max_frame_size: int, now: float) -> None:
        local, remote = format_address(sock.getsockname()), format_address(sock.getpeername())
        self.id = f"{local}-{remote}-{index}"  # Kafka's connection id: the index tells reused ports apart
        self.listener = listener
        self.sock = sock
        self.client_address = remote
        self.reader = FrameReader(max_frame_size)
        self.muted = False  # a request is being handled: read nothing more until its response is out
        self.send: ResponseSend | None = None  # the response being written
        self.close_after_send = False
        self.throttle_ms = 0  # the response being written asks to stay muted this long after it (client quotas)
        self.waiting_request: Request | None = None  # read, but refused by a full request queue
        self.registered_events = 0  # what the processor's selector watches for on this socket
        self.last_active = now
        self.principal = "User:ANONYMOUS"  # until the connection authenticates (SSL client certificate, SASL)
        self.security_protocol = "PLAINTEXT"
        self.security: Any = None  # a ConnectionSecurity (network/channel_security.py) on TLS and SASL listeners
