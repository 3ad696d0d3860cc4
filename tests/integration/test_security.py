"""Issue 14 items 1-3 on a real broker: listeners of every security protocol at once, real clients authenticating
with each SASL mechanism over SASL_PLAINTEXT and SASL_SSL and with TLS client certificates, the refusals the
issue names (wrong password, unknown user, bad certificate, expired token) and its CVE regressions, each with the
broker's log line saying who was refused and why."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import struct
import time

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.raw_client import RawClient
from tests.integration.tls_certificates import (
    PKCS12_PASSWORD,
    broker_pem_keystore,
    jks_stores,
    make_pki,
)
from wirebroker.network.ports import free_port
from wirebroker.protocol.errors import ErrorCode
from wirebroker.security.sasl.client import ScramClient
from wirebroker.security.scram_credential import SCRAM_SHA_512

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
PASSWORDS = {"PLAIN": ("alice", "alice-secret"), "SCRAM-SHA-256": ("bob", "bob-secret"),
             "SCRAM-SHA-512": ("bob", "bob-secret"), "OAUTHBEARER": ("carol", "")}
SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA = 17, 36, 3
REAUTH_MS = 1500  # connections.max.reauth.ms of the REAUTH listener (KIP-368)


class SecureBroker:
    def __init__(self, tmp_path) -> None:
        self.pki = make_pki(tmp_path / "pki")
        self.ports = {name: free_port() for name in ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL", "MTLS",
                                                          "REAUTH", "JWT")}
        self.jwt_key, jwks = jwt_signing_key(tmp_path / "jwks.json")
        listeners = ",".join(f"{name}://127.0.0.1:{port}" for name, port in self.ports.items())
        self.process = BrokerProcess(tmp_path / "data", {
            "listeners": listeners,
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,"
                                              "SSL:SSL,MTLS:SSL,REAUTH:SASL_PLAINTEXT,JWT:SASL_PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "sasl.enabled.mechanisms": ",".join(MECHANISMS),
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.reauth.plain.sasl.jaas.config": PLAIN_JAAS,
            "listener.name.reauth.connections.max.reauth.ms": str(REAUTH_MS),
            "listener.name.jwt.sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.jwt.oauthbearer.sasl.server.callback.handler.class":
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
            "listener.name.jwt.sasl.oauthbearer.jwks.endpoint.url": f"file://{jwks}",
            "listener.name.jwt.sasl.oauthbearer.expected.audience": "kafka",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(self.pki.broker.pkcs12),
            "ssl.keystore.password": PKCS12_PASSWORD,
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.pki.ca_pem),
            "ssl.client.auth": "requested",
            "listener.name.mtls.ssl.client.auth": "required",
            "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),.*$/$1/L,DEFAULT",
        }, port=self.ports["PLAINTEXT"]).start()
        admin = AdminClient({"bootstrap.servers": self.bootstrap("PLAINTEXT")})
        upserts = [UserScramCredentialUpsertion("bob", ScramCredentialInfo(mechanism, 4096), b"bob-secret")
                   for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)]
        for future in admin.alter_user_scram_credentials(upserts).values():
            future.result(timeout=30)

    def bootstrap(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    def log_lines(self, text: str) -> list[str]:
        return [line for line in self.process.log_text().splitlines() if text in line]

    def logged(self, text: str, timeout: float = 10) -> list[str]:
        """The log lines naming `text`, waiting for the first: the broker may log a refusal after the client saw it."""
        deadline = time.monotonic() + timeout
        while not (lines := self.log_lines(text)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return lines


def jwt_signing_key(jwks_path):
    """An ES256 key whose public half is the JWKS file the JWT listener checks signed tokens against."""
    jwt = pytest.importorskip("jwt")
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    public = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
    jwks_path.write_text(json.dumps({"keys": [{**public, "kid": "test-key", "use": "sig", "alg": "ES256"}]}))
    return key, jwks_path


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    broker = SecureBroker(tmp_path_factory.mktemp("security"))
    yield broker
    try:
        broker.process.stop()
    finally:
        broker.process.kill()


def unsecured_jws(subject: str, lifetime_s: float) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'sub': subject, 'exp': time.time() + lifetime_s})}."


def confluent_config(secure: SecureBroker, listener: str, mechanism: str | None = None, **extra) -> dict:
    protocol = {"MTLS": "SSL"}.get(listener, listener)
    config = {"bootstrap.servers": secure.bootstrap(listener), "security.protocol": protocol, "log_level": 0}
    if "SSL" in protocol:
        config["ssl.ca.location"] = str(secure.pki.ca_pem)
    if mechanism == "OAUTHBEARER":
        config.update({"sasl.mechanism": mechanism, "enable.sasl.oauthbearer.unsecure.jwt": True,
                       "sasl.oauthbearer.config": "principal=carol lifeSeconds=600"})
    elif mechanism is not None:
        user, password = PASSWORDS[mechanism]
        config.update({"sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password})
    return {**config, **extra}


def confluent_round_trip(config: dict, topic: str) -> None:
    producer = confluent_kafka.Producer(config)
    producer.produce(topic, b"secret value")
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**config, "group.id": f"g-{topic}", "enable.auto.commit": False})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    try:
        message = consumer.poll(30)
        assert message is not None and message.error() is None and message.value() == b"secret value"
    finally:
        consumer.close()


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_kafka_authenticates_produces_and_consumes(secure, listener, mechanism):
    topic = f"ck-{listener}-{mechanism}".lower()
    confluent_round_trip(confluent_config(secure, listener, mechanism), topic)


def kafka_python_config(secure: SecureBroker, listener: str, mechanism: str | None) -> dict:
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Token(AbstractTokenProvider):
        def token(self):
            return unsecured_jws("carol", 600)

    config = {"bootstrap_servers": secure.bootstrap(listener), "security_protocol": listener}
    if "SSL" in listener:
        config.update({"ssl_cafile": str(secure.pki.ca_pem), "ssl_check_hostname": False})
    if mechanism == "OAUTHBEARER":
        config.update({"sasl_mechanism": mechanism, "sasl_oauth_token_provider": Token()})
    elif mechanism is not None:
        user, password = PASSWORDS[mechanism]
        config.update({"sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password})
    return config


@pytest.mark.parametrize(("listener", "mechanism"), [
    ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"), ("SASL_PLAINTEXT", "OAUTHBEARER"),
    ("SASL_SSL", "SCRAM-SHA-512"), ("SASL_SSL", "PLAIN"), ("SSL", None),
])
def test_kafka_python_authenticates_produces_and_consumes(secure, listener, mechanism):
    kafka = pytest.importorskip("kafka")
    topic = f"kp-{listener}-{mechanism}".lower()
    config = kafka_python_config(secure, listener, mechanism)
    producer = kafka.KafkaProducer(**config)
    producer.send(topic, b"secret value").get(timeout=30)
    producer.close()
    consumer = kafka.KafkaConsumer(**config, auto_offset_reset="earliest", consumer_timeout_ms=20000)
    consumer.assign([kafka.TopicPartition(topic, 0)])
    try:
        assert next(iter(consumer)).value == b"secret value"
    finally:
        consumer.close()


@pytest.mark.parametrize("client_certificate", [False, True])
def test_tls_with_and_without_a_client_certificate(secure, client_certificate):
    extra = {}
    if client_certificate:
        alice = secure.pki.client("alice-cert", CN="Alice", OU="eng", O="acme")
        extra = {"ssl.certificate.location": str(alice.cert_pem), "ssl.key.location": str(alice.key_pem)}
    confluent_round_trip(confluent_config(secure, "MTLS" if client_certificate else "SSL", **extra),
                         f"tls-{client_certificate}".lower())


def _first_error(config: dict) -> confluent_kafka.KafkaError:
    errors = []
    producer = confluent_kafka.Producer({**config, "error_cb": errors.append})
    deadline = time.monotonic() + 20
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert errors, "the client was not refused"
    return errors[0]


@pytest.mark.parametrize(("mechanism", "user", "password", "logged"), [
    ("PLAIN", "alice", "wrong", "SASL mechanism PLAIN): wrong password for user alice"),
    ("PLAIN", "mallory", "x", "SASL mechanism PLAIN): unknown user for user mallory"),
    ("SCRAM-SHA-512", "bob", "wrong", "SASL mechanism SCRAM-SHA-512): wrong password for user bob"),
    ("SCRAM-SHA-256", "nobody", "x", "SASL mechanism SCRAM-SHA-256): no SCRAM-SHA-256 credential for user nobody"),
])
def test_wrong_passwords_and_unknown_users_are_refused_and_logged(secure, mechanism, user, password, logged):
    error = _first_error(confluent_config(secure, "SASL_PLAINTEXT", mechanism, **{
        "sasl.username": user, "sasl.password": password}))
    assert error.code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert "Authentication failed" in error.str()
    assert [line for line in secure.logged(logged) if "Failed authentication with 127.0.0.1:" in line]


def test_a_certificate_from_another_ca_is_refused_by_the_tls_handshake(secure, tmp_path):
    stranger = make_pki(tmp_path / "other-ca").client("stranger", CN="stranger", O="elsewhere")
    error = _first_error(confluent_config(secure, "MTLS", **{
        "ssl.certificate.location": str(stranger.cert_pem), "ssl.key.location": str(stranger.key_pem)}))
    assert error.code() in (confluent_kafka.KafkaError._SSL, confluent_kafka.KafkaError._TRANSPORT,
                            confluent_kafka.KafkaError._ALL_BROKERS_DOWN)
    assert secure.logged("SSL handshake failed")


# ---- byte-level cases: the CVE regressions and the pre-authentication rules -------------------------------------


def raw_sasl(secure: SecureBroker, mechanism: str, listener: str = "SASL_PLAINTEXT") -> RawClient:
    client = RawClient(secure.bootstrap(listener))
    assert client.request(SASL_HANDSHAKE, 1, mechanism=mechanism).error_code == ErrorCode.NONE
    return client


def _closed(client: RawClient | socket.socket) -> bool:
    sock = client.sock if isinstance(client, RawClient) else client
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_plain_with_an_authzid_other_than_the_user_is_refused(secure):  # CVE-2017-12610
    with raw_sasl(secure, "PLAIN") as client:
        response = client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"admin\0alice\0alice-secret")
        assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert "authorization id that is different from username" in response.error_message
        assert _closed(client)


def test_a_scram_final_message_with_a_wrong_nonce_is_refused(secure):  # CVE-2024-56128
    with raw_sasl(secure, "SCRAM-SHA-512") as client:
        scram = ScramClient(SCRAM_SHA_512, "bob", "bob-secret")
        server_first = client.request(SASL_AUTHENTICATE, 2, auth_bytes=scram.first()).auth_bytes
        final = scram.final(server_first, nonce=scram.nonce)  # the right proof for the wrong (client-only) nonce
        response = client.request(SASL_AUTHENTICATE, 2, auth_bytes=final)
        assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert _closed(client)
    assert secure.logged("invalid client nonce in the final message of user bob")


def test_an_expired_token_is_refused(secure):
    with raw_sasl(secure, "OAUTHBEARER") as client:
        token = unsecured_jws("carol", -60)
        challenge = client.request(SASL_AUTHENTICATE, 2, auth_bytes=f"n,,\x01auth=Bearer {token}\x01\x01".encode())
        assert challenge.error_code == ErrorCode.NONE and json.loads(challenge.auth_bytes) == {"status": "invalid_token"}
        response = client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"\x01")
        assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and "expired" in response.error_message
    assert secure.logged("SASL mechanism OAUTHBEARER): invalid token: the token expired")


def test_no_other_api_is_served_before_authentication(secure):
    with RawClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.request(18, 3, client_software_name="raw", client_software_version="1")  # ApiVersions is
        client.correlation_id += 1
        client.send_frame(struct.pack(">hhih", METADATA, 12, client.correlation_id, 3) + b"raw\x00\x01\x00")
        assert _closed(client)
    assert secure.logged("unexpected request (API key 3 v12) during SASL authentication")


def test_an_oversized_frame_before_authentication_closes_the_connection(secure):
    with socket.create_connection(("127.0.0.1", secure.ports["SASL_PLAINTEXT"]), timeout=10) as sock:
        sock.sendall(struct.pack(">i", 524288 + 1) + b"\0" * 1024)  # under socket.request.max.bytes, over the limit
        assert _closed(sock)
    assert secure.logged("larger than 524288")


def test_an_authenticated_client_gets_its_session_lifetime_and_then_may_send_anything(secure):
    with raw_sasl(secure, "PLAIN") as client:
        response = client.request(SASL_AUTHENTICATE, 1, auth_bytes=b"\0alice\0alice-secret")
        assert (response.error_code, response.session_lifetime_ms) == (ErrorCode.NONE, 0)  # reauth not configured
        assert client.request(METADATA, 12, topics=[], allow_auto_topic_creation=False).brokers


def test_tls_listener_speaks_nothing_but_tls(secure):
    with socket.create_connection(("127.0.0.1", secure.ports["SSL"]), timeout=10) as sock:
        sock.sendall(struct.pack(">i", 10) + b"\0" * 10)  # a Kafka frame, not a ClientHello
        assert _closed(sock)
    context = ssl.create_default_context(cafile=str(secure.pki.ca_pem))
    with socket.create_connection(("127.0.0.1", secure.ports["SSL"]), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        client = RawClient.over(tls)
        assert client.request(METADATA, 12, topics=[], allow_auto_topic_creation=False).brokers


# ---- principals as the authorizer sees them ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def authorizing(tmp_path_factory):
    """A broker enforcing ACLs with one super user, alice: by certificate (CN=Alice, mapped) or by PLAIN."""
    directory = tmp_path_factory.mktemp("principals")
    pki = make_pki(directory / "pki")
    ports = {"PLAINTEXT": free_port(), "SSL": free_port(), "SASL_PLAINTEXT": free_port()}
    process = BrokerProcess(directory / "data", {
        "listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:alice",
        "allow.everyone.if.no.acl.found": "false",
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.jaas.config": PLAIN_JAAS.replace('user_alice="alice-secret"', 'user_alice="alice-secret" user_bob="b"'),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(broker_pem_keystore(pki.broker)),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.ca_pem),
        "ssl.client.auth": "requested",
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]*),.*$/$1/L",
    }, port=ports["PLAINTEXT"]).start()
    yield pki, ports
    try:
        process.stop()
    finally:
        process.kill()


def _delivery_error(config: dict, topic: str):
    outcome = []
    producer = confluent_kafka.Producer({**config, "message.timeout.ms": 10000})
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "no delivery report"
    return outcome[0]


def test_the_principal_is_the_mapped_certificate_dn_or_the_sasl_user_else_anonymous(authorizing):
    pki, ports = authorizing
    alice = pki.client("alice", CN="Alice", OU="eng", O="acme")
    tls = {"bootstrap.servers": f"127.0.0.1:{ports['SSL']}", "security.protocol": "SSL", "log_level": 0,
           "ssl.ca.location": str(pki.ca_pem)}
    sasl = {"bootstrap.servers": f"127.0.0.1:{ports['SASL_PLAINTEXT']}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN", "log_level": 0}
    # User:alice, a super user, by certificate (CN=Alice lower-cased by the rule) and by PLAIN
    assert _delivery_error({**tls, "ssl.certificate.location": str(alice.cert_pem),
                            "ssl.key.location": str(alice.key_pem)}, "by-cert") is None
    assert _delivery_error({**sasl, "sasl.username": "alice", "sasl.password": "alice-secret"}, "by-cert") is None
    # User:ANONYMOUS (TLS without a certificate) and User:bob hold no ACL
    for config in (tls, {**sasl, "sasl.username": "bob", "sasl.password": "b"}):
        error = _delivery_error(config, "by-cert")
        assert error is not None and error.code() == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED


# ---- KIP-368 re-authentication -----------------------------------------------------------------------------------


def _metadata(client: RawClient):
    return client.request(METADATA, 12, topics=[], allow_auto_topic_creation=False)


def test_an_expired_session_is_closed_at_its_next_request(secure):
    with raw_sasl(secure, "PLAIN", "REAUTH") as client:
        response = client.request(SASL_AUTHENTICATE, 1, auth_bytes=b"\0alice\0alice-secret")
        assert (response.error_code, response.session_lifetime_ms) == (ErrorCode.NONE, REAUTH_MS)
        assert _metadata(client).brokers
        time.sleep(REAUTH_MS / 1000 + 0.3)
        client.correlation_id += 1
        client.send_frame(struct.pack(">hhih", METADATA, 12, client.correlation_id, 3) + b"raw\x00\x01\x00")
        assert _closed(client)
    assert secure.logged("the SASL session of User:alice expired")


def test_re_authenticating_in_time_extends_the_session_but_not_as_another_user(secure):
    with raw_sasl(secure, "PLAIN", "REAUTH") as client:
        assert client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"\0alice\0alice-secret").error_code == 0
        time.sleep(REAUTH_MS / 2000)
        assert client.request(SASL_HANDSHAKE, 1, mechanism="PLAIN").error_code == ErrorCode.NONE
        again = client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"\0alice\0alice-secret")
        assert (again.error_code, again.session_lifetime_ms) == (ErrorCode.NONE, REAUTH_MS)
        time.sleep(REAUTH_MS / 1000 * 0.75)  # past the first session's end, within the second's
        assert _metadata(client).brokers
        assert client.request(SASL_HANDSHAKE, 1, mechanism="PLAIN").error_code == ErrorCode.NONE
        other = client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"\0admin\0admin-secret")
        assert other.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert "Cannot change principals during re-authentication" in other.error_message


def test_confluent_kafka_re_authenticates_and_keeps_producing(secure):
    config = {**confluent_config(secure, "SASL_PLAINTEXT", "PLAIN"), "bootstrap.servers": secure.bootstrap("REAUTH")}
    expired_before = len(secure.log_lines("SASL session of User:alice expired"))
    producer = confluent_kafka.Producer(config)
    for round_ in range(3):  # 2.4 sessions long: without re-authenticating its connection would be closed
        producer.produce("reauth", f"v{round_}".encode())
        assert producer.flush(30) == 0
        time.sleep(REAUTH_MS / 1000 * 0.8)
    assert len(secure.log_lines("SASL session of User:alice expired")) == expired_before


def test_a_large_fetch_over_tls_streams_the_log_in_chunks(secure):
    """No sendfile through TLS: 8 MB of records go out in 64 KiB chunks read from the segment (network/tls.py)."""
    values = [bytes([i]) * 400_000 for i in range(20)]
    producer = confluent_kafka.Producer({"bootstrap.servers": secure.bootstrap("PLAINTEXT"), "log_level": 0,
                                         "compression.type": "none"})
    for value in values:
        producer.produce("tls-large", value)
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**confluent_config(secure, "SSL"), "group.id": "tls-large",
                                         "fetch.max.bytes": 50 * 1024 * 1024,
                                         "max.partition.fetch.bytes": 50 * 1024 * 1024})
    consumer.assign([confluent_kafka.TopicPartition("tls-large", 0, 0)])
    received = []
    deadline = time.monotonic() + 30
    try:
        while len(received) < len(values) and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                received.append(message.value())
    finally:
        consumer.close()
    assert received == values


def test_jks_keystore_and_truststore_as_kafka_configures_them(tmp_path):
    pytest.importorskip("jks")
    pki = make_pki(tmp_path / "pki")
    keystore, truststore = jks_stores(pki.broker, pki.ca_pem)
    port = free_port()
    process = BrokerProcess(tmp_path / "data", {
        "listeners": f"SSL://127.0.0.1:{port}", "ssl.keystore.location": str(keystore),
        "ssl.keystore.password": PKCS12_PASSWORD, "ssl.key.password": PKCS12_PASSWORD,
        "ssl.truststore.location": str(truststore), "ssl.truststore.password": PKCS12_PASSWORD,
        "ssl.client.auth": "required",  # ssl.keystore.type and ssl.truststore.type: Kafka's default, JKS
    }, port=port).start()
    try:
        client = pki.client("client", CN="client")
        confluent_round_trip({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL", "log_level": 0,
                              "ssl.ca.location": str(pki.ca_pem), "ssl.certificate.location": str(client.cert_pem),
                              "ssl.key.location": str(client.key_pem)}, "jks")
    finally:
        process.kill()


def test_kafka_configs_adds_a_scram_user_that_then_authenticates(secure):
    """`kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[...]' --entity-type users` (Kafka's ConfigCommand)."""
    from compat_tests.reference_kafka import TOOLS, install_jars, run_tool

    done = run_tool(install_jars(), TOOLS["configs"], [
        "--bootstrap-server", secure.bootstrap("PLAINTEXT"), "--alter", "--entity-type", "users",
        "--entity-name", "dave", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=dave-secret]"])
    assert done.returncode == 0 and "Completed updating config for user dave" in done.stdout, done.stderr[-2000:]
    confluent_round_trip(confluent_config(secure, "SASL_SSL", "SCRAM-SHA-512", **{
        "sasl.username": "dave", "sasl.password": "dave-secret"}), "kafka-configs-user")


def test_signed_jwts_are_checked_against_the_jwks_file(secure):
    """OAUTHBEARER with Kafka's OAuthBearerValidatorCallbackHandler: confluent-kafka's oauth_cb hands signed tokens."""
    import jwt

    def token_from(signer, audience="kafka"):
        def oauth_cb(_config):
            expires = time.time() + 300
            claims = {"sub": "erin", "aud": audience, "exp": int(expires), "iat": int(time.time())}
            return jwt.encode(claims, signer, algorithm="ES256", headers={"kid": "test-key"}), expires
        return oauth_cb

    config = {"bootstrap.servers": secure.bootstrap("JWT"), "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "OAUTHBEARER", "log_level": 0}
    confluent_round_trip({**config, "oauth_cb": token_from(secure.jwt_key)}, "signed-jwt")
    from cryptography.hazmat.primitives.asymmetric import ec

    for refused in (token_from(ec.generate_private_key(ec.SECP256R1())), token_from(secure.jwt_key, "elsewhere")):
        error = _first_error({**config, "oauth_cb": refused})
        assert error.code() == confluent_kafka.KafkaError._AUTHENTICATION
    assert secure.logged("SASL mechanism OAUTHBEARER): invalid token: Signature verification failed")
    assert secure.logged("SASL mechanism OAUTHBEARER): invalid token: Audience doesn't match")


def test_an_api_versions_version_not_served_may_be_asked_again_before_the_handshake(secure):
    with RawClient(secure.bootstrap("SASL_PLAINTEXT")) as client:
        client.correlation_id += 1
        # a future version, with the flexible (v2) header every ApiVersions v3+ has
        client.send_frame(struct.pack(">hhih", 18, 99, client.correlation_id, 3) + b"raw\x00")
        error_code = struct.unpack_from(">h", client.read_frame(), 4)[0]
        assert error_code == ErrorCode.UNSUPPORTED_VERSION
        assert client.request(18, 3, client_software_name="raw", client_software_version="1").error_code == 0
        assert client.request(SASL_HANDSHAKE, 1, mechanism="PLAIN").error_code == ErrorCode.NONE


def test_a_refused_client_is_answered_after_the_failed_authentication_delay(secure):
    """KIP-306's connection.failed.authentication.delay.ms (100 ms by default) slows password guessing."""
    with raw_sasl(secure, "PLAIN") as client:
        started = time.monotonic()
        response = client.request(SASL_AUTHENTICATE, 2, auth_bytes=b"\0alice\0guess")
        assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert time.monotonic() - started >= 0.09
        assert _closed(client)


def test_transactions_commit_when_the_inter_broker_listener_is_sasl_ssl(tmp_path):
    """The transaction markers go to the inter-broker listener: over TLS, authenticated with
    sasl.mechanism.inter.broker.protocol and the JAAS config's username and password, as Kafka's brokers do."""
    pki = make_pki(tmp_path / "pki")
    port = free_port()
    process = BrokerProcess(tmp_path / "data", {
        "listeners": f"SASL_SSL://127.0.0.1:{port}", "inter.broker.listener.name": "SASL_SSL",
        "sasl.enabled.mechanisms": "PLAIN", "sasl.mechanism.inter.broker.protocol": "PLAIN",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,  # username="admin" password="admin-secret"
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(pki.broker.pkcs12),
        "ssl.keystore.password": PKCS12_PASSWORD,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.ca_pem),
    }, port=port).start()
    try:
        config = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_SSL", "log_level": 0,
                  "ssl.ca.location": str(pki.ca_pem), "sasl.mechanism": "PLAIN", "sasl.username": "alice",
                  "sasl.password": "alice-secret"}
        producer = confluent_kafka.Producer({**config, "transactional.id": "secured-txn"})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("secured-txn", b"committed", partition=0)
        producer.commit_transaction(30)
        consumer = confluent_kafka.Consumer({**config, "group.id": "secured-txn", "isolation.level": "read_committed"})
        consumer.assign([confluent_kafka.TopicPartition("secured-txn", 0, 0)])
        try:
            message = consumer.poll(30)
            assert message is not None and message.error() is None and message.value() == b"committed"
        finally:
            consumer.close()
        assert "Inter-broker connections to listener SASL_SSL: SASL_SSL with PLAIN" in process.log_text()
    finally:
        process.kill()
