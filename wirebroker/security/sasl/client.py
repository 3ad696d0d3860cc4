"""The client side of SASL for the broker's own connections (inter-broker): PLAIN and SCRAM-SHA-256/512.

`client_mechanism(name, username, password)` returns an object whose `first()` is the client's first token and
whose `respond(challenge)` answers each server challenge (None once the exchange is over); a wrong server
signature raises SaslAuthenticationError.
"""

from __future__ import annotations

import base64
import hmac
import secrets

from wirebroker.security.sasl import SaslAuthenticationError
from wirebroker.security.scram_credential import MECHANISMS as SCRAM_MECHANISMS
from wirebroker.security.scram_credential import ScramMechanism


class PlainClient:
    def __init__(self, username: str, password: str) -> None:
        self._token = f"\0{username}\0{password}".encode()

    def first(self) -> bytes:
        return self._token

    def respond(self, challenge: bytes) -> bytes | None:
        return None


class ScramClient:
    """RFC 5802's client: client-first, the proof for the server-first, then the server's signature checked."""

    def __init__(self, mechanism: ScramMechanism, username: str, password: str, nonce: str | None = None) -> None:
        self.mechanism, self.password = mechanism, password
        self.nonce = nonce or secrets.token_urlsafe(24)
        name = username.replace("=", "=3D").replace(",", "=2C")
        self.client_first_bare = f"n={name},r={self.nonce}"
        self._server_signature: bytes | None = None

    def first(self, authzid: str = "") -> bytes:
        return f"n,{'a=' + authzid if authzid else ''},{self.client_first_bare}".encode()

    def final(self, server_first: bytes, nonce: str | None = None) -> bytes:
        """The client-final message; `nonce` other than the server's is for tests of the server's check."""
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        m = self.mechanism
        salted = m.salted_password(self.password, base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c=biws,r={fields['r'] if nonce is None else nonce}"
        auth_message = f"{self.client_first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = m.client_key(salted)
        signature = m.hmac(m.hash(client_key), auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = b"v=" + base64.b64encode(m.hmac(m.server_key(salted), auth_message))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    @property
    def expected_server_final(self) -> bytes | None:
        return self._server_signature

    def respond(self, challenge: bytes) -> bytes | None:
        if self._server_signature is None:
            return self.final(challenge)
        if not hmac.compare_digest(challenge, self._server_signature):
            raise SaslAuthenticationError("the server's SCRAM signature does not match: it does not know the password")
        return None


def client_mechanism(name: str, username: str, password: str) -> PlainClient | ScramClient:
    if name == "PLAIN":
        return PlainClient(username, password)
    if name in SCRAM_MECHANISMS:
        return ScramClient(SCRAM_MECHANISMS[name], username, password)
    raise ValueError(f"sasl.mechanism.inter.broker.protocol={name} is not served for the broker's own connections "
                     f"(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
