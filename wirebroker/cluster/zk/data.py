"""The JSON that Kafka's ZooKeeper-era brokers store in their znodes (kafka.zk.ZkData), encoded and decoded.

Compact JSON, UTF-8, as Kafka's Json.encodeAsBytes writes it:

- /brokers/ids/<id>, version 5:
  {"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://h:9092"],
   "jmx_port":-1,"port":9092,"host":"h","version":5,"timestamp":"1700000000000","rack":"r1"}
  `host`/`port` are the first PLAINTEXT endpoint's (null/-1 without one), for pre-0.10 clients; `rack` only when set;
  `timestamp` is milliseconds as a string.
- /controller: {"version":1,"brokerid":1,"timestamp":"1700000000000"} (Kafka 3.4+ writes version 2 with a
  `kraftControllerEpoch` of -1 in ZooKeeper mode; both decode).
- /controller_epoch: the epoch in decimal ASCII, e.g. `5`; the first controller finds it missing and creates it at 0.
- /brokers/topics/<topic>, version 3:
  {"version":3,"topic_id":"<base64 Uuid>","partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}
  `adding_replicas`/`removing_replicas` name only partitions under reassignment.
- /brokers/topics/<topic>/partitions/<p>/state:
  {"controller_epoch":5,"leader":1,"version":1,"leader_epoch":3,"isr":[1,2,3]}
  plus `leader_recovery_state` (1) only while a leader elected uncleanly recovers; the znode's version is the
  partition epoch, so every write is conditional on the version read.
- /config/topics/<topic>: {"version":1,"config":{"retention.ms":"1000"}}
- /admin/delete_topics/<topic>: no data.
- /isr_change_notification/isr_change_<seq>: {"version":1,"partitions":[{"topic":"t","partition":0}]}
- /cluster/id: {"version":"1","id":"<base64 Uuid>"}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from wirebroker.log.files import TopicPartition

BROKER_INFO_VERSION = 5  # Kafka 2.7+ (IBP_2_7_IV0)
CONTROLLER_VERSION = 1
TOPIC_ASSIGNMENT_VERSION = 3
PARTITION_STATE_VERSION = 1
CONFIG_VERSION = 1
ISR_CHANGE_NOTIFICATION_VERSION = 1
NO_LEADER = -1  # Kafka's LeaderAndIsr.NoLeader
INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0
LEADER_RECOVERY_RECOVERED = 0
LEADER_RECOVERY_RECOVERING = 1


def _encode(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _decode(data: bytes) -> dict:
    return json.loads(data.decode("utf-8"))


@dataclass(frozen=True)
class EndPoint:
    """One advertised listener: `PLAINTEXT://host:9092` with its security protocol."""
    listener_name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # Kafka's Utils.formatAddress
        return f"{self.listener_name}://{host}:{self.port}"

    @classmethod
    def parse(cls, connection_string: str, protocols: Mapping[str, str]) -> EndPoint:
        listener_name, _, address = connection_string.partition("://")
        host, _, port = address.rpartition(":")
        return cls(listener_name, host.strip("[]"), int(port), protocols.get(listener_name, listener_name))


@dataclass(frozen=True)
class BrokerInfo:
    """A broker's registration at /brokers/ids/<id>."""
    broker_id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    jmx_port: int = -1

    def encode(self, timestamp_ms: int) -> bytes:
        plaintext = next((e for e in self.endpoints if e.security_protocol == "PLAINTEXT"), None)
        value: dict[str, object] = {
            "features": {},
            "listener_security_protocol_map": {e.listener_name: e.security_protocol for e in self.endpoints},
            "endpoints": [e.connection_string for e in self.endpoints],
            "jmx_port": self.jmx_port,
            "port": plaintext.port if plaintext else -1,
            "host": plaintext.host if plaintext else None,
            "version": BROKER_INFO_VERSION,
            "timestamp": str(timestamp_ms),
        }
        if self.rack is not None:
            value["rack"] = self.rack
        return _encode(value)

    @classmethod
    def decode(cls, broker_id: int, data: bytes) -> BrokerInfo:
        value = _decode(data)
        if value["version"] == 1:  # host and port only
            endpoints = (EndPoint("PLAINTEXT", value["host"], value["port"]),)
        else:
            protocols = value.get("listener_security_protocol_map") or {}
            endpoints = tuple(EndPoint.parse(e, protocols) for e in value["endpoints"])
        return cls(broker_id, endpoints, value.get("rack"), value.get("jmx_port", -1))


def encode_controller(broker_id: int, timestamp_ms: int) -> bytes:
    return _encode({"version": CONTROLLER_VERSION, "brokerid": broker_id, "timestamp": str(timestamp_ms)})


