"""A message encoded once and written as its bytes: for answers that are the same for every request that asks.

ApiVersions is the example: its answer depends only on the broker's API table and the request's version, yet
building and encoding its ~60 entries cost most of the request. The dispatcher writes any answer with
`body.write(out, version)`; an `EncodedMessage` does that by appending the bytes it holds.
"""

from __future__ import annotations

from wirebroker.protocol.message import Message
from wirebroker.protocol.primitives import Output


class EncodedMessage:
    """`message` encoded at `version`, once. Read-only: change the message and encode it again instead."""

    __slots__ = ("message", "version", "data")

    def __init__(self, message: Message, version: int) -> None:
        self.message = message
        self.version = version
        self.data = message.encode(version)

    def write(self, out: Output, version: int) -> None:
        if version != self.version:
            raise ValueError(f"{type(self.message).__name__} was encoded at v{self.version}, not v{version}")
        out += self.data
