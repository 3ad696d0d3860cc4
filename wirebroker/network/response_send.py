"""Writing one response's parts to a non-blocking socket, resuming where the previous write stopped.

Parts go out in order. A run of consecutive bytes-like parts is written with one `sendmsg` (scatter/gather: small
parts cost no extra syscall and big ones are never copied); any other part is a file range, duck-typed with
`fileno`, `position` and `size` (protocol.records.FileRegion), written with `os.sendfile` so record bytes go from
the page cache to the socket without passing through Python.
"""

from __future__ import annotations

import os
import socket
from collections import deque
from collections.abc import Iterable
from typing import Any

IOV_MAX = 1024  # Linux's limit on the buffers one sendmsg may gather
_BYTES_LIKE = (bytes, bytearray, memoryview)
_MSG_MORE = getattr(socket, "MSG_MORE", 0)  # Linux; elsewhere each part goes out as written


class FilePartError(Exception):
    """A file range could not be sent: its file was closed or is shorter than the range."""


class ResponseSend:
    """The unsent rest of a response."""

    __slots__ = ("_parts", "_file_sent")

    def __init__(self, parts: Iterable[Any]) -> None:
        self._parts: deque[Any] = deque()
        for part in parts:
            if isinstance(part, _BYTES_LIKE):
                if len(part):  # a memoryview may have items wider than a byte: cast, so lengths count bytes
                    self._parts.append(memoryview(part) if type(part) is not memoryview else part.cast("B"))
            elif part.size > 0:
                self._parts.append(part)
        self._file_sent = 0  # bytes of the leading file part already sent

    def write_to(self, sock: socket.socket) -> bool:
        """Write as much as the socket takes now; True once everything is written."""
        parts = self._parts
        while parts:
            if isinstance(parts[0], memoryview):
                done = self._send_buffers(sock)
            else:
                done = self._send_file_part(sock)
            if not done:
                return False
        return True

    def _send_buffers(self, sock: socket.socket) -> bool:
        """Send the leading run of buffers; True if all of it went out."""
        parts = self._parts
        buffers = []
        for part in parts:
            if not isinstance(part, memoryview) or len(buffers) == IOV_MAX:
                break
            buffers.append(part)
        # More of the response follows (a fetch's records after its header): MSG_MORE lets the kernel put both
        # in one segment despite TCP_NODELAY, so a small fetch answer costs one packet, not two.
        flags = _MSG_MORE if len(buffers) < len(parts) else 0
        try:
            sent = sock.sendmsg(buffers, (), flags)
        except BlockingIOError:
            return False
        for buffer in buffers:
            if sent < len(buffer):
                parts[0] = buffer[sent:]
                return False
            sent -= len(buffer)
            parts.popleft()
        return True

    def _send_file_part(self, sock: socket.socket) -> bool:
        """Send the leading file range; True if all of it went out."""
        part = self._parts[0]
        remaining = part.size - self._file_sent
        try:
            sent = os.sendfile(sock.fileno(), part.fileno, part.position + self._file_sent, remaining)
        except BlockingIOError:
            return False
        except ConnectionError:
            raise
        except OSError as e:
            raise FilePartError(f"sendfile of {part!r} failed: {e}") from e
        if sent == 0:
            raise FilePartError(f"file of {part!r} ends {remaining} bytes before the range does")
        if sent < remaining:
            self._file_sent += sent
            return False
        self._file_sent = 0
        self._parts.popleft()
        return True
