"""The SASL mechanisms as state machines: Kafka's answers, refusals and the CVE regressions of issue 14."""

from __future__ import annotations

import base64
import json
import time

import pytest

from wirebroker.security.jaas import login_module_options
from wirebroker.security.sasl import SaslAuthenticationError
from wirebroker.security.sasl.client import ScramClient
from wirebroker.security.sasl.oauthbearer import (
    OAuthBearerSaslServer,
    SignedJwtValidator,
    UnsecuredValidator,
)
from wirebroker.security.sasl.plain import PlainSaslServer, plain_users
from wirebroker.security.sasl.scram import ScramSaslServer
from wirebroker.security.scram_credential import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramCredential,
)

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')


def _plain() -> PlainSaslServer:
    return PlainSaslServer(plain_users(login_module_options(JAAS)[1]))


def test_plain_users_come_from_the_jaas_user_options():
    assert plain_users(login_module_options(JAAS)[1]) == {"admin": "admin-secret", "alice": "alice-secret"}


def test_plain_accepts_the_right_password_with_or_without_the_same_authzid():
    for message in (b"\0alice\0alice-secret", b"alice\0alice\0alice-secret"):
        server = _plain()
        assert server.evaluate_response(message) == b""
        assert server.complete and server.authorization_id == "alice"


@pytest.mark.parametrize(("message", "told"), [
    (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
    (b"\0mallory\0alice-secret", "Authentication failed: Invalid username or password"),
    (b"\0alice\0", "Authentication failed: password not specified"),
    (b"alice-secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
    # CVE-2017-12610: alice's password must not buy admin's authorization id
    (b"admin\0alice\0alice-secret",
     "Authentication failed: Client requested an authorization id that is different from username"),
])
def test_plain_refusals_tell_the_client_what_kafka_tells_it(message, told):
    server = _plain()
    with pytest.raises(SaslAuthenticationError) as refused:
        server.evaluate_response(message)
    assert refused.value.client_message == told
    assert not server.complete


def _scram(mechanism, password="bob-secret"):
    credentials = {("bob", mechanism.name): ScramCredential.from_password(mechanism, password, 4096)}
    return ScramSaslServer(mechanism, lambda m, user: credentials.get((user, m)))


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_scram_exchange_proves_both_sides(mechanism):
    server, client = _scram(mechanism), ScramClient(mechanism, "bob", "bob-secret", nonce="clientnonce123")
    server_first = server.evaluate_response(client.first())
    assert server_first.startswith(b"r=clientnonce123") and len(server_first.split(b",")[0]) > len("r=clientnonce123")
    assert server.evaluate_response(client.final(server_first)) == client.expected_server_final
    assert server.complete and server.authorization_id == "bob"


def test_scram_refuses_a_final_message_whose_nonce_is_not_the_servers():  # CVE-2024-56128
    server, client = _scram(SCRAM_SHA_512), ScramClient(SCRAM_SHA_512, "bob", "bob-secret", nonce="clientnonce123")
    server_first = server.evaluate_response(client.first())
    with pytest.raises(SaslAuthenticationError, match="invalid client nonce"):
        server.evaluate_response(client.final(server_first, nonce="clientnonce123"))  # the client's half only
    assert not server.complete


def test_scram_refuses_a_wrong_password_an_unknown_user_and_another_authzid():
    server, client = _scram(SCRAM_SHA_256), ScramClient(SCRAM_SHA_256, "bob", "not-it", nonce="clientnonce123")
    with pytest.raises(SaslAuthenticationError, match="wrong password for user bob"):
        server.evaluate_response(client.final(server.evaluate_response(client.first())))
    with pytest.raises(SaslAuthenticationError) as unknown:
        _scram(SCRAM_SHA_256).evaluate_response(ScramClient(SCRAM_SHA_256, "eve", "x").first())
    assert unknown.value.client_message == "Authentication failed: Invalid user credentials"
    with pytest.raises(SaslAuthenticationError, match="authorization id"):
        _scram(SCRAM_SHA_256).evaluate_response(ScramClient(SCRAM_SHA_256, "bob", "bob-secret").first("admin"))


def test_scram_credentials_round_trip_kafkas_text_form():
    credential = ScramCredential.from_password(SCRAM_SHA_512, "pw", 8192)
    text = credential.to_kafka_string()
    assert text.startswith("salt=") and ",stored_key=" in text and text.endswith(",iterations=8192")
    assert "pw" not in text.split(",")[0] and ScramCredential.from_kafka_string(text) == credential


def _b64(value: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _unsecured(claims: dict) -> str:
    return f"{_b64({'alg': 'none'})}.{_b64(claims)}."


def _bearer(token: str) -> bytes:
    return f"n,,\x01auth=Bearer {token}\x01\x01".encode()


def test_oauthbearer_unsecured_token_authenticates_its_subject_until_it_expires():
    exp = time.time() + 60
    server = OAuthBearerSaslServer(UnsecuredValidator())
    assert server.evaluate_response(_bearer(_unsecured({"sub": "carol", "exp": exp}))) == b""
    assert server.authorization_id == "carol" and server.credential_expiration_ms == int(exp * 1000)


def test_oauthbearer_expired_token_gets_the_error_challenge_then_fails():
    server = OAuthBearerSaslServer(UnsecuredValidator())
    challenge = server.evaluate_response(_bearer(_unsecured({"sub": "carol", "exp": time.time() - 5})))
    assert json.loads(challenge) == {"status": "invalid_token"} and not server.complete
    with pytest.raises(SaslAuthenticationError, match="expired"):
        server.evaluate_response(b"\x01")


def test_oauthbearer_unsecured_validator_checks_the_required_scope():
    validator = UnsecuredValidator.from_jaas_options({"unsecuredValidatorRequiredScope": "kafka"})
    server = OAuthBearerSaslServer(validator)
    assert server.evaluate_response(_bearer(_unsecured({"sub": "c", "exp": time.time() + 60}))) != b""
    server = OAuthBearerSaslServer(validator)
    assert server.evaluate_response(_bearer(_unsecured({"sub": "c", "exp": time.time() + 60, "scope": "kafka"}))) == b""


def test_oauthbearer_signed_tokens_are_checked_against_the_jwks_file(tmp_path):
    jwt = pytest.importorskip("jwt")
    from cryptography.hazmat.primitives.asymmetric import ec

    key, other = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    (tmp_path / "jwks.json").write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "ES256"}]}))
    validator = SignedJwtValidator(f"file://{tmp_path / 'jwks.json'}", ["kafka"], None, "sub", 0)

    def token(signer, **claims):
        return jwt.encode({"sub": "dave", "aud": "kafka", "exp": int(time.time()) + 60, **claims}, signer,
                          algorithm="ES256", headers={"kid": "k1"})

    server = OAuthBearerSaslServer(validator)
    assert server.evaluate_response(_bearer(token(key))) == b"" and server.authorization_id == "dave"
    for bad in (token(other), token(key, exp=int(time.time()) - 60), token(key, aud="elsewhere")):
        assert OAuthBearerSaslServer(validator).evaluate_response(_bearer(bad)) == b'{"status":"invalid_token"}'
