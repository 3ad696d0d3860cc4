"""Test certificates made at test time with `cryptography` (never committed): a CA, a broker certificate for
127.0.0.1/localhost, client certificates, and the PEM and PKCS12 files Kafka's ssl.* keys name."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

_PEM = serialization.Encoding.PEM


def _name(**attributes: str) -> x509.Name:
    oids = {"CN": NameOID.COMMON_NAME, "OU": NameOID.ORGANIZATIONAL_UNIT_NAME, "O": NameOID.ORGANIZATION_NAME,
            "C": NameOID.COUNTRY_NAME}
    return x509.Name([x509.NameAttribute(oids[k], v) for k, v in reversed(list(attributes.items()))])


def _certificate(subject: x509.Name, key, issuer: x509.Name, issuer_key, *, ca: bool = False,
                 hosts: tuple[str, ...] = ()) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if hosts:
        names = [x509.IPAddress(ipaddress.ip_address(h)) if h[0].isdigit() else x509.DNSName(h) for h in hosts]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@dataclass
class Identity:
    key_pem: Path  # unencrypted PKCS8
    cert_pem: Path
    pkcs12: Path  # key and certificate, password "test-password"


@dataclass
class TestPki:
    ca_pem: Path
    broker: Identity
    ca_key: object
    ca_name: x509.Name
    directory: Path

    def client(self, name: str, **dn: str) -> Identity:
        """A client certificate signed by this CA with subject `dn` (CN=..., OU=..., O=...)."""
        return _identity(self.directory, name, _name(**dn), self.ca_name, self.ca_key)


PKCS12_PASSWORD = "test-password"


def _identity(directory: Path, name: str, subject: x509.Name, issuer: x509.Name, issuer_key,
              hosts: tuple[str, ...] = ()) -> Identity:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _certificate(subject, key, issuer, issuer_key, hosts=hosts)
    key_path, cert_path, p12_path = (directory / f"{name}.key", directory / f"{name}.pem", directory / f"{name}.p12")
    key_path.write_bytes(key.private_bytes(_PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(_PEM))
    p12_path.write_bytes(pkcs12.serialize_key_and_certificates(
        name.encode(), key, cert, None, serialization.BestAvailableEncryption(PKCS12_PASSWORD.encode())))
    return Identity(key_path, cert_path, p12_path)


def make_pki(directory: Path) -> TestPki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(CN="wirebroker test CA")
    ca_pem = directory / "ca.pem"
    ca_pem.write_bytes(_certificate(ca_name, ca_key, ca_name, ca_key, ca=True).public_bytes(_PEM))
    broker = _identity(directory, "broker", _name(CN="localhost"), ca_name, ca_key, hosts=("127.0.0.1", "localhost"))
    return TestPki(ca_pem, broker, ca_key, ca_name, directory)


def broker_pem_keystore(identity: Identity) -> Path:
    """Kafka's PEM keystore file: the private key followed by the certificate chain."""
    path = identity.key_pem.with_suffix(".keystore.pem")
    path.write_bytes(identity.key_pem.read_bytes() + identity.cert_pem.read_bytes())
    return path


def jks_stores(identity: Identity, ca_pem: Path, password: str = PKCS12_PASSWORD) -> tuple[Path, Path]:
    """Java keystores written with pyjks: the identity's key and certificate, and a truststore with the CA."""
    import jks

    key = serialization.load_pem_private_key(identity.key_pem.read_bytes(), None)
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    cert = x509.load_pem_x509_certificate(identity.cert_pem.read_bytes()).public_bytes(serialization.Encoding.DER)
    ca = x509.load_pem_x509_certificate(ca_pem.read_bytes()).public_bytes(serialization.Encoding.DER)
    keystore, truststore = identity.key_pem.with_suffix(".keystore.jks"), identity.key_pem.with_suffix(".truststore.jks")
    entry = jks.PrivateKeyEntry.new("broker", [cert], pkcs8, "pkcs8")
    entry.encrypt(password)
    jks.KeyStore.new("jks", [entry]).save(str(keystore), password)
    jks.KeyStore.new("jks", [jks.TrustedCertEntry.new("ca", ca)]).save(str(truststore), password)
    return keystore, truststore
