"""SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's ScramSaslServer.

    client-first  n,[a=authzid],n=<user>,r=<client nonce>[,extensions]
    server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final  c=biws,r=<the same combined nonce>,p=<base64 ClientProof>
    server-final  v=<base64 ServerSignature>

The client-final nonce must be the server-first one (CVE-2024-56128: Kafka before 3.7.2/3.8.1 did not check it).
Only Kafka's `tokenauth` extension is accepted, and refused here since delegation tokens are not served. Channel
binding is not supported (gs2 header "n" or "y").
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
import secrets
from collections.abc import Callable

from wirebroker.security.sasl import SaslAuthenticationError
from wirebroker.security.scram_credential import ScramCredential, ScramMechanism

# RFC 5802's grammar as Kafka's ScramMessages reads it.
_CLIENT_FIRST = re.compile(r"(?P<gs2>[ny]),(a=(?P<authzid>[^,]*))?,(?P<bare>n=(?P<saslname>[^,]*),"
                           r"r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)(?P<extensions>(,[A-Za-z]+=[^,]*)*))")
_CLIENT_FINAL = re.compile(r"(?P<without_proof>c=(?P<channel_binding>[A-Za-z0-9+/=]+),r=(?P<nonce>[\x21-\x2b\x2d-\x7e]+)"
                           r"(,[A-Za-z]+=[^,]*)*),p=(?P<proof>[A-Za-z0-9+/=]+)")

CredentialLookup = Callable[[str, str], ScramCredential | None]  # (mechanism, user) -> credential


def scram_username(sasl_name: str) -> str:
    """RFC 5802's saslname: ',' and '=' arrive as '=2C' and '=3D'."""
    if re.search(r"=(?!2C|3D)", sasl_name):
        raise SaslAuthenticationError(f"invalid SCRAM user name '{sasl_name}'")
    return sasl_name.replace("=2C", ",").replace("=3D", "=")


class ScramSaslServer:
    credential_expiration_ms = None

    def __init__(self, mechanism: ScramMechanism, credentials: CredentialLookup) -> None:
        self.mechanism = mechanism.name
        self._scram = mechanism
        self._credentials = credentials
        self._state = "client-first"
        self._username = ""
        self._client_first_bare = ""
        self._gs2_header = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None

    @property
    def complete(self) -> bool:
        return self._state == "complete"

    @property
    def authorization_id(self) -> str:
        return self._username

    def evaluate_response(self, response: bytes) -> bytes:
        text = response.decode("utf-8", "replace")
        if self._state == "client-first":
            return self._client_first(text)
        if self._state == "client-final":
            return self._client_final(text)
        raise SaslAuthenticationError(f"unexpected SCRAM message after the exchange ended ({self._state})")

    def _client_first(self, text: str) -> bytes:
        match = _CLIENT_FIRST.fullmatch(text)
        if match is None:
            raise SaslAuthenticationError("invalid SCRAM client-first message")
        extensions = dict(item.split("=", 1) for item in match["extensions"].split(",")[1:])
        if extensions:
            raise SaslAuthenticationError(f"unsupported SCRAM extensions {sorted(extensions)}")
        self._username = scram_username(match["saslname"])
        credential = self._credentials(self.mechanism, self._username)
        if credential is None:
            raise SaslAuthenticationError(f"no {self.mechanism} credential for user {self._username}",
                                          "Authentication failed: Invalid user credentials")
        if match["authzid"] and match["authzid"] != self._username:
            raise SaslAuthenticationError(
                f"user {self._username} asked for authorization id {match['authzid']}",
                "Authentication failed: Client requested an authorization id that is different from username")
        if credential.iterations < self._scram.min_iterations:
            raise SaslAuthenticationError(f"Iterations {credential.iterations} is less than the minimum "
                                          f"{self._scram.min_iterations} for {self.mechanism}")
        self._credential = credential
        self._client_first_bare = match["bare"]
        self._gs2_header = text[: len(text) - len(match["bare"])]
        self._nonce = match["nonce"] + secrets.token_urlsafe(24)
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        self._state = "client-final"
        return self._server_first.encode()

    def _client_final(self, text: str) -> bytes:
        match = _CLIENT_FINAL.fullmatch(text)
        if match is None:
            raise SaslAuthenticationError(f"invalid SCRAM client-final message from user {self._username}")
        if not hmac.compare_digest(match["nonce"].encode(), self._nonce.encode()):  # CVE-2024-56128
            raise SaslAuthenticationError(f"invalid client nonce in the final message of user {self._username}")
        if match["channel_binding"] != base64.b64encode(self._gs2_header.encode()).decode():
            raise SaslAuthenticationError(f"channel binding of user {self._username} does not match its gs2 header")
        credential = self._credential
        auth_message = f"{self._client_first_bare},{self._server_first},{match['without_proof']}".encode()
        try:
            proof = base64.b64decode(match["proof"], validate=True)
        except binascii.Error:
            raise SaslAuthenticationError(f"invalid client proof from user {self._username}") from None
        client_signature = self._scram.hmac(credential.stored_key, auth_message)
        if len(proof) != len(client_signature):
            raise SaslAuthenticationError(f"invalid client proof from user {self._username}")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(self._scram.hash(client_key), credential.stored_key):
            raise SaslAuthenticationError(f"wrong password for user {self._username}")
        server_signature = self._scram.hmac(credential.server_key, auth_message)
        self._state = "complete"
        self._credential = None
        return b"v=" + base64.b64encode(server_signature)
