"""The broker's own connections to a secured inter-broker listener (Kafka's inter-broker client channel builder).

A BrokerClient given a ClientSecurity wraps each new socket in TLS (checking the server's certificate, and
presenting the broker's own when the listener asks for one) and then authenticates with SaslHandshake v1 and
SaslAuthenticate v2 as `sasl.mechanism.inter.broker.protocol` says, with the username and password of the
listener's JAAS config, before its first request.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from wirebroker.protocol.messages.sasl_handshake import SaslHandshakeRequest

if TYPE_CHECKING:
    import ssl

SASL_HANDSHAKE_VERSION = 1  # v1: the tokens travel in SaslAuthenticate requests (KIP-152)
SASL_AUTHENTICATE_VERSION = 2


class InterBrokerAuthenticationError(ConnectionError):
    """This broker could not authenticate to another (or itself): the connection is dropped and retried later."""


@dataclass(frozen=True)
class ClientSecurity:
    ssl_context: ssl.SSLContext | None = None
    mechanism: str | None = None  # the SASL mechanism; None: no SASL (PLAINTEXT, SSL)
    new_client: Callable[[], Any] | None = None  # a fresh client-side mechanism (security/sasl/client.py)

    def wrap(self, sock: socket.socket, host: str) -> socket.socket:
        if self.ssl_context is None:
            return sock
        return self.ssl_context.wrap_socket(sock, server_hostname=host)

    def authenticate(self, send: Callable[[Any, int], Any]) -> None:
        """Run the SASL exchange through `send(request, version) -> response` (BrokerClient.send)."""
        if self.mechanism is None:
            return
        handshake = send(SaslHandshakeRequest(mechanism=self.mechanism), SASL_HANDSHAKE_VERSION)
        if handshake.error_code != ErrorCode.NONE:
            raise InterBrokerAuthenticationError(
                f"SASL mechanism {self.mechanism} refused ({ErrorCode(handshake.error_code).name}); the listener "
                f"enables {handshake.mechanisms}")
        mechanism = self.new_client()
        token: bytes | None = mechanism.first()
        while token is not None:
            response = send(SaslAuthenticateRequest(auth_bytes=token), SASL_AUTHENTICATE_VERSION)
            if response.error_code != ErrorCode.NONE:
                raise InterBrokerAuthenticationError(f"SASL {self.mechanism} authentication failed: "
                                                     f"{response.error_message}")
            token = mechanism.respond(bytes(response.auth_bytes)) if response.auth_bytes else None
