"""Each listener's security from the broker's config (Kafka's ChannelBuilders.serverChannelBuilder).

Imported only when a listener is not PLAINTEXT. Per listener, Kafka's lookups: `listener.name.<l>.<key>` then
`<key>`; a mechanism's own settings `listener.name.<l>.<mechanism>.<key>` (the JAAS config, the server callback
handler) before those. PLAIN's users come from the JAAS config, SCRAM's credentials from the credential store
(AlterUserScramCredentials), OAUTHBEARER's tokens are unsecured JWS unless the listener names Kafka's
OAuthBearerValidatorCallbackHandler, which checks signed JWTs against `sasl.oauthbearer.jwks.endpoint.url`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from wirebroker.cluster.scram_credentials import ScramCredentialStore
from wirebroker.config import BrokerConfig, ConfigError
from wirebroker.network.authenticator import SaslSettings
from wirebroker.network.channel_security import ListenerSecurity
from wirebroker.network.client_security import ClientSecurity
from wirebroker.security.jaas import JaasConfigError, login_module_options
from wirebroker.security.principal import SslPrincipalMapper
from wirebroker.security.sasl import SaslServer
from wirebroker.security.sasl.client import client_mechanism
from wirebroker.security.sasl.oauthbearer import (
    VALIDATOR_CALLBACK_HANDLER,
    OAuthBearerSaslServer,
    SignedJwtValidator,
    UnsecuredValidator,
)
from wirebroker.security.sasl.plain import PlainSaslServer, plain_users
from wirebroker.security.sasl.scram import ScramSaslServer
from wirebroker.security.scram_credential import MECHANISMS as SCRAM_MECHANISMS

log = logging.getLogger(__name__)


def listener_security(config: BrokerConfig, scram_credentials: ScramCredentialStore) -> dict[str, ListenerSecurity]:
    """name -> ListenerSecurity for every listener that is not PLAINTEXT; raises ConfigError naming the key."""
    securities = {}
    for listener in config.listeners:
        protocol = config.security_protocols[listener.name]
        if protocol != "PLAINTEXT":
            securities[listener.name] = _one_listener(config, listener.name, protocol, scram_credentials)
    return securities


def inter_broker_security(config: BrokerConfig) -> ClientSecurity | None:
    """How this broker connects to the inter-broker listener (None: PLAINTEXT), from that listener's settings:
    its truststore (and keystore) for TLS, `sasl.mechanism.inter.broker.protocol` with the username and password
    of the mechanism's JAAS config for SASL. Used by every connection a broker makes to a broker (transaction
    markers, replica fetchers, AlterPartition, the controller's channels, controlled shutdown)."""
    listener = config["inter.broker.listener.name"] or config.listeners[0].name
    protocol = config.security_protocols.get(listener)
    if protocol in (None, "PLAINTEXT"):
        return None
    ssl_context = new_client = mechanism = None
    if protocol in ("SSL", "SASL_SSL"):
        from wirebroker.security.ssl_context import SslConfigError, client_context

        try:
            ssl_context = client_context(partial(config.listener_setting, listener))
        except SslConfigError as exc:
            raise ConfigError(f"inter-broker listener {listener}: {exc}") from None
    if protocol.startswith("SASL_"):
        mechanism = config["sasl.mechanism.inter.broker.protocol"]
        options = _jaas_options(config, listener, mechanism)
        if "username" not in options or "password" not in options:
            raise ConfigError(f"inter-broker listener {listener}: the {mechanism} JAAS config (listener.name."
                              f"{listener.lower()}.{mechanism.lower()}.sasl.jaas.config) needs username and password "
                              f"for the broker's own connections")
        try:
            new_client = partial(client_mechanism, mechanism, options["username"], options["password"])
            new_client()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    log.info("Inter-broker connections to listener %s: %s%s", listener, protocol,
             f" with {mechanism}" if mechanism else "")
    return ClientSecurity(ssl_context, mechanism, new_client)


