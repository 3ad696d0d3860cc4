"""Size-prefixed frames of Kafka's wire protocol, read without any I/O.

Every Kafka request and response travels as a frame:

    size     INT32, big endian: the number of bytes that follow (the prefix itself not counted)
    payload  `size` bytes: request or response header, then body

`FrameReader` is fed bytes as they arrive (`receive_data`, or `receive_into` to let the caller's read land in the
reader's own buffer) and hands out complete payloads (`next_frame`, None while it needs more data), in the manner of
h11's `receive_data()` / `next_event()`. A negative size or one above the reader's limit raises before any buffer
of that size is allocated, just as Kafka's NetworkReceive throws InvalidReceiveException.

Memory: the reader holds at most one partial frame (preallocated to its declared size, which the limit bounds) plus
whatever bytes the caller fed and has not taken out as frames; a caller that feeds one read at a time and stops
reading while it holds a request (the network processor mutes the connection) keeps it under
`max_frame_size + one read`. Bytes are copied once into the frame buffer, so a large frame costs linear time however
finely it is split.

A frame that arrives in more than one read (any produce request of more than a read's worth) is filled in place, in
a buffer the reader keeps for the next such frame once nothing holds a view of it any more: a fresh
`bytearray(size)` per frame is zero-filled and, past malloc's mmap threshold, faulted in page by page (42-62 µs for
650 KB, bench/ANALYSIS.md). Only buffers up to SPARE_FRAME_MAX_BYTES are kept, one per reader.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

__all__ = ["FrameError", "FrameReader", "FrameTooLargeError", "InvalidFrameError", "SIZE_PREFIX"]

SIZE_PREFIX = struct.Struct(">i")  # every frame starts with its payload length, INT32 big endian
SPARE_FRAME_MAX_BYTES = 1 << 20  # the producers' default max.request.size: a bigger frame's buffer is not kept
_SPARE_ROUNDING = 64 * 1024  # kept buffers are allocated in these steps, so frames of varying size reuse them


class FrameError(Exception):
    """The peer sent bytes that cannot be framed; the only remedy is closing the connection."""


class InvalidFrameError(FrameError):
    """The size prefix is negative."""


class FrameTooLargeError(FrameError):
    """The size prefix exceeds the reader's limit (Kafka: socket.request.max.bytes)."""


class FrameReader:
    """Splits a byte stream into frame payloads; see the module docstring."""

    __slots__ = ("_max_frame_size", "_pending", "_frame", "_frame_size", "_filled", "_spare")

    def __init__(self, max_frame_size: int) -> None:
        if max_frame_size < 0:
            raise ValueError(f"max_frame_size must be >= 0, got {max_frame_size}")
        self._max_frame_size = max_frame_size
        self._pending = bytearray()  # input not yet claimed by a frame: a prefix, small frames, their tail
        self._frame: bytearray | None = None  # payload being filled, preallocated to at least its declared size
        self._frame_size = 0  # the declared size of _frame's payload
        self._filled = 0  # bytes of _frame received so far
        self._spare: bytearray | None = None  # the buffer of the last frame filled in place, to fill the next one

    @property
    def max_frame_size(self) -> int:
        return self._max_frame_size

    @max_frame_size.setter
    def max_frame_size(self, value: int) -> None:
        """Changed between frames: a SASL listener reads small frames until the client authenticates."""
        self._max_frame_size = value

    @property
    def buffered_bytes(self) -> int:
        """Bytes received and not yet handed out as frames."""
        return len(self._pending) + self._filled

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Add bytes that arrived from the peer."""
        frame = self._frame
        if frame is None or self._pending:
            self._pending += data
            return
        with memoryview(data) as view:
            take = min(len(view), self._frame_size - self._filled)
            frame[self._filled : self._filled + take] = view[:take]
            self._filled += take
            if take < len(view):
                self._pending += view[take:]

    def receive_into(self, recv_into: Callable[[memoryview], int], scratch: memoryview) -> int:
        """Call `recv_into(buffer)` once and take in the bytes it wrote; returns its count (0: end of stream).

        While a large frame is being filled, the buffer is the unfilled rest of that frame, so its bytes are
        copied once; otherwise it is `scratch` (a caller-owned buffer of the caller's read size, reused).
        """
        frame = self._frame
        if frame is not None and not self._pending and self._frame_size - self._filled >= len(scratch):
            with memoryview(frame) as view:
                count = recv_into(view[self._filled : self._frame_size])
            self._filled += count
            return count
        count = recv_into(scratch)
        self.receive_data(scratch[:count])
        return count

    def next_frame(self) -> memoryview | None:
        """The next complete payload, or None if more data is needed.

        The payload is writable: the produce path assigns offsets inside the request's record batches in place.

        Raises InvalidFrameError / FrameTooLargeError on a bad size prefix; the stream cannot be resynchronised.
        """
        frame = self._frame
        if frame is not None:
            if self._filled < self._frame_size:
                return None
            self._frame = None
            self._filled = 0
            return memoryview(frame)[: self._frame_size]
        pending = self._pending
        if len(pending) < SIZE_PREFIX.size:
            return None
        size = self._checked_size(SIZE_PREFIX.unpack_from(pending)[0])
        end = SIZE_PREFIX.size + size
        if len(pending) >= end:
            with memoryview(pending) as view:
                payload = bytearray(view[SIZE_PREFIX.size : end])
            del pending[:end]  # CPython trims a bytearray's head without moving the rest
            return memoryview(payload)
        self._start_large_frame(size)
        return None

    def _checked_size(self, size: int) -> int:
        if size < 0:
            raise InvalidFrameError(f"Invalid receive (size = {size})")
        if size > self._max_frame_size:
            raise FrameTooLargeError(f"Invalid receive (size = {size} larger than {self._max_frame_size})")
        return size

    def _start_large_frame(self, size: int) -> None:
        """Move a partial frame out of _pending into a buffer of at least its full size (the spare one if it is
        big enough and free), filled from now on in place."""
        pending = self._pending
        received = len(pending) - SIZE_PREFIX.size
        frame = self._spare
        if frame is None or len(frame) < size or not _unshared(frame):
            frame = self._new_buffer(size)
        frame[:received] = pending[SIZE_PREFIX.size :]
        pending.clear()
        self._frame = frame
        self._frame_size = size
        self._filled = received

    def _new_buffer(self, size: int) -> bytearray:
        """A buffer for a frame of `size` (a checked size), kept as the spare if small enough."""
        rounded = -(-size // _SPARE_ROUNDING) * _SPARE_ROUNDING
        if rounded > SPARE_FRAME_MAX_BYTES:
            self._spare = None
            return bytearray(size)
        self._spare = bytearray(rounded)
        return self._spare


def _unshared(buffer: bytearray) -> bool:
    """Whether no view of `buffer` is alive (its last request still being handled, or kept): only then may it be
    filled again. A resize is refused while views exist, so one byte off and back on tells, without copying."""
    try:
        del buffer[-1:]
    except BufferError:
        return False
    buffer.append(0)
    return True
