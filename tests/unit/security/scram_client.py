"""The client side of SCRAM (RFC 5802) for tests: the messages a real client sends, and ways to get them wrong."""

from __future__ import annotations

import base64

from wirebroker.security.scram_credential import ScramMechanism


class ScramClient:
    def __init__(self, mechanism: ScramMechanism, user: str, password: str, nonce: str = "clientnonce123") -> None:
        self.mechanism, self.user, self.password, self.nonce = mechanism, user, password, nonce
        self.client_first_bare = f"n={user},r={nonce}"

    def first(self, authzid: str = "") -> bytes:
        return f"n,{'a=' + authzid if authzid else ''},{self.client_first_bare}".encode()

    def final(self, server_first: bytes, nonce: str | None = None) -> bytes:
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        m = self.mechanism
        salted = m.salted_password(self.password, base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c=biws,r={fields['r'] if nonce is None else nonce}"
        auth_message = f"{self.client_first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = m.client_key(salted)
        signature = m.hmac(m.hash(client_key), auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self.expected_server_final = b"v=" + base64.b64encode(m.hmac(m.server_key(salted), auth_message))
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()
