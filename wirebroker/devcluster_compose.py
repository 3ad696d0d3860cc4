"""docker-compose services translated to local processes: what `python -m wirebroker.devcluster` runs, decided
without starting anything (so it is tested on its own).

From the compose file it takes:
- the services that build this repository: brokers, each run as `python -m wirebroker <its command>`;
- a service whose image is ZooKeeper (`zookeeper:3.8`): a local ZooKeeper from Debian's package.
Other services are reported as not run.

Every address is translated from the compose network to 127.0.0.1:
- a container port the service publishes ("HOST:CONTAINER") listens on the host port (or on the port given with
  --port HOST=LOCAL, so tests can avoid ports in use); an address outside the compose network (localhost:9092 in
  advertised.listeners) is a host port and follows --port too;
- a container port that is not published (the INTERNAL listener) gets a free port of its own;
- `service:port` anywhere in an argument (zookeeper.connect=zookeeper:2181, INTERNAL://broker1:19092) becomes
  127.0.0.1 and the port that service's container port got;
- a named volume mounted at a container path becomes DATA/<volume>, and container paths in arguments follow.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ZOOKEEPER_CLIENT_PORT = 2181  # the official image's clientPort and dataDir
ZOOKEEPER_DATA_DIR = "/data"
LISTENER_KEYS = ("listeners", "advertised.listeners")
_ENDPOINT = re.compile(r"^(?P<name>\w+)://(?P<host>[^:/]*):(?P<port>\d+)$")


@dataclass
class BrokerService:
    name: str
    args: list[str]
    listen_ports: list[int]  # local ports of its `listeners`, in order: the first answers when the broker is up


@dataclass
class ZooKeeperService:
    name: str
    port: int
    data_dir: Path


@dataclass
class LocalCluster:
    brokers: list[BrokerService]
    zookeeper: ZooKeeperService | None = None
    not_run: list[str] = field(default_factory=list)  # services that neither build this repo nor are ZooKeeper


def is_zookeeper(spec: dict) -> bool:
    image = str(spec.get("image", ""))
    return image.split(":")[0].rsplit("/", 1)[-1] == "zookeeper"


def local_cluster(compose: dict, data_dir: Path, port_map: dict[int, int], free_port: Callable[[], int],
                  zookeeper_port: int | None = None) -> LocalCluster:
    """The compose file's services as local processes (ports and paths translated, nothing started)."""
    services: dict[str, dict] = compose.get("services", {}) or {}
    ports = _PortPlan(set(services), port_map, free_port)
    cluster = LocalCluster(brokers=[])
    for name, spec in services.items():
        if is_zookeeper(spec):
            port = zookeeper_port or free_port()
            ports.assign(name, ZOOKEEPER_CLIENT_PORT, port)
            data = _mounts(spec, data_dir).get(ZOOKEEPER_DATA_DIR, str(data_dir / name))
            cluster.zookeeper = ZooKeeperService(name, port, Path(data))
        elif "build" in spec:
            for published in spec.get("ports", []):
                host, _, container = str(published).rpartition(":")
                ports.assign(name, int(container), port_map.get(int(host or container), int(host or container)))
        else:
            cluster.not_run.append(name)
    for name, spec in services.items():
        if "build" in spec and not is_zookeeper(spec):
            cluster.brokers.append(_broker(name, spec, data_dir, ports))
    return cluster


class _PortPlan:
    """The local port of each (service, container port); unpublished ones get a free port on first use."""

    def __init__(self, services: set[str], port_map: dict[int, int], free_port: Callable[[], int]) -> None:
        self.services = services
        self.port_map = port_map
        self.free_port = free_port
        self.ports: dict[tuple[str, int], int] = {}

    def assign(self, service: str, container_port: int, local_port: int) -> None:
        self.ports[(service, container_port)] = local_port

    def local(self, service: str, container_port: int) -> int:
        if (service, container_port) not in self.ports:
            self.ports[(service, container_port)] = self.free_port()
        return self.ports[(service, container_port)]

    def host(self, host_port: int) -> int:
        return self.port_map.get(host_port, host_port)


def _mounts(spec: dict, data_dir: Path) -> dict[str, str]:
    mounts = {}
    for volume in spec.get("volumes", []):
        source, _, target = str(volume).partition(":")
        mounts[target.split(":")[0]] = str(data_dir / source)
    return mounts


def _broker(name: str, spec: dict, data_dir: Path, ports: _PortPlan) -> BrokerService:
    mounts = _mounts(spec, data_dir)
    command = spec.get("command", [])
    args = command.split() if isinstance(command, str) else [str(arg) for arg in command]
    translated, listen_ports = [], []
    for arg in args:
        for container_path, local_path in mounts.items():
            arg = arg.replace(container_path, local_path)
        key, sep, value = arg.partition("=")
        if sep and key in LISTENER_KEYS:
            endpoints = [_endpoint(name, key, item, ports) for item in value.split(",")]
            if key == "listeners":
                listen_ports = [port for _, port in endpoints]
            arg = f"{key}=" + ",".join(url for url, _ in endpoints)
        else:
            arg = _service_addresses(arg, ports)
        translated.append(arg)
    return BrokerService(name, translated, listen_ports)


def _endpoint(service: str, key: str, item: str, ports: _PortPlan) -> tuple[str, int]:
    """One listener translated: (NAME://host:port, its local port)."""
    match = _ENDPOINT.match(item.strip())
    if match is None:
        return item, 0
    listener, host, port = match["name"], match["host"], int(match["port"])
    if key == "listeners":  # bound inside the container: a container port of this service
        local = ports.local(service, port)
        return f"{listener}://127.0.0.1:{local}", local
    if host in ports.services:  # another container's address on the compose network
        local = ports.local(host, port)
        return f"{listener}://127.0.0.1:{local}", local
    local = ports.host(port)  # an address on the host (localhost:9092): a published host port
    return f"{listener}://{host}:{local}", local


def _service_addresses(arg: str, ports: _PortPlan) -> str:
    for service in ports.services:
        arg = re.sub(rf"\b{re.escape(service)}:(\d+)\b",
                     lambda match, service=service: f"127.0.0.1:{ports.local(service, int(match[1]))}", arg)
    return arg
