"""What an API handler gets besides its request: who asked, at which version, and the broker's services."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirebroker.protocol.headers import RequestHeader

if TYPE_CHECKING:
    from wirebroker.server.broker import Broker


class _NoResponse:
    """A handler's answer when the protocol wants none on the wire (produce with acks=0)."""

    def __repr__(self) -> str:
        return "NO_RESPONSE"


NO_RESPONSE = _NoResponse()


@dataclass(slots=True, eq=False)
class RequestContext:
    header: RequestHeader
    client_address: str
    connection_id: str
    listener: str
    broker: Broker
    respond: Callable[[Any], None]  # answer later (a request parked in purgatory): encodes and sends the response
    close: Callable[[str], None]  # close the connection instead of answering (a reason for the log)

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id
