"""What a listener's security protocol adds to each of its connections (Kafka's ChannelBuilder and KafkaChannel).

The processor keeps `conn.security` None on PLAINTEXT, so a plain connection pays nothing. Otherwise it holds a
ConnectionSecurity, which the processor asks at four points: `handshaking` / `handshake()` before anything is read
(TLS), `recv_into` for reads, `on_request` for each frame read (SASL), and `send_class` for responses (no sendfile
through TLS). The principal, "User:ANONYMOUS" until known, is that of the client's certificate (SSL, after
ssl.principal.mapping.rules) or of its SASL exchange (SASL_PLAINTEXT, SASL_SSL).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from wirebroker.network.authenticator import (
    Answer,
    AuthenticationClose,
    SaslAuthenticator,
    SaslSettings,
)
from wirebroker.network.response_send import ResponseSend
from wirebroker.security.principal import (
    ANONYMOUS,
    NoMatchingRuleError,
    SslPrincipalMapper,
    user_principal,
)

if TYPE_CHECKING:
    import ssl

    from wirebroker.network.connection import Connection

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ListenerSecurity:
    """One listener's security: its protocol, TLS context (SSL, SASL_SSL) and SASL settings (SASL_*)."""

    protocol: str
    ssl_context: ssl.SSLContext | None = None
    principal_mapper: SslPrincipalMapper | None = None
    sasl: SaslSettings | None = None

    def attach(self, conn: Connection) -> None:
        """Make a freshly accepted connection speak this listener's protocol."""
        conn.security_protocol = self.protocol
        conn.security = ConnectionSecurity(self, conn)


class ConnectionSecurity:
    __slots__ = ("_authenticator", "_conn", "_listener", "_max_frame_size", "handshaking", "recv_into", "send_class")

    def __init__(self, listener: ListenerSecurity, conn: Connection) -> None:
        self._listener = listener
        self._conn = conn
        self.handshaking = listener.ssl_context is not None
        self.send_class: Any = ResponseSend
        self.recv_into = conn.sock.recv_into
        if listener.ssl_context is not None:
            from wirebroker.network import tls

            conn.sock = listener.ssl_context.wrap_socket(conn.sock, server_side=True, do_handshake_on_connect=False)
            self.send_class = tls.TlsResponseSend
            self.recv_into = lambda buffer, sock=conn.sock: tls.recv_into(sock, buffer)
        self._authenticator: SaslAuthenticator | None = None
        self._max_frame_size = conn.reader.max_frame_size
        if listener.sasl is not None:
            self._authenticator = SaslAuthenticator(listener.sasl, conn.client_address, conn.listener)
            conn.reader.max_frame_size = min(self._max_frame_size, listener.sasl.max_receive_size)

    def handshake(self) -> bool:
        """One TLS handshake step; True once done. Raises tls.HandshakeFailed (the caller closes the connection)."""
        from wirebroker.network import tls

        conn = self._conn
        try:
            done = tls.handshake_step(conn.sock)
        except tls.HandshakeFailed as exc:
            log.info("Failed authentication with %s (listener %s, SSL handshake failed: %s)", conn.client_address,
                     conn.listener, exc)
            raise
        if done:
            self.handshaking = False
            if self._authenticator is None:
                conn.principal = self._certificate_principal()
        return done

    def _certificate_principal(self) -> str:
        der = self._conn.sock.getpeercert(binary_form=True)
        if not der:
            return ANONYMOUS  # ssl.client.auth=requested and the client sent none
        from wirebroker.security.ssl_context import peer_distinguished_name

        dn = peer_distinguished_name(der)
        try:
            return user_principal(self._listener.principal_mapper.apply(dn))
        except NoMatchingRuleError as exc:
            log.info("Failed authentication with %s (listener %s): %s", self._conn.client_address,
                     self._conn.listener, exc)
            raise AuthenticationClose(str(exc)) from None

    def on_request(self, frame: memoryview) -> Answer | None:
        """An answer the network thread writes itself (SASL), or None for the API handlers.

        Raises AuthenticationClose when the connection must close.
        """
        authenticator = self._authenticator
        if authenticator is None:
            return None
        answer = authenticator.on_request(frame)
        if authenticator.authenticated:
            self._conn.principal = authenticator.principal
            self._conn.reader.max_frame_size = self._max_frame_size
        return answer
