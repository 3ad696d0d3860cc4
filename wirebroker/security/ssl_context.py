"""The server-side TLS context of one listener, from Kafka's ssl.* settings (Kafka's DefaultSslEngineFactory).

Keystores (the broker's key and certificate chain), by `ssl.keystore.type`:
- PEM: `ssl.keystore.location` is a PEM file with the private key and the chain, or `ssl.keystore.key` and
  `ssl.keystore.certificate.chain` carry them inline; an encrypted key is opened with `ssl.key.password`.
- PKCS12: read with `cryptography` (password `ssl.keystore.password`) and handed to OpenSSL as PEM through a
  private temporary file that is removed at once (the ssl module loads chains from files only).
- JKS: read with pyjks (store password `ssl.keystore.password`, key password `ssl.key.password`, else the store's).
Truststores (who may present a client certificate): PEM file, `ssl.truststore.certificates` inline, PKCS12 or JKS.
`ssl.client.auth` = required | requested | none, as Kafka's; the client's principal is its certificate's subject
DN in RFC 2253 form (Java's X500Principal.getName()), then `ssl.principal.mapping.rules`.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

Setting = Callable[[str], Any]  # a listener's value for a Kafka ssl.* key (listener.name.<l>.<key>, else <key>)

CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}
_TLS_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


class SslConfigError(ValueError):
    """A listener's TLS settings cannot be used; the message names the key."""


def server_context(setting: Setting) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _set_protocols(context, setting("ssl.enabled.protocols"))
    if setting("ssl.cipher.suites"):
        try:
            context.set_ciphers(":".join(setting("ssl.cipher.suites")))
        except ssl.SSLError as exc:
            raise SslConfigError(f"ssl.cipher.suites: none usable (OpenSSL names are expected): {exc}") from None
    _load_keystore(context, setting)
    client_auth = str(setting("ssl.client.auth")).lower()
    if client_auth not in CLIENT_AUTH:
        raise SslConfigError(f"ssl.client.auth must be required, requested or none, not '{client_auth}'")
    context.verify_mode = CLIENT_AUTH[client_auth]
    if client_auth != "none":
        _load_truststore(context, setting)
    return context


