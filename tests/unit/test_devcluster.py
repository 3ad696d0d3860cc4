"""The compose file's services translated to local processes (devcluster_compose): ports, addresses, volumes."""

from __future__ import annotations

import itertools
from pathlib import Path

import yaml

from wirebroker.devcluster_compose import local_cluster

ROOT = Path(__file__).resolve().parents[2]
DATA = Path("/data-root")


def plan(compose: dict, port_map: dict[int, int] | None = None, zookeeper_port: int | None = None):
    ports = itertools.count(40000)
    return local_cluster(compose, DATA, port_map or {}, lambda: next(ports), zookeeper_port)


def settings(args: list[str]) -> dict[str, str]:
    assert args[::2] == ["--override"] * (len(args) // 2)
    return dict(arg.split("=", 1) for arg in args[1::2])


def test_the_repository_compose_file_is_zookeeper_and_three_brokers():
    cluster = plan(yaml.safe_load((ROOT / "docker-compose.yml").read_text()), {9092: 19001, 9093: 19002})
    assert cluster.zookeeper is not None and cluster.not_run == []
    assert cluster.zookeeper.data_dir == DATA / "zookeeper-data"
    zookeeper = f"127.0.0.1:{cluster.zookeeper.port}"
    brokers = {b.name: (b, settings(b.args)) for b in cluster.brokers}
    assert sorted(brokers) == ["broker1", "broker2", "broker3"]
    internal_ports = set()
    for (broker, conf), node_id, external in zip(brokers.values(), (1, 2, 3), (19001, 19002, 9094)):
        assert conf["node.id"] == str(node_id)
        assert conf["zookeeper.connect"] == zookeeper
        assert conf["log.dirs"] == str(DATA / f"broker{node_id}-data")
        internal = broker.listen_ports[0]
        internal_ports.add(internal)
        assert conf["listeners"] == f"INTERNAL://127.0.0.1:{internal},PLAINTEXT://127.0.0.1:{external}"
        # The internal listener is advertised where it listens; the external one where the host reaches it.
        assert conf["advertised.listeners"] == f"INTERNAL://127.0.0.1:{internal},PLAINTEXT://localhost:{external}"
        assert conf["inter.broker.listener.name"] == "INTERNAL"
        assert conf["default.replication.factor"] == "3" and conf["min.insync.replicas"] == "2"
        assert conf["offsets.topic.replication.factor"] == "3"
    assert len(internal_ports | {zookeeper}) == 4  # every broker's INTERNAL port is its own


def test_service_addresses_anywhere_in_a_command_follow_the_service():
    compose = {"services": {
        "zk": {"image": "docker.io/library/zookeeper:3.9"},
        "a": {"build": ".", "command": "--override listeners=PLAINTEXT://0.0.0.0:9000 "
                                       "--override zookeeper.connect=zk:2181/chroot"},
        "b": {"build": ".", "command": ["--override", "advertised.listeners=PLAINTEXT://a:9000"]},
        "ui": {"image": "provectuslabs/kafka-ui"},
    }}
    cluster = plan(compose, zookeeper_port=2999)
    a, b = cluster.brokers
    assert cluster.zookeeper.port == 2999 and cluster.zookeeper.data_dir == DATA / "zk"
    assert settings(a.args)["zookeeper.connect"] == "127.0.0.1:2999/chroot"
    assert settings(b.args)["advertised.listeners"] == f"PLAINTEXT://127.0.0.1:{a.listen_ports[0]}"
    assert cluster.not_run == ["ui"]


def test_a_compose_file_without_zookeeper_runs_its_brokers_alone():
    compose = {"services": {"broker": {"build": ".", "ports": ["9092:9092"], "volumes": ["data:/var/lib/wb"],
                                       "command": ["--override", "listeners=PLAINTEXT://0.0.0.0:9092",
                                                   "--override", "log.dirs=/var/lib/wb"]}}}
    cluster = plan(compose, {9092: 5555})
    assert cluster.zookeeper is None
    assert cluster.brokers[0].listen_ports == [5555]
    assert settings(cluster.brokers[0].args) == {"listeners": "PLAINTEXT://127.0.0.1:5555",
                                                 "log.dirs": str(DATA / "data")}
