"""TLS on a processor's non-blocking sockets: the handshake step by step, reads, and responses without sendfile.

`os.sendfile` cannot encrypt, so a file range goes out in chunks of TLS_FILE_CHUNK bytes read with `os.pread`: one
chunk in memory per connection at a time, never a whole segment. SSLSocket has no `sendmsg`; CPython enables
partial writes (SSL_MODE_ENABLE_PARTIAL_WRITE, ACCEPT_MOVING_WRITE_BUFFER), so an unsent rest is simply sent again
later from where it stopped.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterable
from typing import Any

from wirebroker.network.connection import SecurityClose
from wirebroker.network.response_send import FilePartError, ResponseSend

TLS_FILE_CHUNK = 64 * 1024  # a file range is read and encrypted this much at a time (four TLS records)


class HandshakeFailed(SecurityClose):
    """The TLS handshake failed (bad or missing client certificate, protocol mismatch, not TLS at all)."""


def handshake_step(sock: ssl.SSLSocket) -> bool:
    """Advance the handshake as far as the socket allows; True once it is done."""
    try:
        sock.do_handshake()
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except ssl.SSLError as exc:
        raise HandshakeFailed(exc.reason or str(exc)) from None
    return True


def recv_into(sock: ssl.SSLSocket, buffer: memoryview) -> int:
    """recv_into with the plain socket's contract: BlockingIOError when no decrypted byte is ready."""
    try:
        return sock.recv_into(buffer)
    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
        raise BlockingIOError from None
    except (ssl.SSLZeroReturnError, ssl.SSLEOFError):  # a close_notify, or a client that left without one
        return 0


class TlsResponseSend(ResponseSend):
    """ResponseSend on a TLS socket: buffers with send, file ranges through one bounded chunk at a time."""

    __slots__ = ("_chunk",)

    def __init__(self, parts: Iterable[Any]) -> None:
        super().__init__(parts)  # _file_sent now counts the bytes of the leading file part read into chunks
        self._chunk: memoryview | None = None  # the unsent rest of the chunk read last

    def write_to(self, sock: ssl.SSLSocket) -> bool:
        """Write as much as the socket takes now; True once everything is written."""
        parts = self._parts
        while parts or self._chunk is not None:
            if self._chunk is None and not isinstance(parts[0], memoryview):
                self._chunk = self._read_chunk(parts[0])
            buffer = self._chunk if self._chunk is not None else parts[0]
            try:
                sent = sock.send(buffer)
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                return False
            except ssl.SSLEOFError as exc:  # the client left: no warning, as for a plain socket's reset
                raise ConnectionResetError(str(exc)) from None
            rest = buffer[sent:] if sent < len(buffer) else None
            if self._chunk is not None:
                self._chunk = rest
            elif rest is None:
                parts.popleft()
            else:
                parts[0] = rest
            if rest is not None:
                return False
        return True

    def _read_chunk(self, part: Any) -> memoryview:
        size = min(TLS_FILE_CHUNK, part.size - self._file_sent)
        try:
            data = os.pread(part.fileno, size, part.position + self._file_sent)
        except OSError as exc:
            raise FilePartError(f"reading {part!r} failed: {exc}") from exc
        if len(data) < size:
            raise FilePartError(f"file of {part!r} ends {size - len(data)} bytes before the range does")
        self._file_sent += size
        if self._file_sent == part.size:
            self._file_sent = 0
            self._parts.popleft()
        return memoryview(data)
