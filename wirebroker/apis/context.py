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


@dataclass(frozen=True, slots=True)
class CloseConnection:
    """A handler's answer when the connection must be closed instead (the reason goes to the log)."""

    reason: str


@dataclass(slots=True, eq=False)
class RequestContext:
    header: RequestHeader
    client_address: str
    connection_id: str
    listener: str
    broker: Broker
    # Answer the request: a response message, NO_RESPONSE or CloseConnection. Called while the handler runs, the
    # answer is returned by the dispatcher; called later (from a purgatory) it is encoded and sent then.
    respond: Callable[[Any], None]

    @property
    def api_version(self) -> int:
        return self.header.api_version

    @property
    def client_id(self) -> str | None:
        return self.header.client_id
