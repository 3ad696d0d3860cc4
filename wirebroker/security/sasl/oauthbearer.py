"""SASL/OAUTHBEARER (RFC 7628), as Kafka's OAuthBearerSaslServer with its two validators:

- unsecured JWS (Kafka's default, OAuthBearerUnsecuredValidatorCallbackHandler; development only): `alg: none`, no
  signature; options from the listener's OAuthBearerLoginModule JAAS config: unsecuredValidatorPrincipalClaimName
  (sub), unsecuredValidatorScopeClaimName (scope), unsecuredValidatorRequiredScope, unsecuredValidatorAllowableClockSkewMs.
- signed JWT (`sasl.server.callback.handler.class=...OAuthBearerValidatorCallbackHandler`): the signature checked
  with PyJWT against the keys of `sasl.oauthbearer.jwks.endpoint.url` (a file: URL), exp required, aud and iss
  checked when configured, `sasl.oauthbearer.clock.skew.seconds` of leeway.

A token refused gets the RFC 7628 error challenge `{"status":"invalid_token"}`; the client answers with a lone
%x01 and only then is the exchange failed, as RFC 7628 section 3.2.2 and Kafka do.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wirebroker.security.sasl import SaslAuthenticationError

MECHANISM = "OAUTHBEARER"
VALIDATOR_CALLBACK_HANDLER = "OAuthBearerValidatorCallbackHandler"  # the class name's end selects signed JWTs
_INITIAL = re.compile(r"(?P<gs2>[ny]),(a=(?P<authzid>[^,]*))?,\x01(?P<kvpairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]*\x01)*)\x01")
_BEARER = re.compile(r"Bearer ([-_.a-zA-Z0-9]+)")
_INVALID_TOKEN = b'{"status":"invalid_token"}'


class InvalidTokenError(Exception):
    pass


@dataclass(frozen=True)
class Token:
    principal: str
    expiration_ms: int


TokenValidator = Callable[[str], Token]  # raises InvalidTokenError


def _b64url_json(part: str) -> dict:
    try:
        value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidTokenError(f"not base64url JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InvalidTokenError("not a JSON object")
    return value


@dataclass(frozen=True)
class UnsecuredValidator:
    principal_claim: str = "sub"
    scope_claim: str = "scope"
    required_scope: Sequence[str] = ()
    clock_skew_ms: int = 0

    @classmethod
    def from_jaas_options(cls, options: dict[str, str]) -> UnsecuredValidator:
        scope = options.get("unsecuredValidatorRequiredScope", "")
        return cls(options.get("unsecuredValidatorPrincipalClaimName", "sub"),
                   options.get("unsecuredValidatorScopeClaimName", "scope"),
                   tuple(s for s in scope.split(",") if s.strip()),
                   int(options.get("unsecuredValidatorAllowableClockSkewMs", "0")))

    def __call__(self, token: str) -> Token:
        parts = token.split(".")
        if len(parts) != 3 or parts[2]:
            raise InvalidTokenError("an unsecured JWS has three parts and an empty signature")
        if _b64url_json(parts[0]).get("alg") != "none":
            raise InvalidTokenError("an unsecured JWS must have alg 'none'")
        claims = _b64url_json(parts[1])
        now_ms = time.time() * 1000
        token_out = _claims_token(claims, self.principal_claim, now_ms, self.clock_skew_ms)
        scope = claims.get(self.scope_claim, [])
        scopes = scope.split() if isinstance(scope, str) else list(scope)
        missing = [s for s in self.required_scope if s not in scopes]
        if missing:
            raise InvalidTokenError(f"the token lacks the required scope {missing}")
        return token_out


def _claims_token(claims: dict, principal_claim: str, now_ms: float, skew_ms: float) -> Token:
    principal = claims.get(principal_claim)
    if not isinstance(principal, str) or not principal.strip():
        raise InvalidTokenError(f"no principal claim '{principal_claim}'")
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)):
        raise InvalidTokenError("no expiration time (exp)")
    if exp * 1000 <= now_ms - skew_ms:
        raise InvalidTokenError(f"the token expired at {exp} (now {now_ms / 1000:.0f})")
    iat = claims.get("iat")
    if isinstance(iat, (int, float)) and iat * 1000 > now_ms + skew_ms:
        raise InvalidTokenError(f"the token is issued in the future (iat {iat})")
    return Token(principal, int(exp * 1000))


class SignedJwtValidator:
    """Signed JWTs checked against a JWKS file with PyJWT (imported only when a listener configures this)."""

    def __init__(self, jwks_url: str, audience: Sequence[str], issuer: str | None, principal_claim: str,
                 clock_skew_seconds: int) -> None:
        import jwt  # PyJWT: loaded only for a listener that validates signed tokens

        if not jwks_url or not jwks_url.startswith("file:"):
            raise ValueError("sasl.oauthbearer.jwks.endpoint.url must be a file: URL naming a JWKS file")
        with open(jwks_url.removeprefix("file://").removeprefix("file:")) as f:
            self._keys = jwt.PyJWKSet.from_json(f.read())
        self._jwt = jwt
        self._audience = list(audience) or None
        self._issuer = issuer
        self._principal_claim = principal_claim
        self._leeway = clock_skew_seconds

    def __call__(self, token: str) -> Token:
        jwt = self._jwt
        try:
            header = jwt.get_unverified_header(token)
            keys = [k for k in self._keys.keys if header.get("kid") in (None, k.key_id)]
            if not keys:
                raise InvalidTokenError(f"no key with id {header.get('kid')!r}")
            claims = jwt.decode(token, keys[0].key, algorithms=[header.get("alg", "")], audience=self._audience,
                                issuer=self._issuer, leeway=self._leeway, options={"require": ["exp"]})
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(str(exc)) from None
        return _claims_token(claims, self._principal_claim, time.time() * 1000, self._leeway * 1000)


class OAuthBearerSaslServer:
    mechanism = MECHANISM

    def __init__(self, validator: TokenValidator) -> None:
        self._validator = validator
        self._token: Token | None = None
        self._error: str | None = None  # the refusal awaiting the client's %x01

    @property
    def complete(self) -> bool:
        return self._token is not None

    @property
    def authorization_id(self) -> str:
        return self._token.principal if self._token else ""

    @property
    def credential_expiration_ms(self) -> int | None:
        return self._token.expiration_ms if self._token else None

    def evaluate_response(self, response: bytes) -> bytes:
        if self._error is not None:
            if response != b"\x01":
                raise SaslAuthenticationError(f"{self._error}; then no %x01 from the client")
            raise SaslAuthenticationError(self._error, f"Authentication failed: {self._error}")
        match = _INITIAL.fullmatch(response.decode("utf-8", "replace"))
        if match is None:
            raise SaslAuthenticationError("invalid OAUTHBEARER initial client response")
        pairs = dict(item.split("=", 1) for item in match["kvpairs"].split("\x01") if item)
        bearer = _BEARER.fullmatch(pairs.pop("auth", ""))
        if bearer is None:
            raise SaslAuthenticationError("no 'auth=Bearer <token>' in the OAUTHBEARER client response")
        try:
            token = self._validator(bearer.group(1))
        except InvalidTokenError as exc:
            self._error = f"invalid token: {exc}"
            return _INVALID_TOKEN
        if match["authzid"] and match["authzid"] != token.principal:
            raise SaslAuthenticationError(
                f"token of {token.principal} asked for authorization id {match['authzid']}",
                "Authentication failed: Client requested an authorization id that is different from username")
        self._token = token
        return b""
