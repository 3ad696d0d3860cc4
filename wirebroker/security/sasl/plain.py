"""SASL/PLAIN (RFC 4616), as Kafka's PlainSaslServer with PlainServerCallbackHandler.

The users are the `user_<name>="<password>"` options of PlainLoginModule in the listener's JAAS config
(`listener.name.<listener>.plain.sasl.jaas.config`, else `sasl.jaas.config`). Passwords are compared in constant
time. An authorization id that differs from the user name is refused (CVE-2017-12610: Kafka once let a client pose
as any authorization id).
"""

from __future__ import annotations

import hmac

from wirebroker.security.sasl import SaslAuthenticationError

MECHANISM = "PLAIN"
_USER_OPTION_PREFIX = "user_"


def plain_users(jaas_options: dict[str, str]) -> dict[str, str]:
    return {key[len(_USER_OPTION_PREFIX):]: value for key, value in jaas_options.items()
            if key.startswith(_USER_OPTION_PREFIX)}


class PlainSaslServer:
    mechanism = MECHANISM
    credential_expiration_ms = None

    def __init__(self, users: dict[str, str]) -> None:
        self._users = users
        self._authorization_id = ""
        self._complete = False

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def authorization_id(self) -> str:
        return self._authorization_id

    def evaluate_response(self, response: bytes) -> bytes:
        # Kafka's messages, word for word: clients show them to their users.
        tokens = response.decode("utf-8", "replace").split("\0")
        if len(tokens) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}",
                                          f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(tokens)}")
        authorization_id, username, password = tokens
        if not username:
            raise SaslAuthenticationError("no user name", "Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError(f"no password for user {username}",
                                          "Authentication failed: password not specified")
        if authorization_id and authorization_id != username:
            raise SaslAuthenticationError(
                f"user {username} asked for authorization id {authorization_id}",
                "Authentication failed: Client requested an authorization id that is different from username")
        expected = self._users.get(username)
        # Compare against something even for an unknown user, so timing does not tell which users exist.
        matches = hmac.compare_digest((expected or "\0").encode(), password.encode())
        if expected is None or not matches:
            reason = "unknown user" if expected is None else "wrong password"
            raise SaslAuthenticationError(f"{reason} for user {username}",
                                          "Authentication failed: Invalid username or password")
        self._authorization_id = username
        self._complete = True
        return b""