def client_context(setting: Setting) -> ssl.SSLContext:
    """The TLS context of the broker's own connections to the listener whose settings these are (inter-broker):
    its truststore checks the server, its keystore (if any) answers a listener that asks for a certificate, and
    `ssl.endpoint.identification.algorithm=https` (Kafka's default) checks the host name."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _set_protocols(context, setting("ssl.enabled.protocols"))
    context.check_hostname = str(setting("ssl.endpoint.identification.algorithm") or "").lower() == "https"
    _load_truststore(context, setting)
    if setting("ssl.keystore.location") or setting("ssl.keystore.key"):
        _load_keystore(context, setting)
    return context


def peer_distinguished_name(der_certificate: bytes) -> str:
    """The certificate's subject as Java's X500Principal.getName() writes it (RFC 2253)."""
    return x509.load_der_x509_certificate(der_certificate).subject.rfc4514_string()


def _set_protocols(context: ssl.SSLContext, enabled: tuple[str, ...]) -> None:
    versions = [_TLS_VERSIONS[v] for v in enabled if v in _TLS_VERSIONS]
    if not versions:
        raise SslConfigError(f"ssl.enabled.protocols: none of {list(enabled)} is TLSv1.2 or TLSv1.3")
    context.minimum_version, context.maximum_version = min(versions), max(versions)


def _password(setting: Setting, key: str) -> bytes | None:
    value = setting(key)
    return value.encode() if value else None


def _load_keystore(context: ssl.SSLContext, setting: Setting) -> None:
    kind = str(setting("ssl.keystore.type")).upper()
    location = setting("ssl.keystore.location")
    if setting("ssl.keystore.key") or setting("ssl.keystore.certificate.chain"):
        if kind != "PEM":
            raise SslConfigError("ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type=PEM")
        pem = f"{setting('ssl.keystore.key')}\n{setting('ssl.keystore.certificate.chain')}\n".encode()
        _load_pem_chain(context, pem, _password(setting, "ssl.key.password"))
        return
    if not location:
        raise SslConfigError("ssl.keystore.location (or ssl.keystore.key) is required on an SSL listener")
    if kind == "PEM":
        try:
            context.load_cert_chain(location, password=_password(setting, "ssl.key.password"))
        except (OSError, ssl.SSLError) as exc:
            raise SslConfigError(f"ssl.keystore.location {location}: {exc}") from None
    elif kind in ("PKCS12", "JKS"):
        store_password = _password(setting, "ssl.keystore.password")
        if kind == "PKCS12":
            key, cert, extra = _read_pkcs12(location, store_password, "ssl.keystore")
            chain = [c for c in [cert, *extra] if c is not None]
        else:
            key, chain = _read_jks_key(location, store_password, _password(setting, "ssl.key.password"))
        if key is None or not chain:
            raise SslConfigError(f"ssl.keystore.location {location}: no private key and certificate in it")
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        pem += b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)
        _load_pem_chain(context, pem, None)
    else:
        raise SslConfigError(f"ssl.keystore.type must be PEM, PKCS12 or JKS, not '{kind}'")


def _load_pem_chain(context: ssl.SSLContext, pem: bytes, password: bytes | None) -> None:
    """OpenSSL reads chains from files only: a private file, removed as soon as it is read."""
    fd, path = tempfile.mkstemp(prefix="wirebroker-keystore-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        context.load_cert_chain(path, password=password)
    except ssl.SSLError as exc:
        raise SslConfigError(f"the keystore's key and certificate chain do not load: {exc}") from None
    finally:
        os.unlink(path)


def _read_pkcs12(location: str, password: bytes | None, prefix: str) -> tuple[Any, Any, list[x509.Certificate]]:
    try:
        with open(location, "rb") as f:
            return pkcs12.load_key_and_certificates(f.read(), password)
    except (OSError, ValueError) as exc:
        raise SslConfigError(f"{prefix}.location {location}: {exc}") from None


def _jks(location: str, password: bytes | None, prefix: str) -> Any:
    try:
        import jks  # pyjks: loaded only for a JKS keystore or truststore
    except ImportError:
        raise SslConfigError(f"{prefix}.type=JKS needs pyjks (pip install 'wirebroker[security]'), or convert the "
                             f"store: keytool -importkeystore -srckeystore {location} -deststoretype PKCS12") from None
    try:
        return jks.KeyStore.load(location, (password or b"").decode())
    except (OSError, jks.util.KeystoreException) as exc:
        raise SslConfigError(f"{prefix}.location {location}: {exc}") from None


def _read_jks_key(location: str, store_password: bytes | None,
                  key_password: bytes | None) -> tuple[Any, list[x509.Certificate]]:
    """The keystore's first private key and its chain (Kafka's broker keystores hold one)."""
    store = _jks(location, store_password, "ssl.keystore")
    for entry in store.private_keys.values():
        if not entry.is_decrypted():
            entry.decrypt((key_password or store_password or b"").decode())
        key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
        return key, [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain]
    return None, []


def _load_truststore(context: ssl.SSLContext, setting: Setting) -> None:
    kind = str(setting("ssl.truststore.type")).upper()
    location = setting("ssl.truststore.location")
    try:
        if setting("ssl.truststore.certificates"):
            context.load_verify_locations(cadata=setting("ssl.truststore.certificates"))
        elif not location:
            raise SslConfigError("ssl.truststore.location (or ssl.truststore.certificates) is required: the "
                                 "certificates that client certificates (or, inter-broker, the listener's) are "
                                 "checked against")
        elif kind == "PEM":
            context.load_verify_locations(cafile=location)
        elif kind in ("PKCS12", "JKS"):
            password = _password(setting, "ssl.truststore.password")
            if kind == "PKCS12":
                _, cert, extra = _read_pkcs12(location, password, "ssl.truststore")
                certs = [c for c in [cert, *extra] if c is not None]
            else:
                store = _jks(location, password, "ssl.truststore")
                certs = [x509.load_der_x509_certificate(entry.cert) for entry in store.certs.values()]
            context.load_verify_locations(cadata="".join(c.public_bytes(serialization.Encoding.PEM).decode()
                                                          for c in certs))
        else:
            raise SslConfigError(f"ssl.truststore.type must be PEM, PKCS12 or JKS, not '{kind}'")
    except (OSError, ssl.SSLError) as exc:
        raise SslConfigError(f"ssl.truststore: {exc}") from None
