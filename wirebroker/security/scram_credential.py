"""SCRAM credentials (RFC 5802 section 3), stored salted and hashed as Kafka stores them, never the password.

A credential is (salt, StoredKey, ServerKey, iterations): enough to check a client's proof and to prove the server
knows the password, not enough to log in. Kafka's text form (ScramCredentialUtils), kept by the credential store:

    salt=<base64>,stored_key=<base64>,server_key=<base64>,iterations=<n>
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ScramMechanism:
    name: str  # Kafka's mechanism name
    hash_name: str  # hashlib's
    type_code: int  # AlterUserScramCredentials' mechanism byte
    min_iterations: int = 4096  # Kafka's ScramMechanism bounds, enforced on AlterUserScramCredentials
    max_iterations: int = 16384

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def salted_password(self, password: str, salt: bytes, iterations: int) -> bytes:
        """Hi(Normalize(password), salt, i): PBKDF2 with this mechanism's HMAC (SASLprep left to the client)."""
        return hashlib.pbkdf2_hmac(self.hash_name, password.encode(), salt, iterations)

    def client_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Client Key")

    def server_key(self, salted_password: bytes) -> bytes:
        return self.hmac(salted_password, b"Server Key")


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256", 1)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512", 2)
MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MECHANISMS_BY_TYPE = {m.type_code: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: ScramMechanism, salted_password: bytes, salt: bytes,
                             iterations: int) -> ScramCredential:
        """What AlterUserScramCredentials stores: the client sends SaltedPassword, never the password."""
        return cls(salt, mechanism.hash(mechanism.client_key(salted_password)), mechanism.server_key(salted_password),
                   iterations)

    @classmethod
    def from_password(cls, mechanism: ScramMechanism, password: str, iterations: int = 4096,
                      salt: bytes | None = None) -> ScramCredential:
        salt = os.urandom(32) if salt is None else salt
        return cls.from_salted_password(mechanism, mechanism.salted_password(password, salt, iterations), salt,
                                        iterations)

    def to_kafka_string(self) -> str:
        b64 = base64.b64encode
        return (f"salt={b64(self.salt).decode()},stored_key={b64(self.stored_key).decode()},"
                f"server_key={b64(self.server_key).decode()},iterations={self.iterations}")

    @classmethod
    def from_kafka_string(cls, text: str) -> ScramCredential:
        fields = dict(item.split("=", 1) for item in text.split(","))
        try:
            return cls(base64.b64decode(fields["salt"]), base64.b64decode(fields["stored_key"]),
                       base64.b64decode(fields["server_key"]), int(fields["iterations"]))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"not a SCRAM credential: {exc}") from None
