"""SASL on a connection, on its network thread (Kafka's SaslServerAuthenticator).

Until a client authenticates only these are read, each a frame no larger than `sasl.server.max.receive.size`:
ApiVersions (passed on to the API handlers, before the handshake only), SaslHandshake v0-1, then the mechanism's
tokens: in SaslAuthenticate v0-2 requests after a v1 handshake, raw size-prefixed tokens after a v0 one. Anything
else closes the connection with a log line naming the client and the request. A refused client gets
SASL_AUTHENTICATION_FAILED with the mechanism's message, the broker logs who and why, and the connection closes
once that answer is written.

KIP-368: with `connections.max.reauth.ms` (or a credential that expires, an OAuth token) the session has a lifetime,
told in SaslAuthenticate v1+; the client re-authenticates in time with a new SaslHandshake on the same connection,
as the same principal with the same mechanism. A request other than those on an expired session closes the
connection.

The SaslHandshake and SaslAuthenticate modules under apis/ answer what reaches them (on a listener without SASL,
say) with ILLEGAL_SASL_STATE, as Kafka's KafkaApis does.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from wirebroker.network.connection import SecurityClose
from wirebroker.protocol.errors import ErrorCode
from wirebroker.protocol.headers import (
    API_VERSIONS_KEY,
    RequestHeader,
    read_request_header,
    response_frame_parts,
)
from wirebroker.protocol.message import Message
from wirebroker.protocol.messages import ADVERTISABLE_VERSIONS
from wirebroker.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from wirebroker.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from wirebroker.protocol.primitives import DecodeError
from wirebroker.security.principal import user_principal
from wirebroker.security.sasl import SaslAuthenticationError, SaslServer

log = logging.getLogger(__name__)

SASL_SERVER_MAX_RECEIVE_SIZE = 524288  # Kafka's default sasl.server.max.receive.size
_SIZE = struct.Struct(">i")
_AUTH_KEYS = (API_VERSIONS_KEY, SaslHandshakeRequest.API_KEY, SaslAuthenticateRequest.API_KEY)


class AuthenticationClose(SecurityClose):
    """The connection must close: a request out of turn, an undecodable token, an expired session."""


@dataclass(frozen=True)
class SaslSettings:
    """One listener's SASL side: its mechanisms (name -> a new server per exchange) and limits."""

    mechanisms: dict[str, Callable[[], SaslServer]]
    max_receive_size: int = SASL_SERVER_MAX_RECEIVE_SIZE
    connections_max_reauth_ms: int = 0
    failed_authentication_delay_ms: int = 100  # Kafka's connection.failed.authentication.delay.ms


@dataclass(frozen=True)
class Answer:
    """What the network thread writes back itself; `close` after writing it, `delay_s` seconds from now."""

    parts: list[Any]
    close: bool = False
    delay_s: float = 0.0


