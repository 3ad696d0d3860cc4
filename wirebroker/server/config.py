"""Broker configuration: Kafka's `server.properties` keys, defaults and validation.

`BrokerConfig.load(path, overrides)` reads a properties file (optional) and `key=value` overrides on top. Every key
is Kafka's name; an unknown key or a malformed value is `ConfigError` naming the key. Keys that give topic
defaults (`log.segment.bytes`, `log.retention.hours`, `message.max.bytes`, ...) are validated by the log layer's
synonym table and reach every log as `log_config`. Keys of Kafka's that this broker accepts but does not act on
(KRaft controller settings, say) are listed in ACCEPTED_AND_IGNORED so a Kafka config file starts unchanged.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from wirebroker.log.config import BROKER_TO_TOPIC_KEY, InvalidConfigError, LogConfig, topic_defaults_from_broker


class ConfigError(ValueError):
    """A configuration the broker cannot start with; the message names the key."""


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("expected true or false")
    return lowered == "true"


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


_STR: Callable[[str], Any] = str.strip

# key -> (parser, default as Kafka writes it). Defaults are Kafka's, except the embedded-broker conveniences and the
# measured thread default noted.
BROKER_KEYS: dict[str, tuple[Callable[[str], Any], str | None]] = {
    "listeners": (_list, "PLAINTEXT://localhost:9092"),  # Kafka: PLAINTEXT://:9092 (all interfaces)
    "advertised.listeners": (_list, None),
    "listener.security.protocol.map": (_list, "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"),
    "inter.broker.listener.name": (_STR, None),
    "log.dirs": (_list, None),
    "log.dir": (_list, "./wirebroker-data"),  # Kafka: /tmp/kafka-logs
    "node.id": (int, "1"),
    "broker.id": (int, None),
    "cluster.id": (_STR, None),
    "broker.rack": (_STR, None),
    "num.partitions": (int, "1"),
    "default.replication.factor": (int, "1"),
    "auto.create.topics.enable": (_bool, "true"),
    "delete.topic.enable": (_bool, "true"),
    "socket.request.max.bytes": (int, str(100 * 1024 * 1024)),
    "socket.send.buffer.bytes": (int, str(100 * 1024)),
    "socket.receive.buffer.bytes": (int, str(100 * 1024)),
    "socket.listen.backlog.size": (int, "50"),
    "num.network.threads": (int, "3"),
    # Kafka: 8. Measured here (bench/results/threads-ab.md): handling requests on the network thread costs less CPU
    # per request and gives a lower p99 than handing them to handler threads under the GIL.
    "num.io.threads": (int, "0"),
    "queued.max.requests": (int, "500"),
    "connections.max.idle.ms": (int, str(10 * 60 * 1000)),
    "max.connections": (int, str(2**31 - 1)),
    "replica.fetch.max.bytes": (int, str(1024 * 1024)),
    "log.retention.check.interval.ms": (int, str(5 * 60 * 1000)),
    "log.flush.offset.checkpoint.interval.ms": (int, "60000"),
    "log.flush.start.offset.checkpoint.interval.ms": (int, "60000"),
    "log.flush.scheduler.interval.ms": (int, str(2**63 - 1)),
    "num.recovery.threads.per.data.dir": (int, "2"),
    "producer.id.expiration.ms": (int, "86400000"),
    "producer.id.expiration.check.interval.ms": (int, "600000"),
    "transactional.id.expiration.ms": (int, "604800000"),
    "transaction.max.timeout.ms": (int, "900000"),
    "transaction.state.log.num.partitions": (int, "50"),
    "transaction.state.log.replication.factor": (int, "3"),
    "transaction.state.log.min.isr": (int, "2"),
    "group.initial.rebalance.delay.ms": (int, "3000"),
    "group.min.session.timeout.ms": (int, "6000"),
    "group.max.session.timeout.ms": (int, "1800000"),
    "group.max.size": (int, str(2**31 - 1)),
    "group.consumer.session.timeout.ms": (int, "45000"),
    "group.consumer.heartbeat.interval.ms": (int, "5000"),
    "group.consumer.assignors": (_list, "uniform,range"),
    "group.coordinator.rebalance.protocols": (_list, "classic,consumer"),
    "offsets.topic.num.partitions": (int, "50"),
    "offsets.topic.replication.factor": (int, "3"),
    "offsets.topic.segment.bytes": (int, str(100 * 1024 * 1024)),
    "offsets.retention.minutes": (int, str(7 * 24 * 60)),
    "offsets.retention.check.interval.ms": (int, "600000"),
    "offsets.commit.timeout.ms": (int, "5000"),
    "offset.metadata.max.bytes": (int, "4096"),
    "fetch.max.bytes": (int, str(55 * 1024 * 1024)),
    "max.incremental.fetch.session.cache.slots": (int, "1000"),
    "fetch.purgatory.purge.interval.requests": (int, "1000"),
    "producer.purgatory.purge.interval.requests": (int, "1000"),
    "zookeeper.connect": (_STR, None),
    "zookeeper.session.timeout.ms": (int, "18000"),
    "authorizer.class.name": (_STR, ""),
    "allow.everyone.if.no.acl.found": (_bool, "false"),
    "super.users": (_STR, None),
}

# Kafka keys a Kafka config file may carry that this single-process broker has no use for.
ACCEPTED_AND_IGNORED = frozenset({
    "process.roles", "controller.listener.names", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
    "metadata.log.dir", "log.cleaner.enable", "log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
    "num.replica.fetchers", "replica.lag.time.max.ms", "unclean.leader.election.enable",
    "auto.leader.rebalance.enable", "group.share.enable", "share.coordinator.state.topic.replication.factor",
    "share.coordinator.state.topic.min.isr", "confluent.support.metrics.enable", "sasl.enabled.mechanisms",
    "sasl.mechanism.inter.broker.protocol", "security.inter.broker.protocol", "metric.reporters",
})


@dataclass(frozen=True)
class Listener:
    name: str  # PLAINTEXT
    host: str  # "" means every interface, as in Kafka
    port: int

    def url(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def parse_listener(text: str, key: str) -> Listener:
    parts = urlsplit(text)
    if not parts.scheme or parts.port is None and not text.rstrip().endswith(":0"):
        raise ConfigError(f"{key}: '{text}' is not of the form NAME://host:port")
    try:
        port = parts.port or 0
    except ValueError:
        raise ConfigError(f"{key}: '{text}' has an invalid port") from None
    host = parts.hostname or ""
    return Listener(parts.scheme.upper(), host, port)


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
            elif key not in BROKER_KEYS:
                raise ConfigError(f"unknown configuration key '{key}'")
        for key, (parse, default) in BROKER_KEYS.items():
            text = props.get(key, default)
            if text is None:
                self._values[key] = None
                continue
            try:
                self._values[key] = parse(text)
            except ValueError as exc:
                raise ConfigError(f"invalid value '{text}' for configuration '{key}': {exc}") from None
        try:
            self.topic_defaults = topic_defaults_from_broker(topic_props)
            # Broker keys are defaults, not topic overrides: DescribeConfigs tells the two apart.
            self.log_config = LogConfig.from_props({}, self.topic_defaults)
        except (InvalidConfigError, ValueError) as exc:
            raise ConfigError(str(exc)) from None
        self.listeners = [parse_listener(item, "listeners") for item in self["listeners"]]
        if not self.listeners:
            raise ConfigError("listeners: at least one listener is needed")
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