def _one_listener(config: BrokerConfig, name: str, protocol: str,
                  scram_credentials: ScramCredentialStore) -> ListenerSecurity:
    setting = partial(config.listener_setting, name)
    ssl_context = mapper = sasl = None
    if protocol in ("SSL", "SASL_SSL"):
        try:
            from wirebroker.security.ssl_context import SslConfigError, server_context
        except ImportError as exc:
            raise ConfigError(f"listener {name} ({protocol}) needs the security extra: pip install "
                              f"'wirebroker[security]' ({exc})") from None

        try:
            ssl_context = server_context(setting)
            mapper = SslPrincipalMapper(setting("ssl.principal.mapping.rules"))
        except (SslConfigError, ValueError) as exc:
            raise ConfigError(f"listener {name}: {exc}") from None
    if protocol.startswith("SASL_"):
        mechanisms = {m: _mechanism(config, name, m, scram_credentials) for m in setting("sasl.enabled.mechanisms")}
        sasl = SaslSettings(mechanisms, setting("sasl.server.max.receive.size"), setting("connections.max.reauth.ms"),
                            config["connection.failed.authentication.delay.ms"])
    log.info("Listener %s: %s%s", name, protocol, f", SASL mechanisms {', '.join(sasl.mechanisms)}" if sasl else "")
    return ListenerSecurity(protocol, ssl_context, mapper, sasl)


def _mechanism_setting(config: BrokerConfig, listener: str, mechanism: str, key: str) -> Any:
    own = config.listener_setting(listener, f"{mechanism.lower()}.{key}")
    return own if own is not None else config.listener_setting(listener, key)


def _jaas_options(config: BrokerConfig, listener: str, mechanism: str) -> dict[str, str]:
    text = _mechanism_setting(config, listener, mechanism, "sasl.jaas.config")
    if not text:
        return {}
    try:
        return login_module_options(text)[1]
    except JaasConfigError as exc:
        raise ConfigError(f"listener {listener}, {mechanism}: {exc}") from None


def _mechanism(config: BrokerConfig, listener: str, mechanism: str,
               scram_credentials: ScramCredentialStore) -> Callable[[], SaslServer]:
    if mechanism == "PLAIN":
        users = plain_users(_jaas_options(config, listener, mechanism))
        if not users:
            raise ConfigError(f"listener {listener}: SASL/PLAIN needs users: user_<name>=\"<password>\" options of "
                              f"PlainLoginModule in listener.name.{listener.lower()}.plain.sasl.jaas.config")
        return partial(PlainSaslServer, users)
    if mechanism in SCRAM_MECHANISMS:
        return partial(ScramSaslServer, SCRAM_MECHANISMS[mechanism], scram_credentials.credential)
    if mechanism == "OAUTHBEARER":
        handler = _mechanism_setting(config, listener, mechanism, "sasl.server.callback.handler.class") or ""
        if handler.endswith(VALIDATOR_CALLBACK_HANDLER):
            setting = partial(_mechanism_setting, config, listener, mechanism)
            try:
                validator: Any = SignedJwtValidator(
                    setting("sasl.oauthbearer.jwks.endpoint.url"), setting("sasl.oauthbearer.expected.audience"),
                    setting("sasl.oauthbearer.expected.issuer"), setting("sasl.oauthbearer.sub.claim.name"),
                    setting("sasl.oauthbearer.clock.skew.seconds"))
            except (OSError, ValueError) as exc:
                raise ConfigError(f"listener {listener}, OAUTHBEARER: {exc}") from None
        else:
            validator = UnsecuredValidator.from_jaas_options(_jaas_options(config, listener, mechanism))
        return partial(OAuthBearerSaslServer, validator)
    raise ConfigError(f"listener {listener}: SASL mechanism {mechanism} is not served (sasl.enabled.mechanisms: "
                      f"PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)")