class SaslAuthenticator:
    """The SASL state of one connection; `client` names it in log lines."""

    def __init__(self, settings: SaslSettings, client: str, listener: str) -> None:
        self._settings = settings
        self._client = client
        self._listener = listener
        self._state = "handshake-or-versions"  # -> handshake -> authenticate | raw-token -> complete
        self._server: SaslServer | None = None
        self._mechanism = ""
        self.principal: str | None = None  # set once authenticated
        self._session_expiration_ns: int | None = None
        self._session_lifetime_ms = 0
        self._reauthenticating = False

    @property
    def authenticated(self) -> bool:
        return self._state == "complete"

    def on_request(self, frame: memoryview) -> Answer | None:
        """Handle a frame the network thread read: an Answer to write, or None to hand it to the API handlers.

        Raises AuthenticationClose when the connection must close without an answer.
        """
        if self._state == "raw-token":
            return self._raw_token(bytes(frame))
        try:
            header, body_start = read_request_header(frame)
        except DecodeError as exc:
            raise AuthenticationClose(f"unreadable request header during SASL authentication ({exc})") from None
        api_key = header.api_key
        if self._state == "complete":
            if api_key == SaslHandshakeRequest.API_KEY and header.api_version >= 1:
                self._begin_reauthentication()
            elif (self._session_expiration_ns is not None and time.monotonic_ns() > self._session_expiration_ns
                  and api_key not in _AUTH_KEYS):
                raise AuthenticationClose(f"the SASL session of {self.principal} expired (connections.max.reauth.ms "
                                          f"or credential lifetime) and the client did not re-authenticate")
            else:
                return None
        if api_key == API_VERSIONS_KEY and self._state == "handshake-or-versions":
            # Kafka: a version it does not serve is answered UNSUPPORTED_VERSION and the client may ask again
            if header.api_version <= ADVERTISABLE_VERSIONS[API_VERSIONS_KEY][1]:
                self._state = "handshake"
            return None
        if api_key == SaslHandshakeRequest.API_KEY and self._state in ("handshake-or-versions", "handshake"):
            return self._handshake(header, frame, body_start)
        if api_key == SaslAuthenticateRequest.API_KEY and self._state == "authenticate":
            return self._authenticate(header, frame, body_start)
        raise AuthenticationClose(f"unexpected request (API key {api_key} v{header.api_version}) during SASL "
                                  f"authentication ({self._state}); only ApiVersions, SaslHandshake and "
                                  f"SaslAuthenticate are read before a client authenticates")

    def _begin_reauthentication(self) -> None:
        self._reauthenticating = True
        self._state = "handshake"

    def _decode(self, cls: type[Message], header: RequestHeader, frame: memoryview, body_start: int) -> Any:
        try:
            return cls.read(frame, body_start, header.api_version)[0]
        except DecodeError as exc:
            raise AuthenticationClose(f"malformed {cls.__name__} v{header.api_version} ({exc})") from None

    def _handshake(self, header: RequestHeader, frame: memoryview, body_start: int) -> Answer:
        request = self._decode(SaslHandshakeRequest, header, frame, body_start)
        enabled = list(self._settings.mechanisms)
        response = SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=enabled)
        mechanism = request.mechanism
        if mechanism not in self._settings.mechanisms or (self._reauthenticating and mechanism != self._mechanism):
            log.info("Failed authentication with %s (listener %s): SASL mechanism %s is not enabled (enabled: %s)",
                     self._client, self._listener, mechanism, ", ".join(enabled))
            response.error_code = ErrorCode.UNSUPPORTED_SASL_MECHANISM
            return self._refusal(header, response)
        self._mechanism = mechanism
        self._server = self._settings.mechanisms[mechanism]()
        self._state = "authenticate" if header.api_version >= 1 else "raw-token"
        return Answer(response_frame_parts(header, response))

    def _authenticate(self, header: RequestHeader, frame: memoryview, body_start: int) -> Answer:
        request = self._decode(SaslAuthenticateRequest, header, frame, body_start)
        response = SaslAuthenticateResponse(error_code=ErrorCode.NONE, auth_bytes=b"", session_lifetime_ms=0)
        try:
            response.auth_bytes = self._evaluate(bytes(request.auth_bytes))
        except SaslAuthenticationError as exc:
            response.error_code = ErrorCode.SASL_AUTHENTICATION_FAILED
            response.error_message = exc.client_message or (
                f"Authentication failed during authentication due to invalid credentials with SASL mechanism "
                f"{self._mechanism}")
            return self._refusal(header, response)
        if self.authenticated and header.api_version >= 1:
            response.session_lifetime_ms = self._session_lifetime_ms
        return Answer(response_frame_parts(header, response))

    def _refusal(self, header: RequestHeader, response: Message) -> Answer:
        """The failure's answer, written after connection.failed.authentication.delay.ms, then the connection closed."""
        return Answer(response_frame_parts(header, response), close=True,
                      delay_s=self._settings.failed_authentication_delay_ms / 1000)

    def _raw_token(self, token: bytes) -> Answer:
        try:
            challenge = self._evaluate(token)
        except SaslAuthenticationError:
            raise AuthenticationClose("SASL authentication failed (raw tokens after SaslHandshake v0)") from None
        return Answer([_SIZE.pack(len(challenge)), challenge])

    def _evaluate(self, token: bytes) -> bytes:
        server = self._server
        try:
            challenge = server.evaluate_response(token)
        except SaslAuthenticationError as exc:
            log.info("Failed authentication with %s (listener %s, SASL mechanism %s): %s", self._client,
                     self._listener, self._mechanism, exc.reason)
            raise
        if server.complete:
            self._complete(server)
        return challenge

    def _complete(self, server: SaslServer) -> None:
        principal = user_principal(server.authorization_id)
        if self._reauthenticating and principal != self.principal:
            raise SaslAuthenticationError(
                f"re-authentication as {principal} on a connection of {self.principal}",
                f"Cannot change principals during re-authentication from {self.principal}: {principal}")
        now_ms, now_ns = time.time() * 1000, time.monotonic_ns()
        reauth_ms = self._settings.connections_max_reauth_ms
        expiration_ms = server.credential_expiration_ms
        # Kafka's calcCompletionTimesAndReturnSessionLifetimeMs: the lesser of the two, whichever are set.
        lifetimes = [ms for ms in (reauth_ms if reauth_ms > 0 else None,
                                   None if expiration_ms is None else expiration_ms - now_ms) if ms is not None]
        self._session_lifetime_ms = max(0, int(min(lifetimes))) if lifetimes else 0
        self._session_expiration_ns = now_ns + self._session_lifetime_ms * 1_000_000 if lifetimes else None
        if not self._reauthenticating:
            log.debug("%s authenticated as %s with %s on listener %s", self._client, principal, self._mechanism,
                      self._listener)
        self.principal = principal
        self._state = "complete"
        self._reauthenticating = False
        self._server = None