def decode_controller(data: bytes) -> int:
    """The controller's broker id."""
    return int(_decode(data)["brokerid"])


def encode_controller_epoch(epoch: int) -> bytes:
    return str(epoch).encode("ascii")


def decode_controller_epoch(data: bytes) -> int:
    return int(data.decode("ascii"))


@dataclass(frozen=True)
class ReplicaAssignment:
    """A partition's replicas (the first is the preferred leader) and, during a reassignment, the replicas being
    added and removed (Kafka's controller.ReplicaAssignment)."""
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replicas once a reassignment completes."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)


@dataclass(frozen=True)
class TopicAssignment:
    """/brokers/topics/<topic>: the topic id and each partition's replica assignment."""
    topic_id: str | None
    partitions: Mapping[int, ReplicaAssignment] = field(default_factory=dict)

    def encode(self) -> bytes:
        value: dict[str, object] = {
            "version": TOPIC_ASSIGNMENT_VERSION,
            "partitions": {str(p): list(a.replicas) for p, a in sorted(self.partitions.items())},
            "adding_replicas": {str(p): list(a.adding_replicas)
                                for p, a in sorted(self.partitions.items()) if a.adding_replicas},
            "removing_replicas": {str(p): list(a.removing_replicas)
                                  for p, a in sorted(self.partitions.items()) if a.removing_replicas},
        }
        if self.topic_id is not None:
            value["topic_id"] = self.topic_id
        return _encode(value)

    @classmethod
    def decode(cls, data: bytes) -> TopicAssignment:
        value = _decode(data)
        adding = value.get("adding_replicas") or {}
        removing = value.get("removing_replicas") or {}
        partitions = {
            int(p): ReplicaAssignment(tuple(replicas), tuple(adding.get(p, ())), tuple(removing.get(p, ())))
            for p, replicas in (value.get("partitions") or {}).items()
        }
        return cls(value.get("topic_id"), partitions)


@dataclass(frozen=True)
class LeaderAndIsr:
    """A partition's leader, leader epoch, ISR and partition epoch (Kafka's LeaderAndIsr).

    The ZooKeeper-era controller bumps the leader epoch on every change it makes (a new leader, or an ISR it
    shrinks); the partition epoch is the state znode's version and moves with every write, the leader's own ISR
    changes (AlterPartition) included.
    """
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    leader_recovery_state: int = LEADER_RECOVERY_RECOVERED
    partition_epoch: int = INITIAL_PARTITION_EPOCH

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> LeaderAndIsr:
        return replace(self, leader=leader, leader_epoch=self.leader_epoch + 1, isr=tuple(isr))

    def new_leader(self, leader: int) -> LeaderAndIsr:
        return self.new_leader_and_isr(leader, self.isr)

    def with_partition_epoch(self, partition_epoch: int) -> LeaderAndIsr:
        return replace(self, partition_epoch=partition_epoch)


@dataclass(frozen=True)
class LeaderIsrAndControllerEpoch:
    """The content of /brokers/topics/<topic>/partitions/<p>/state: a LeaderAndIsr and the epoch of the controller
    that wrote it."""
    leader_and_isr: LeaderAndIsr
    controller_epoch: int

    def encode(self) -> bytes:
        state = self.leader_and_isr
        value: dict[str, object] = {
            "controller_epoch": self.controller_epoch,
            "leader": state.leader,
            "version": PARTITION_STATE_VERSION,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
        if state.leader_recovery_state != LEADER_RECOVERY_RECOVERED:
            value["leader_recovery_state"] = state.leader_recovery_state
        return _encode(value)

    @classmethod
    def decode(cls, data: bytes, zk_version: int) -> LeaderIsrAndControllerEpoch:
        value = _decode(data)
        state = LeaderAndIsr(value["leader"], value["leader_epoch"], tuple(value["isr"]),
                             value.get("leader_recovery_state", LEADER_RECOVERY_RECOVERED), zk_version)
        return cls(state, value["controller_epoch"])


def encode_topic_config(config: Mapping[str, str]) -> bytes:
    return _encode({"version": CONFIG_VERSION, "config": dict(config)})


def decode_topic_config(data: bytes | None) -> dict[str, str]:
    if not data:
        return {}
    return {key: str(value) for key, value in (_decode(data).get("config") or {}).items()}


def encode_isr_change_notification(partitions: Iterable[TopicPartition]) -> bytes:
    return _encode({"version": ISR_CHANGE_NOTIFICATION_VERSION,
                    "partitions": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions]})


def decode_isr_change_notification(data: bytes) -> set[TopicPartition]:
    return {TopicPartition(p["topic"], p["partition"]) for p in _decode(data)["partitions"]}


def encode_cluster_id(cluster_id: str) -> bytes:
    return _encode({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes) -> str:
    return _decode(data)["id"]
