"""Opening the listening sockets of one listener (host, port).

Which addresses a host name binds:
- "" (Kafka: a listener with no host): every interface, IPv4 and IPv6 through one dual-stack socket.
- "localhost": both 127.0.0.1 and ::1, since clients resolve it either way and many try IPv6 first; ::1 is skipped
  with a log line on a machine without IPv6.
- anything else: the first address it resolves to, as Java's InetSocketAddress does.
All sockets of a listener share one port; with port 0 the first socket picks it and the others follow, retried on
a fresh port if another process holds it on the second address family.
"""

from __future__ import annotations

import errno
import itertools
import logging
import socket

from wirebroker.network.connection import format_address

log = logging.getLogger(__name__)

SOCKET_LISTEN_BACKLOG_SIZE = 50  # Kafka's default socket.listen.backlog.size
_EPHEMERAL_PORT_ATTEMPTS = 5  # port 0 on two families can collide with another process; give up after this many


def bind_addresses(host: str) -> list[tuple[socket.AddressFamily, str]]:
    """The (family, address) pairs a listener on `host` binds."""
    if not host:
        return [(socket.AF_INET6, "::")] if socket.has_ipv6 else [(socket.AF_INET, "0.0.0.0")]
    if host == "localhost":
        return [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
    family, _, _, _, address = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0]
    return [(family, address[0])]


def open_listener(
    host: str,
    port: int,
    *,
    backlog: int = SOCKET_LISTEN_BACKLOG_SIZE,
    receive_buffer_bytes: int = -1,
) -> list[socket.socket]:
    """Bind and listen on every address of `host`; receive_buffer_bytes -1 keeps the OS default."""
    addresses = bind_addresses(host)
    for attempt in itertools.count(1):
        try:
            sockets = _bind_all(addresses, port, host, backlog, receive_buffer_bytes)
        except OSError as e:
            if port == 0 and e.errno == errno.EADDRINUSE and attempt < _EPHEMERAL_PORT_ATTEMPTS:
                continue
            raise OSError(e.errno, f"Socket server failed to bind to {host}:{port}: {e.strerror or e}") from e
        for sock in sockets:
            log.info("Awaiting socket connections on %s.", format_address(sock.getsockname()))
        return sockets


def _bind_all(
    addresses: list[tuple[socket.AddressFamily, str]], port: int, host: str, backlog: int, receive_buffer_bytes: int
) -> list[socket.socket]:
    sockets: list[socket.socket] = []
    try:
        for family, address in addresses:
            bound_port = sockets[0].getsockname()[1] if sockets else port
            sock = _bind_one(family, address, bound_port, host, receive_buffer_bytes)
            if sock is not None:
                sock.listen(backlog)
                sockets.append(sock)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    if not sockets:
        raise OSError(errno.EADDRNOTAVAIL, "no usable address")
    return sockets


def _bind_one(
    family: socket.AddressFamily, address: str, port: int, host: str, receive_buffer_bytes: int
) -> socket.socket | None:
    """A bound socket, or None for localhost's ::1 on a machine without IPv6."""
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as e:
        return _skip_missing_ipv6_loopback(family, host, port, e)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            # "::" serves IPv4 too; any other IPv6 address stays IPv6-only so its IPv4 twin can bind the same port.
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if address == "::" else 1)
        if receive_buffer_bytes != -1:
            # Set before listen() so accepted sockets inherit it and the window scale is negotiated with it.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer_bytes)
        sock.bind((address, port))
    except OSError as e:
        sock.close()
        return _skip_missing_ipv6_loopback(family, host, port, e)
    return sock


def _skip_missing_ipv6_loopback(family: socket.AddressFamily, host: str, port: int, error: OSError) -> None:
    if host == "localhost" and family == socket.AF_INET6 and error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        log.info("Listener localhost:%d serves IPv4 only: this machine has no IPv6 loopback (%s)", port, error)
        return None
    raise error
