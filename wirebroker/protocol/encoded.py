"""A response encoded once and answered to many requests: for answers that are the same for every request that asks.

ApiVersions is the example: its answer depends only on the broker's API table and the request's version, yet
building and encoding its ~60 entries cost most of the request. The dispatcher writes any answer with
`body.write(out, version)`; an `EncodedAnswer` does that by appending the bytes its `EncodedMessage` holds.

Each request gets an `EncodedAnswer` of its own, because a client quota may throttle that one answer (KIP-219: the
throttle sets `throttle_time_ms` on the answer, server/request_throttling.py): such an answer is encoded afresh from
a copy of the message, and the shared bytes never change. Only for messages that carry `throttle_time_ms`.
"""

from __future__ import annotations

import copy

from wirebroker.protocol.message import Message
from wirebroker.protocol.primitives import Output


class EncodedMessage:
    """`message` encoded at `version`, once. Read-only: change the message and encode it again instead."""

    __slots__ = ("data", "message", "version")

    def __init__(self, message: Message, version: int) -> None:
        self.message = message
        self.version = version
        self.data = message.encode(version)

    def answer(self) -> EncodedAnswer:
        """One request's answer."""
        return EncodedAnswer(self)


class EncodedAnswer:
    """One request's answer from an `EncodedMessage`: its bytes, unless `throttle_time_ms` was set on this answer."""

    __slots__ = ("encoded", "throttle_time_ms")

    def __init__(self, encoded: EncodedMessage) -> None:
        self.encoded = encoded
        self.throttle_time_ms: int = encoded.message.throttle_time_ms  # type: ignore[attr-defined]

    def write(self, out: Output, version: int) -> None:
        encoded = self.encoded
        if version != encoded.version:
            raise ValueError(f"{type(encoded.message).__name__} was encoded at v{encoded.version}, not v{version}")
        if self.throttle_time_ms == encoded.message.throttle_time_ms:  # type: ignore[attr-defined]
            out += encoded.data
            return
        message = copy.copy(encoded.message)
        message.throttle_time_ms = self.throttle_time_ms  # type: ignore[attr-defined]
        message.write(out, version)
