"""Broker configuration: Kafka's `server.properties` keys, defaults and validation.

`BrokerConfig.load(path, overrides)` reads a properties file (optional) and `key=value` overrides on top. Every key
is Kafka's name; an unknown key or a malformed value is `ConfigError` naming the key. Keys that give topic
defaults (`log.segment.bytes`, `log.retention.hours`, `message.max.bytes`, ...) are validated by the log layer's
synonym table and reach every log as `log_config`. Keys of Kafka's that this broker accepts but does not act on
(KRaft controller settings, say) are listed in ACCEPTED_AND_IGNORED so a Kafka config file starts unchanged.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from wirebroker.log.config import (
    BOOLEAN,
    BROKER_TO_TOPIC_KEY,
    DOUBLE,
    INT,
    LIST,
    LONG,
    STRING,
    InvalidConfigError,
    LogConfig,
    ValueType,
    topic_defaults_from_broker,
)


class ConfigError(ValueError):
    """A configuration the broker cannot start with; the message names the key."""


# The Apache Kafka release lines whose ApiVersions answers ship in wirebroker/apis/releases/ (apis/emulation.py),
# and the key that picks one (`wirebroker --emulate 3.6`).
EMULATED_KAFKA_VERSIONS = ("3.6", "3.9", "4.0", "4.1", "4.2", "4.3")
EMULATE_KEY = "wirebroker.emulate.kafka.version"
VIRTUAL_CLOCK_KEY = "wirebroker.virtual.clock.enable"


def _emulated_release(text: str) -> str:
    line = text.strip()
    if line not in EMULATED_KAFKA_VERSIONS:
        raise ValueError(f"expected one of {', '.join(EMULATED_KAFKA_VERSIONS)}")
    return line


EMULATED_RELEASE = ValueType("STRING", _emulated_release)


class BrokerKey(NamedTuple):
    type: ValueType
    default: str | None  # as Kafka writes it; None: no default


# Defaults are Kafka's, except the embedded-broker conveniences and the measured thread default noted.
BROKER_KEYS: dict[str, BrokerKey] = {
    "listeners": BrokerKey(LIST, "PLAINTEXT://localhost:9092"),  # Kafka: PLAINTEXT://:9092 (all interfaces)
    "advertised.listeners": BrokerKey(LIST, None),
    "listener.security.protocol.map": BrokerKey(LIST, "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
    "inter.broker.listener.name": BrokerKey(STRING, None),
    "log.dirs": BrokerKey(LIST, None),
    "log.dir": BrokerKey(LIST, "./wirebroker-data"),  # Kafka: /tmp/kafka-logs
    "node.id": BrokerKey(INT, "1"),
    "broker.id": BrokerKey(INT, None),
    "cluster.id": BrokerKey(STRING, None),
    "broker.rack": BrokerKey(STRING, None),
    "num.partitions": BrokerKey(INT, "1"),
    "default.replication.factor": BrokerKey(INT, "1"),
    "auto.create.topics.enable": BrokerKey(BOOLEAN, "true"),
    "delete.topic.enable": BrokerKey(BOOLEAN, "true"),
    "socket.request.max.bytes": BrokerKey(INT, str(100 * 1024 * 1024)),
    "socket.send.buffer.bytes": BrokerKey(INT, str(100 * 1024)),
    "socket.receive.buffer.bytes": BrokerKey(INT, str(100 * 1024)),
    "socket.listen.backlog.size": BrokerKey(INT, "50"),
    # Kafka: 3. Measured here (bench/ANALYSIS.md section 3): under the GIL more select loops only contend for it;
    # one loop costs about half the CPU per small request with 8 connections, and no big workload gained from three.
    "num.network.threads": BrokerKey(INT, "1"),
    # Kafka: 8. Measured here (bench/results/threads-ab.md): handling requests on the network thread costs less CPU
    # per request and gives a lower p99 than handing them to handler threads under the GIL.
    "num.io.threads": BrokerKey(INT, "0"),
    "queued.max.requests": BrokerKey(INT, "500"),
    "connections.max.idle.ms": BrokerKey(INT, str(10 * 60 * 1000)),
    "max.connections": BrokerKey(INT, str(2**31 - 1)),
    "max.connections.per.ip": BrokerKey(INT, str(2**31 - 1)),
    "max.connections.per.ip.overrides": BrokerKey(STRING, ""),  # "host:count,..." (network/connection_quotas.py)
    "max.connection.creation.rate": BrokerKey(INT, str(2**31 - 1)),
    "replica.fetch.max.bytes": BrokerKey(INT, str(1024 * 1024)),
    "replica.fetch.response.max.bytes": BrokerKey(INT, str(10 * 1024 * 1024)),
    "replica.fetch.wait.max.ms": BrokerKey(INT, "500"),
    "replica.fetch.min.bytes": BrokerKey(INT, "1"),
    "replica.fetch.backoff.ms": BrokerKey(INT, "1000"),
    "replica.socket.timeout.ms": BrokerKey(INT, "30000"),
    "replica.lag.time.max.ms": BrokerKey(LONG, "30000"),
    "num.replica.fetchers": BrokerKey(INT, "1"),
    # Not Kafka's: for tests only, a cluster member without ZooKeeper, driven by whoever sends it controller requests
    # (UpdateMetadata, LeaderAndIsr, StopReplica), as a test acting as the controller does.
    "wirebroker.external.controller": BrokerKey(BOOLEAN, "false"),
    # Not Kafka's: advertise (and serve) only what this Apache Kafka release advertises; `wirebroker --emulate 3.6`.
    EMULATE_KEY: BrokerKey(EMULATED_RELEASE, None),
    # Not Kafka's: for tests, a broker clock that a test moves forward (wirebroker.Broker(virtual_clock=True).clock
    # .advance(ms), or POST /clock/advance on the HTTP port) to expire sessions, fetch waits and retention at once.
    VIRTUAL_CLOCK_KEY: BrokerKey(BOOLEAN, "false"),
    "log.retention.check.interval.ms": BrokerKey(INT, str(5 * 60 * 1000)),
    "log.cleaner.enable": BrokerKey(BOOLEAN, "true"),
    "log.cleaner.threads": BrokerKey(INT, "1"),
    "log.cleaner.dedupe.buffer.size": BrokerKey(LONG, str(128 * 1024 * 1024)),
    "log.cleaner.io.buffer.load.factor": BrokerKey(DOUBLE, "0.9"),
    "log.cleaner.io.buffer.size": BrokerKey(INT, str(512 * 1024)),  # accepted; see log/cleaner.py
    "log.cleaner.io.max.bytes.per.second": BrokerKey(DOUBLE, "1.7976931348623157E308"),
    "log.cleaner.backoff.ms": BrokerKey(LONG, "15000"),
    "log.flush.offset.checkpoint.interval.ms": BrokerKey(INT, "60000"),
    "log.flush.start.offset.checkpoint.interval.ms": BrokerKey(INT, "60000"),
    "log.flush.scheduler.interval.ms": BrokerKey(LONG, str(2**63 - 1)),
    # How often the high watermark reaches replication-offset-checkpoint, and the delay before the log manager's
    # periodic tasks first run: what readers of the log dir (wirebroker.spark) wait for to see new records.
    "replica.high.watermark.checkpoint.interval.ms": BrokerKey(LONG, "5000"),
    "log.initial.task.delay.ms": BrokerKey(LONG, "30000"),
    "num.recovery.threads.per.data.dir": BrokerKey(INT, "2"),
    "producer.id.expiration.ms": BrokerKey(INT, "86400000"),
    "producer.id.expiration.check.interval.ms": BrokerKey(INT, "600000"),
    "transactional.id.expiration.ms": BrokerKey(INT, "604800000"),
    "transaction.max.timeout.ms": BrokerKey(INT, "900000"),
    "transaction.state.log.num.partitions": BrokerKey(INT, "50"),
    "transaction.state.log.replication.factor": BrokerKey(INT, "3"),
    "transaction.state.log.min.isr": BrokerKey(INT, "2"),
    "transaction.state.log.segment.bytes": BrokerKey(INT, str(100 * 1024 * 1024)),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": BrokerKey(INT, "10000"),
    "transaction.remove.expired.transaction.cleanup.interval.ms": BrokerKey(INT, "3600000"),
    # KIP-890 part 1: a transactional Produce up to v11 is appended only if the coordinator has its partition in the
    # transaction (apis/produce.py); dynamic in Kafka, read at each request here but set at start only
    "transaction.partition.verification.enable": BrokerKey(BOOLEAN, "true"),
    "request.timeout.ms": BrokerKey(INT, "30000"),  # the transaction coordinator's writes and markers wait this long
    "group.initial.rebalance.delay.ms": BrokerKey(INT, "3000"),
    "group.min.session.timeout.ms": BrokerKey(INT, "6000"),
    "group.max.session.timeout.ms": BrokerKey(INT, "1800000"),
    "group.max.size": BrokerKey(INT, str(2**31 - 1)),
    "group.consumer.session.timeout.ms": BrokerKey(INT, "45000"),
    "group.consumer.heartbeat.interval.ms": BrokerKey(INT, "5000"),
    "group.consumer.assignors": BrokerKey(LIST, "uniform,range"),
    "group.coordinator.rebalance.protocols": BrokerKey(LIST, "classic,consumer"),
    # Share groups (KIP-932): Kafka's GroupCoordinatorConfig and ShareCoordinatorConfig keys and defaults.
    "group.share.session.timeout.ms": BrokerKey(INT, "45000"),
    "group.share.heartbeat.interval.ms": BrokerKey(INT, "5000"),
    "group.share.max.size": BrokerKey(INT, "200"),
    "group.share.record.lock.duration.ms": BrokerKey(INT, "30000"),
    "group.share.delivery.count.limit": BrokerKey(INT, "5"),
    "group.share.partition.max.record.locks": BrokerKey(INT, "2000"),
    "group.share.max.share.sessions": BrokerKey(INT, "2000"),  # share sessions per broker (SHARE_SESSION_LIMIT_REACHED)
    "share.coordinator.state.topic.num.partitions": BrokerKey(INT, "50"),
    "share.coordinator.state.topic.replication.factor": BrokerKey(INT, "3"),
    "share.coordinator.state.topic.min.isr": BrokerKey(INT, "2"),
    "share.coordinator.state.topic.segment.bytes": BrokerKey(INT, str(100 * 1024 * 1024)),
    "share.coordinator.write.timeout.ms": BrokerKey(INT, "5000"),
    "offsets.topic.num.partitions": BrokerKey(INT, "50"),
    "offsets.topic.replication.factor": BrokerKey(INT, "3"),
    "offsets.topic.segment.bytes": BrokerKey(INT, str(100 * 1024 * 1024)),
    "offsets.retention.minutes": BrokerKey(INT, str(7 * 24 * 60)),
    "offsets.retention.check.interval.ms": BrokerKey(INT, "600000"),
    "offsets.commit.timeout.ms": BrokerKey(INT, "5000"),
    "offset.metadata.max.bytes": BrokerKey(INT, "4096"),
    "fetch.max.bytes": BrokerKey(INT, str(55 * 1024 * 1024)),
    "max.incremental.fetch.session.cache.slots": BrokerKey(INT, "1000"),
    "fetch.purgatory.purge.interval.requests": BrokerKey(INT, "1000"),
    "producer.purgatory.purge.interval.requests": BrokerKey(INT, "1000"),
    # ZooKeeper mode (issue 11): set zookeeper.connect to run as one broker of a cluster; unset, a single node.
    "zookeeper.connect": BrokerKey(STRING, None),
    "zookeeper.session.timeout.ms": BrokerKey(INT, "18000"),
    "zookeeper.connection.timeout.ms": BrokerKey(INT, None),  # Kafka: the session timeout when unset
    "controlled.shutdown.enable": BrokerKey(BOOLEAN, "true"),
    "controlled.shutdown.max.retries": BrokerKey(INT, "3"),
    "controlled.shutdown.retry.backoff.ms": BrokerKey(INT, "5000"),
    "auto.leader.rebalance.enable": BrokerKey(BOOLEAN, "true"),
    "leader.imbalance.check.interval.seconds": BrokerKey(LONG, "300"),
    "leader.imbalance.per.broker.percentage": BrokerKey(INT, "10"),
    "authorizer.class.name": BrokerKey(STRING, ""),
    "allow.everyone.if.no.acl.found": BrokerKey(BOOLEAN, "false"),
    "super.users": BrokerKey(STRING, None),
    # Not Kafka's (Kafka reports through JMX): http://host:port serves /metrics, /state, /compat and a status page
    # (wirebroker/server/web/); unset, nothing of it is imported or started.
    "http.listener": BrokerKey(STRING, None),
    # Security (issue 14): each may be set per listener as listener.name.<name lower-cased>.<key>.
    "sasl.enabled.mechanisms": BrokerKey(LIST, "GSSAPI"),  # GSSAPI (Kerberos) is not served: name others
    "sasl.jaas.config": BrokerKey(STRING, None),
    "sasl.mechanism.inter.broker.protocol": BrokerKey(STRING, "GSSAPI"),  # the broker's own SASL connections
    "sasl.server.callback.handler.class": BrokerKey(STRING, None),
    "sasl.server.max.receive.size": BrokerKey(INT, "524288"),  # the largest frame read before authentication
    "connections.max.reauth.ms": BrokerKey(LONG, "0"),  # KIP-368; 0: sessions never expire
    "connection.failed.authentication.delay.ms": BrokerKey(INT, "100"),  # KIP-306: a refusal is answered this late
    "sasl.oauthbearer.jwks.endpoint.url": BrokerKey(STRING, None),  # file: URLs (a JWKS file) only
    "sasl.oauthbearer.expected.audience": BrokerKey(LIST, ""),
    "sasl.oauthbearer.expected.issuer": BrokerKey(STRING, None),
    "sasl.oauthbearer.sub.claim.name": BrokerKey(STRING, "sub"),
    "sasl.oauthbearer.scope.claim.name": BrokerKey(STRING, "scope"),
    "sasl.oauthbearer.clock.skew.seconds": BrokerKey(INT, "30"),
    "ssl.client.auth": BrokerKey(STRING, "none"),
    "ssl.principal.mapping.rules": BrokerKey(STRING, "DEFAULT"),
    "ssl.keystore.type": BrokerKey(STRING, "JKS"),
    "ssl.keystore.location": BrokerKey(STRING, None),
    "ssl.keystore.password": BrokerKey(STRING, None),
    "ssl.key.password": BrokerKey(STRING, None),
    "ssl.keystore.key": BrokerKey(STRING, None),  # PEM in the config value itself
    "ssl.keystore.certificate.chain": BrokerKey(STRING, None),
    "ssl.truststore.type": BrokerKey(STRING, "JKS"),
    "ssl.truststore.location": BrokerKey(STRING, None),
    "ssl.truststore.password": BrokerKey(STRING, None),
    "ssl.truststore.certificates": BrokerKey(STRING, None),
    "ssl.enabled.protocols": BrokerKey(LIST, "TLSv1.2,TLSv1.3"),
    "ssl.protocol": BrokerKey(STRING, "TLSv1.3"),
    "ssl.cipher.suites": BrokerKey(LIST, ""),
    "ssl.endpoint.identification.algorithm": BrokerKey(STRING, "https"),
}
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# Kafka keys a Kafka config file may carry that this single-process broker has no use for.
ACCEPTED_AND_IGNORED = frozenset({
    "process.roles", "controller.listener.names", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
    "metadata.log.dir",
    "group.share.enable", "share.coordinator.state.topic.replication.factor",
    "confluent.support.metrics.enable",
    "security.inter.broker.protocol", "metric.reporters",
})


@dataclass(frozen=True)
class Listener:
    name: str  # PLAINTEXT
    host: str  # "" means every interface, as in Kafka
    port: int

    def url(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


# Kafka's listener form (CoreUtils.listenerListToEndPoints): a name such as SASL_SSL is no URL scheme (underscore).
_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$")


def parse_listener(text: str, key: str) -> Listener:
    match = _LISTENER.match(text.strip())
    if match is None:
        raise ConfigError(f"{key}: '{text}' is not of the form NAME://host:port")
    port = int(match.group(3))
    if not 0 <= port <= 65535:
        raise ConfigError(f"{key}: '{text}' has an invalid port")
    return Listener(match.group(1).upper(), match.group(2), port)


class BrokerConfig:
    """Parsed broker settings: `config["num.partitions"]` is typed; `original` keeps what was set."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.original = dict(props)
        self._values: dict[str, Any] = {}
        topic_props: dict[str, str] = {}
        for key, text in props.items():
            if key in BROKER_TO_TOPIC_KEY:
                topic_props[key] = text
            elif key in ACCEPTED_AND_IGNORED:
                continue
            elif key not in BROKER_KEYS and not key.startswith("listener.name."):
                raise ConfigError(f"unknown configuration key '{key}'")
        for key, spec in BROKER_KEYS.items():
            text = props.get(key, spec.default)
            if text is None:
                self._values[key] = None
                continue
            try:
                self._values[key] = spec.type.parse(text)
            except ValueError as exc:
                raise ConfigError(f"invalid value '{text}' for configuration '{key}': {exc}") from None
        try:
            self.topic_defaults = topic_defaults_from_broker(topic_props)
            # Broker keys are defaults, not topic overrides: DescribeConfigs tells the two apart.
            self.log_config = LogConfig.from_props({}, self.topic_defaults)
        except (InvalidConfigError, ValueError) as exc:
            raise ConfigError(str(exc)) from None
        if self["group.share.max.share.sessions"] < self["group.share.max.size"]:  # Kafka's ShareGroupConfig.validate
            raise ConfigError("group.share.max.share.sessions must be greater than or equal to group.share.max.size")
        self.listeners = [parse_listener(item, "listeners") for item in self["listeners"]]
        if not self.listeners:
            raise ConfigError("listeners: at least one listener is needed")
        protocols = dict(item.partition(":")[::2] for item in self["listener.security.protocol.map"])
        self.security_protocols: dict[str, str] = {}  # listener name -> its security protocol
        for listener in self.listeners:
            protocol = protocols.get(listener.name, listener.name if listener.name in SECURITY_PROTOCOLS else None)
            if protocol not in SECURITY_PROTOCOLS:
                raise ConfigError(f"listener.security.protocol.map: no security protocol for listener {listener.name}"
                                  f" (one of {', '.join(SECURITY_PROTOCOLS)})")
            self.security_protocols[listener.name] = protocol
        advertised = self["advertised.listeners"]
        self.advertised_listeners = (
            [parse_listener(item, "advertised.listeners") for item in advertised] if advertised else None
        )

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    @property
    def node_id(self) -> int:
        broker_id = self["broker.id"]
        return broker_id if broker_id is not None else self["node.id"]

    @property
    def log_dirs(self) -> list[Path]:
        return [Path(d) for d in (self["log.dirs"] or self["log.dir"])]

    def listener_setting(self, listener: str, key: str) -> Any:
        """Kafka's per-listener override `listener.name.<listener lower-cased>.<key>`, else the broker's `key`."""
        text = self.original.get(f"listener.name.{listener.lower()}.{key}")
        spec = BROKER_KEYS.get(key)
        if text is None:
            return self._values[key] if spec is not None else self.original.get(key)
        try:
            return spec.type.parse(text) if spec is not None else text
        except ValueError as exc:
            raise ConfigError(f"invalid value '{text}' for configuration 'listener.name.{listener.lower()}.{key}': "
                              f"{exc}") from None

    def is_default(self, key: str) -> bool:
        return key not in self.original

    @classmethod
    def load(cls, path: Path | None = None, overrides: Sequence[str] = ()) -> BrokerConfig:
        props = read_properties(path.read_text()) if path else {}
        for item in overrides:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(f"override '{item}' is not of the form key=value")
            props[key.strip()] = value.strip()
        return cls(props)


def read_properties(text: str) -> dict[str, str]:
    """Java-style properties: `key=value` or `key: value`, `#`/`!` comments, `\\` line continuations."""
    props: dict[str, str] = {}
    pending = ""
    for raw in text.splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if not line or line[0] in "#!":
            continue
        separator = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if separator < 0:
            raise ConfigError(f"line '{line}' is not of the form key=value")
        props[line[:separator].strip()] = line[separator + 1 :].strip()
    return props


def new_cluster_id() -> str:
    """A cluster id in Kafka's form: a UUID as 22 characters of URL-safe base64."""
    import base64

    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
