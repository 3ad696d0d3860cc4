"""Waking a thread that sleeps in `selector.select()` (Java's Selector.wakeup) with a socketpair."""

from __future__ import annotations

import selectors
import socket

_DRAIN_CHUNK = 4096  # wakeup bytes carry no data; read them in big gulps


class Wakeup:
    """Register once in a selector; `wakeup()` from any thread makes the select return, `clear()` re-arms it."""

    def __init__(self) -> None:
        self._reader, self._writer = socket.socketpair()
        self._reader.setblocking(False)
        self._writer.setblocking(False)
        self._armed = True  # False while a wake-up byte is already on its way: spare the syscall

    def register(self, selector: selectors.BaseSelector) -> None:
        selector.register(self._reader, selectors.EVENT_READ, self)

    def wakeup(self) -> None:
        if not self._armed:
            return
        self._armed = False
        try:
            self._writer.send(b"\0")
        except OSError:
            pass  # full: the reader is already due to wake; closed: the owner has stopped

    def clear(self) -> None:
        """Consume pending wake-ups; call when the selector reports it, before looking at the work they announce.

        Draining before re-arming means an armed=False always has a byte on its way, so no wake-up is lost; a byte
        sent between the two only costs one spurious wake.
        """
        try:
            self._reader.recv(_DRAIN_CHUNK)  # one byte per armed period; any left over just wakes the next select
        except BlockingIOError:
            pass
        self._armed = True

    def close(self) -> None:
        self._reader.close()
        self._writer.close()
