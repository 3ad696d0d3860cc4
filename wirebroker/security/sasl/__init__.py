"""SASL server mechanisms, each a small state machine fed the client's tokens (Kafka's SaslServer implementations).

A mechanism raises SaslAuthenticationError to refuse: `client_message` is what the client is told (Kafka's
SaslAuthenticationException message, or its generic "invalid credentials" line), `reason` what the broker logs.
"""

from __future__ import annotations

from typing import Protocol


class SaslAuthenticationError(Exception):
    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.client_message = client_message  # None: Kafka's generic "invalid credentials" message


class SaslServer(Protocol):
    mechanism: str

    def evaluate_response(self, response: bytes) -> bytes:
        """The challenge for the client's next token (b"" when there is none); raises SaslAuthenticationError."""

    @property
    def complete(self) -> bool: ...

    @property
    def authorization_id(self) -> str:
        """The authenticated user name, once complete."""

    @property
    def credential_expiration_ms(self) -> int | None:
        """When the credential itself expires (epoch ms; an OAuth token's exp), else None (KIP-368)."""
