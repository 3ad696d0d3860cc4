"""The two secured listeners of the `sasl_scram` and `tls` columns, set up alike on wirebroker and Apache Kafka.

Each single broker gets, beside its PLAINTEXT listener, SASL_PLAINTEXT with SCRAM-SHA-512 and SSL (server
certificate only, no client certificate asked); certificates are made for the run with `cryptography`
(tests/integration/tls_certificates.py) and the SCRAM user is created through the PLAINTEXT listener with
AlterUserScramCredentials, as `kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[password=...]'` does. Drivers
find them in their environment:

    COMPAT_SASL_BOOTSTRAP   127.0.0.1:<port> of SASL_PLAINTEXT     COMPAT_SCRAM_USER / COMPAT_SCRAM_PASSWORD
    COMPAT_TLS_BOOTSTRAP    127.0.0.1:<port> of SSL                 COMPAT_TLS_CA  the CA certificate (PEM file)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.tls_certificates import PKCS12_PASSWORD, TestPki, make_pki
from wirebroker.network.broker_client import BrokerClient
from wirebroker.network.ports import free_port
from wirebroker.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
)
from wirebroker.security.scram_credential import SCRAM_SHA_512

SECURED_SCENARIOS = frozenset({"sasl_scram", "tls"})  # the columns that need these listeners
SCRAM_USER = "compat-scram"
SCRAM_PASSWORD = "compat-scram-secret"
SCRAM_ITERATIONS = 4096


@dataclass
class SecurityListeners:
    pki: TestPki
    sasl_port: int = field(default_factory=free_port)
    ssl_port: int = field(default_factory=free_port)

    @classmethod
    def create(cls, work_dir: Path) -> SecurityListeners:
        return cls(make_pki(work_dir / "pki"))

    def broker_settings(self, plaintext_port: int, controller_port: int | None = None) -> dict[str, object]:
        """Kafka's server.properties keys for both brokers (the controller listener is Kafka's KRaft one)."""
        public = (f"PLAINTEXT://127.0.0.1:{plaintext_port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port},"
                  f"SSL://127.0.0.1:{self.ssl_port}")
        controller = f",CONTROLLER://127.0.0.1:{controller_port}" if controller_port else ""
        return {
            "listeners": public + controller,
            "advertised.listeners": public,
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL"
                                              + (",CONTROLLER:PLAINTEXT" if controller_port else ""),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config":
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": self.pki.broker.pkcs12,
            "ssl.keystore.password": PKCS12_PASSWORD,
            "ssl.key.password": PKCS12_PASSWORD,
        }

    def create_scram_user(self, plaintext_bootstrap: str) -> None:
        host, port = plaintext_bootstrap.rsplit(":", 1)
        salt = os.urandom(32)
        upsertion = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
            name=SCRAM_USER, mechanism=SCRAM_SHA_512.type_code, iterations=SCRAM_ITERATIONS, salt=salt,
            salted_password=SCRAM_SHA_512.salted_password(SCRAM_PASSWORD, salt, SCRAM_ITERATIONS))
        client = BrokerClient(host, int(port), "compat-security-setup")
        try:
            response = client.send(AlterUserScramCredentialsRequest(deletions=[], upsertions=[upsertion]), 0)
        finally:
            client.close()
        errors = [(r.user, r.error_code, r.error_message) for r in response.results if r.error_code]
        if errors:
            raise RuntimeError(f"AlterUserScramCredentials failed: {errors}")

    def driver_env(self) -> dict[str, str]:
        return {"COMPAT_SASL_BOOTSTRAP": f"127.0.0.1:{self.sasl_port}", "COMPAT_SCRAM_USER": SCRAM_USER,
                "COMPAT_SCRAM_PASSWORD": SCRAM_PASSWORD, "COMPAT_TLS_BOOTSTRAP": f"127.0.0.1:{self.ssl_port}",
                "COMPAT_TLS_CA": str(self.pki.ca_pem)}
